"""Pairs a system did not see (e.g. both items identical after its truncation) count nowhere."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from scoring import ScoringInputError, item_predictions, score

# Both systems miss negations; "long" stands for a pair whose edit lies past the cut of
# system "short" (it saw the same input twice), so for "short" it is no break at all.
PAIRS = [
    ("Red", "good", 1, "not good", -1),
    ("Red", "fine", 1, "fine!", 1),
    ("Blue", "bad", -1, "not bad", 1),
    ("Blue", "long", 1, "long but dull", -1),
]
LABELS = {"good": 1, "not good": 1, "fine": 1, "fine!": 1, "bad": -1, "not bad": -1}


@pytest.fixture
def pairs(make_pairs):
    return make_pairs(*PAIRS, tags=["negation", "", "negation", "contrast"])


@pytest.fixture
def predictions(make_predictions):
    return make_predictions(
        {
            "short": {**LABELS, "long": 1, "long but dull": 1},
            "full": {**LABELS, "long": 1, "long but dull": -1},
        },
        lambda_max={
            "short": dict.fromkeys([*LABELS, "long", "long but dull"], 0.5) | {"long": 9.0},
            "full": dict.fromkeys([*LABELS, "long", "long but dull"], 0.5),
        },
    )


UNSEEN = pd.DataFrame({"system": ["short"], "pair_id": [4]})


def test_a_pair_a_system_did_not_see_is_left_out_of_its_counts(pairs, predictions):
    report = score(pairs, predictions, weight="none", unseen=UNSEEN)
    builders = report.builders.set_index("system")

    # short: pairs 1 and 3 break it; pair 4 would have been a free break.
    assert builders.loc["short", ["pairs", "unseen", "breaks"]].tolist() == [3, 1, 2]
    assert builders.loc["short", "broken_pct"] == pytest.approx(200 / 3)
    assert builders.loc["short", "accuracy"] == pytest.approx(4 / 6)
    assert builders.loc["full", ["pairs", "unseen", "breaks"]].tolist() == [4, 0, 2]


def test_marking_a_pair_unseen_by_a_system_scores_it_as_if_the_pair_were_not_there(
    pairs, predictions
):
    masked = score(pairs, predictions, weight="none", unseen=UNSEEN)
    without = score(
        pairs[pairs["pair_id"] != 4],
        predictions[predictions["system"] == "short"],
        weight="none",
    )

    mine = masked.builders.set_index("system").loc["short"]
    alone = without.builders.set_index("system").loc["short"]
    for column in ("f1", "accuracy", "broken_pct", "breaks", "pairs", "both_wrong"):
        assert mine[column] == pytest.approx(alone[column]), column
    by_team = masked.builders_by_team.set_index(["system", "team"])
    assert by_team.loc[("short", "Blue"), ["pairs", "unseen", "breaks"]].tolist() == [1, 1, 1]


def test_an_unseen_pair_needs_no_prediction_from_that_system(pairs, predictions):
    no_long = predictions[
        ~((predictions["system"] == "short") & predictions["text"].isin(["long but dull"]))
    ]

    report = score(pairs, no_long, weight="none", unseen=UNSEEN)

    item = next(row for row in report.to_dict()["items"] if row["pair_id"] == 4)
    assert item["predictions"]["short"] == ["1", None]
    assert item["unseen"] == ["short"]
    with pytest.raises(ScoringInputError, match="no prediction for text 'long but dull'"):
        score(pairs, no_long, weight="none")


def test_the_breaker_rate_is_over_the_pairs_each_system_saw(pairs, predictions):
    report = score(pairs, predictions, weight="none", unseen=UNSEEN)
    detail = report.breaker_systems.set_index(["team", "system"])

    assert detail.loc[("Blue", "short"), ["pairs", "breaks", "broken_pct"]].tolist() == [1, 1, 100]
    assert detail.loc[("Blue", "full"), ["pairs", "breaks", "broken_pct"]].tolist() == [2, 1, 50]
    assert report.breakers.set_index("team").loc["Blue", "score"] == pytest.approx(75.0)


def test_a_system_that_saw_none_of_a_teams_pairs_is_left_out_of_its_score(pairs, predictions):
    unseen = pd.DataFrame({"system": ["short", "short"], "pair_id": [3, 4]})

    report = score(pairs, predictions, weight="original_accuracy", unseen=unseen)

    detail = report.breaker_systems.set_index(["team", "system"])
    assert math.isnan(detail.loc[("Blue", "short"), "broken_pct"])
    # Only "full" saw Blue's pairs: weight 1 (right on both originals), 50% broken; "short"
    # would have pulled the mean down to 25.
    assert report.breakers.set_index("team").loc["Blue", "score"] == pytest.approx(50.0)
    assert report.matrix.loc["Blue"].isna().tolist() == [False, True]


def test_the_item_table_names_who_did_not_see_a_pair(pairs, predictions):
    report = score(pairs, predictions, weight="none", unseen=UNSEEN)
    items = report.items.set_index("pair_id")
    rows = item_predictions(report.breaks).set_index(["pair_id", "system"])

    assert items["unseen"].to_dict() == {1: 0, 2: 0, 3: 0, 4: 1}
    assert items.loc[4, "broken"] == 0
    # Pair 1 broke both systems; pair 4 broke nobody who saw it ("full" got it right).
    assert items["broke_every_system"].to_dict() == {1: True, 2: False, 3: True, 4: False}
    assert rows.loc[(4, "short"), ["seen", "broken"]].tolist() == [False, False]
    assert "unseen" in report.to_markdown()


def test_tag_and_flip_rates_leave_unseen_pairs_out(pairs, predictions):
    report = score(pairs, predictions, weight="none", unseen=UNSEEN)

    assert math.isnan(report.tags_by_system.loc["contrast", "short"])
    assert report.tags_by_system.loc["contrast", "full"] == 0.0
    assert report.tags.set_index("tag").loc["contrast", "broken_pct"] == 0.0
    assert report.flips_by_system.loc["flipped", "short"] == 100.0


def test_lambda_analyses_leave_unseen_pairs_out(pairs, predictions):
    report = score(pairs, predictions, weight="none", unseen=UNSEEN)
    analysis = report.lambda_analysis

    correlation = analysis.correlation.query("kind == 'all' and outcome == 'broken'")
    assert correlation.set_index("system")["pairs"].to_dict() == {"full": 4, "short": 3}
    delta = analysis.delta.set_index(["team", "system"])
    assert delta.loc[("Blue", "short"), "pairs"] == 1


def test_without_unseen_pairs_nothing_changes(pairs, predictions):
    plain = score(pairs, predictions, weight="none")
    empty = score(
        pairs, predictions, weight="none", unseen=pd.DataFrame(columns=["system", "pair_id"])
    )

    assert plain.to_dict() == empty.to_dict()
    assert plain.builders["unseen"].tolist() == [0, 0]


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ({"system": ["nobody"], "pair_id": [1]}, "system(s) 'nobody' that have no predictions"),
        ({"system": ["short"], "pair_id": [99]}, "pair(s) '99' that are not scored"),
        ({"system": ["short"]}, "unseen is missing column(s) pair_id"),
    ],
)
def test_unseen_rows_must_name_scored_systems_and_pairs(pairs, predictions, rows, message):
    with pytest.raises(ScoringInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        score(pairs, predictions, weight="none", unseen=pd.DataFrame(rows))


def test_unseen_pair_ids_read_from_a_file_match_numeric_ids(pairs, predictions):
    as_text = pd.DataFrame({"system": [" short "], "pair_id": ["4"]})

    report = score(pairs, predictions, weight="none", unseen=as_text)

    assert report.builders.set_index("system").loc["short", "unseen"] == 1
