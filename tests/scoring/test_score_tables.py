"""The detailed tables: strategy tags, flips, items, per-team builder metrics."""

from __future__ import annotations

import pytest

from scoring import item_predictions, score


@pytest.fixture
def report(make_pairs, make_predictions):
    pairs = make_pairs(
        ("Red", "good", 1, "not good", -1),
        ("Red", "fine", 1, "fine!", 1),
        ("Blue", "bad", -1, "not bad", 1),
        ("Blue", "good", 1, "so good", 1),
        tags=["negation; semantic", "", "negation", "semantic;semantic"],
    )
    predictions = make_predictions(
        {
            # Misses the negations: broken by pairs 1 and 3.
            "bag": {"good": 1, "not good": 1, "fine": 1, "fine!": 1, "bad": -1, "not bad": -1, "so good": 1},
            # Wrong on "fine!" only: broken by pair 2; wrong on both items of pair 3.
            "cnn": {"good": 1, "not good": -1, "fine": 1, "fine!": -1, "bad": 1, "not bad": -1, "so good": 1},
        }
    )  # fmt: skip
    return score(pairs, predictions, weight="none")


def test_tags_are_split_on_semicolons_and_untagged_pairs_left_out(report):
    tags = report.tags.set_index("tag")

    assert tags["pairs"].to_dict() == {"negation": 2, "semantic": 2}
    assert report.tags_by_system.loc["negation"].to_dict() == {"bag": 100.0, "cnn": 0.0}
    assert report.tags_by_system.loc["semantic"].to_dict() == {"bag": 50.0, "cnn": 0.0}
    assert tags.loc["negation", "broken_pct"] == 50.0


def test_flipped_and_same_label_pairs_are_rated_apart(report):
    flips = report.flips.set_index("kind")

    assert flips["pairs"].to_dict() == {"flipped": 2, "same_label": 2}
    assert report.flips_by_system.loc["flipped"].to_dict() == {"bag": 100.0, "cnn": 0.0}
    assert report.flips_by_system.loc["same_label"].to_dict() == {"bag": 0.0, "cnn": 50.0}


def test_a_task_without_same_label_pairs_has_only_the_flipped_row(make_pairs, make_predictions):
    pairs = make_pairs(("T", "good", 1, "not good", -1))
    predictions = make_predictions({"S": {"good": 1, "not good": 1}})

    flips = score(pairs, predictions, weight="none").flips

    assert flips.to_dict("records") == [
        {"kind": "flipped", "pairs": 1, "breaks": 1, "broken_pct": 100.0}
    ]


def test_builder_metrics_are_also_given_per_breaker_team(report):
    by_team = report.builders_by_team.set_index(["system", "team"])

    assert by_team.loc[("bag", "Red"), "broken_pct"] == 50.0
    assert by_team.loc[("bag", "Blue"), "broken_pct"] == 50.0
    assert by_team.loc[("cnn", "Blue"), "both_wrong"] == 1
    # cnn on Blue's sentences: gold (-1, 1, 1, 1) against (1, -1, 1, 1).
    assert by_team.loc[("cnn", "Blue"), "accuracy"] == 0.5
    # Label -1: TP 0, FP 1, FN 1 -> 0; label 1: TP 2, FP 1, FN 1 -> 4/6.
    assert by_team.loc[("cnn", "Blue"), "f1"] == pytest.approx((0 + 4 / 6) / 2)


def test_the_item_table_counts_what_each_pair_did(report):
    items = report.items.set_index("pair_id")

    assert items["broken"].to_dict() == {1: 1, 2: 1, 3: 1, 4: 0}
    assert items["both_wrong"].to_dict() == {1: 0, 2: 0, 3: 1, 4: 0}
    assert not items["broke_every_system"].any()


def test_item_predictions_give_one_row_per_pair_and_system(report):
    rows = item_predictions(report.breaks).set_index(["pair_id", "system"])

    assert len(rows) == 8
    assert rows.loc[(3, "cnn")].to_dict() == {
        "original_prediction": "1",
        "variant_prediction": "-1",
        "original_correct": False,
        "variant_correct": False,
        "seen": True,
        "broken": False,
        "both_wrong": True,
    }


def test_both_wrong_is_counted_per_system_and_team(report):
    table = report.both_wrong.set_index(["system", "team"])

    assert table.loc[("cnn", "Blue"), "both_wrong"] == 1
    assert table.loc[("cnn", "Blue"), "both_wrong_pct"] == 50.0
    assert table["both_wrong"].sum() == 1
    document = report.to_dict()["both_wrong"]
    assert document[1] == {
        "system": "cnn",
        "both_wrong": 1,
        "pairs": 4,
        "both_wrong_pct": 25.0,
        "by_team": {"Blue": 1, "Red": 0},
    }


def test_the_markdown_report_leaves_out_the_item_table_of_a_large_task(report):
    assert "## Items" in report.to_markdown(max_items=10)
    assert "see the JSON output" in report.to_markdown(max_items=3)
