"""The sample pairs and predictions printed in the 2017 overview paper (Tables 3 and 4),
checked against counts made by hand from the tables.

Table 4, gold and predictions per item (a = original, b = variant):

    item          gold  Strawman PCNN BoN SCNN DCNN RNTN
    Utrecht 1a     +1     +1     +1   +1   +1   +1   -1
    Utrecht 1b     +1     -1     +1   -1   +1   +1   -1
    Utrecht 2a     -1     -1     -1   +1   -1   +1   -1
    Utrecht 2b     +1     +1     +1   +1   -1   +1   -1
    OSU 1a         -1     -1     -1   -1   -1   -1   -1
    OSU 1b         +1     -1     -1   -1   -1   -1   -1
    OSU 2a         +1     +1     -1   +1   +1   +1   +1
    OSU 2b         -1     +1     -1   +1   -1   +1   -1
    Melbourne 1a   +1     +1     +1   -1   +1   +1   +1
    Melbourne 1b   +1     -1     +1   -1   +1   +1    0
    Melbourne 2a   +1     -1     +1   -1   -1   -1   -1
    Melbourne 2b   -1     -1     +1   +1   -1   -1    0
    Team4 1a       -1     -1     -1   -1   -1   +1   +1
    Team4 1b       +1     +1     +1   -1   +1   +1   +1
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

from scoring import score

SYSTEMS = ["Bag-of-ngrams", "DCNN", "PCNN", "RNTN", "SCNN", "Strawman"]

# Right on exactly one item, by hand from the table above.
BROKEN_BY_PAIR = {
    "Utrecht 1": {"Strawman", "Bag-of-ngrams"},
    "Utrecht 2": {"Bag-of-ngrams", "SCNN", "DCNN", "RNTN"},
    "OSU 1": set(SYSTEMS),
    "OSU 2": {"Strawman", "PCNN", "Bag-of-ngrams", "DCNN"},
    # RNTN is right on 1a and answers the neutral 0 on 1b: a break.
    "Melbourne 1": {"Strawman", "RNTN"},
    "Melbourne 2": {"Strawman", "PCNN", "SCNN", "DCNN"},
    "Team4 1": {"Bag-of-ngrams", "DCNN", "RNTN"},
}


@pytest.fixture
def report(overview_2017):
    pairs, predictions = overview_2017
    return score(pairs, predictions, weight="none")


def test_the_breaks_per_system_match_a_hand_count_of_table_4(report):
    breaks = dict(zip(report.builders["system"], report.builders["breaks"], strict=True))

    assert breaks == {
        "Strawman": 5,
        "PCNN": 3,
        "Bag-of-ngrams": 5,
        "SCNN": 3,
        "DCNN": 5,
        "RNTN": 4,
    }


def test_each_pair_breaks_the_systems_counted_by_hand(report):
    items = {item["pair_id"]: set(item["broken"]) for item in report.to_dict()["items"]}

    assert items == BROKEN_BY_PAIR


def test_osu_1_is_the_only_pair_that_broke_every_system(report):
    assert report.broke_every_system["pair_id"].tolist() == ["OSU 1"]


def test_pairs_wrong_on_both_items_are_reported_apart_from_breaks(report):
    both_wrong = {item["pair_id"]: item["both_wrong"] for item in report.to_dict()["items"]}

    assert both_wrong["Melbourne 1"] == ["Bag-of-ngrams"]
    assert both_wrong["Melbourne 2"] == ["Bag-of-ngrams", "RNTN"]
    assert both_wrong["Utrecht 1"] == ["RNTN"]
    assert sum(len(systems) for systems in both_wrong.values()) == 4
    totals = report.builders.set_index("system")["both_wrong"]
    assert totals.to_dict() == {
        name: 2 if name in ("RNTN", "Bag-of-ngrams") else 0 for name in SYSTEMS
    }


def test_the_neutral_answers_of_rntn_are_outside_the_label_set_and_counted(report):
    assert report.outside_label_set.to_dict("records") == [
        {"system": "RNTN", "label": "0", "sentences": 2}
    ]
    assert report.builders.set_index("system").loc["RNTN", "outside_label_set"] == 2


def test_the_breaker_by_builder_matrix_matches_a_hand_count(report):
    expected = {
        # breaks ÷ pairs: Utrecht, OSU and Melbourne have 2 pairs, Team 4 has 1.
        "Utrecht": {"Strawman": 50, "PCNN": 0, "Bag-of-ngrams": 100, "SCNN": 50, "DCNN": 50, "RNTN": 50},
        "OSU": {"Strawman": 100, "PCNN": 100, "Bag-of-ngrams": 100, "SCNN": 50, "DCNN": 100, "RNTN": 50},
        "Melbourne": {"Strawman": 100, "PCNN": 50, "Bag-of-ngrams": 0, "SCNN": 50, "DCNN": 50, "RNTN": 50},
        "Team 4": {"Strawman": 0, "PCNN": 0, "Bag-of-ngrams": 100, "SCNN": 0, "DCNN": 100, "RNTN": 100},
    }  # fmt: skip

    assert report.matrix.to_dict(orient="index") == expected


def test_macro_f1_and_accuracy_match_a_hand_computation(report):
    builders = report.builders.set_index("system")

    # RNTN: +1 has TP 3, FP 1, FN 6 -> 6/13; -1 has TP 3, FP 5, FN 2 -> 6/13.
    assert builders.loc["RNTN", "f1"] == pytest.approx(6 / 13)
    assert builders.loc["RNTN", "accuracy"] == pytest.approx(6 / 14)
    # Strawman: +1 has TP 5, FP 1, FN 4 -> 10/15; -1 has TP 4, FP 4, FN 1 -> 8/13.
    assert builders.loc["Strawman", "f1"] == pytest.approx((10 / 15 + 8 / 13) / 2)
    assert builders.loc["Strawman", "accuracy"] == pytest.approx(9 / 14)


def test_builders_are_ranked_by_fewest_pairs_broken(report):
    assert report.builders["broken_pct"].tolist() == pytest.approx(
        [300 / 7, 300 / 7, 400 / 7, 500 / 7, 500 / 7, 500 / 7]
    )
    assert report.builders["system"].tolist()[:2] == ["SCNN", "PCNN"]


def test_unweighted_breaker_scores_are_the_mean_break_rate(report):
    scores = report.breakers.set_index("team")["score"]

    assert scores["OSU"] == pytest.approx(500 / 6)
    assert scores["Utrecht"] == pytest.approx(300 / 6)
    assert scores["Melbourne"] == pytest.approx(300 / 6)
    assert scores["Team 4"] == pytest.approx(300 / 6)
    assert report.breakers["team"].iloc[0] == "OSU"


def test_original_accuracy_weights_each_system_by_its_score_on_the_team_originals(overview_2017):
    pairs, predictions = overview_2017

    scores = score(pairs, predictions, weight="original_accuracy").breakers.set_index("team")

    # Utrecht's originals 1a and 2a: Strawman, PCNN, SCNN right on both (weight 1);
    # Bag-of-ngrams, DCNN, RNTN right on one (weight 0.5).
    # 1·50 + 1·0 + 0.5·100 + 1·50 + 0.5·50 + 0.5·50 = 200, over 6 systems.
    assert scores.loc["Utrecht", "score"] == pytest.approx(200 / 6)


def test_dev_accuracy_weights_come_from_the_weights_input(overview_2017):
    pairs, predictions = overview_2017
    weights = {name: 1.0 for name in SYSTEMS} | {"Strawman": 0.5}
    frame = pd.DataFrame(weights.items(), columns=["system", "weight"])

    report = score(pairs, predictions, weights=frame)

    assert report.breakers.set_index("team").loc["Utrecht", "score"] == pytest.approx(275 / 6)
    detail = report.breaker_systems.set_index(["team", "system"])
    assert detail.loc[("Utrecht", "Strawman"), "weighted_pct"] == pytest.approx(25.0)


def test_the_sentence_convention_halves_every_rate(report, overview_2017):
    pairs, predictions = overview_2017

    halved = score(pairs, predictions, weight="none", break_rate="sentences")

    assert halved.matrix.to_numpy() == pytest.approx(report.matrix.to_numpy() / 2)
    assert halved.breakers["score"].to_numpy() == pytest.approx(
        report.breakers["score"].to_numpy() / 2
    )
    assert halved.builders["breaks"].tolist() == report.builders["breaks"].tolist()


def test_the_report_is_json_ready(report):
    document = json.loads(json.dumps(report.to_dict(), allow_nan=False))

    assert {"builders", "breakers", "matrix", "items", "tags"} <= set(document)
    assert "lambda" not in document
    strawman = next(row for row in document["builders"] if row["system"] == "Strawman")
    assert strawman["by_team"] == {"Melbourne": 100.0, "OSU": 100.0, "Team 4": 0.0, "Utrecht": 50.0}
    osu = next(row for row in document["breakers"] if row["team"] == "OSU")
    assert osu["by_system"]["SCNN"] == 50.0
    melbourne_1 = next(item for item in document["items"] if item["pair_id"] == "Melbourne 1")
    assert melbourne_1["predictions"]["RNTN"] == ["1", "0"]


def test_the_markdown_report_prints_the_leaderboards_and_the_item_table(report):
    markdown = report.to_markdown()

    assert "## Builders" in markdown and "## Breakers" in markdown
    assert "| OSU 1 | OSU | -1 | 1 | -1 / -1 * |" in markdown
    assert "| RNTN | 0 | 2 |" in markdown
