"""The whole report of a span task, checked by hand: answer accuracy and mean token F1 for the
builders (overall and per team), the break rule on correctness, eq. 1 as for labels."""

from __future__ import annotations

import pandas as pd
import pytest

import scoring
from scoring.answers import answer_scores
from scoring.span_breaks import span_score

PAIRS = pd.DataFrame(
    {
        "pair_id": [1, 2, 3],
        "team": ["A", "A", "B"],
        "original_id": ["o1", "o2", "o3"],
        "original_item": ["o1", "o2", "o3"],
        "variant_item": ["v1", "v2", "v3"],
    }
)
# S1: breaks on pair 1, holds on 2, wrong on both items of 3. S2: breaks on pair 3 only.
SCORES = pd.DataFrame(
    [
        ("S1", "o1", True, 1.0),
        ("S1", "v1", False, 0.5),
        ("S1", "o2", True, 1.0),
        ("S1", "v2", True, 1.0),
        ("S1", "o3", False, 0.0),
        ("S1", "v3", False, 0.4),
        ("S2", "o1", True, 1.0),
        ("S2", "v1", True, 1.0),
        ("S2", "o2", True, 1.0),
        ("S2", "v2", True, 1.0),
        ("S2", "o3", True, 1.0),
        ("S2", "v3", False, 0.0),
    ],
    columns=["system", "item", "correct", "token_f1"],
)


def test_builders_get_answer_accuracy_and_mean_token_f1():
    builders = span_score(PAIRS, SCORES, weight="none").builders.set_index("system")
    assert builders.loc["S1", "accuracy"] == pytest.approx(3 / 6)
    assert builders.loc["S1", "f1"] == pytest.approx(3.9 / 6)
    assert builders.loc["S2", "accuracy"] == pytest.approx(5 / 6)
    assert builders.loc["S2", "f1"] == pytest.approx(5 / 6)
    assert builders["breaks"].to_dict() == {"S1": 1, "S2": 1}
    assert builders.loc["S1", "both_wrong"] == 1
    assert builders["outside_label_set"].tolist() == [0, 0]


def test_per_team_token_f1_counts_both_items_of_each_pair():
    by_team = span_score(PAIRS, SCORES, weight="none").builders_by_team
    f1 = by_team.set_index(["system", "team"])["f1"]
    assert f1[("S1", "A")] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert f1[("S1", "B")] == pytest.approx(0.2)
    assert f1[("S2", "B")] == pytest.approx(0.5)


def test_a_wrong_answer_is_not_reported_outside_the_label_set():
    assert span_score(PAIRS, SCORES, weight="none").outside_label_set.empty


def test_breaker_scores_are_eq_1_as_for_labels():
    """The breakers' table equals the label report's on the same right/wrong outcomes."""
    weights = pd.DataFrame({"system": ["S1", "S2"], "weight": [0.6, 0.9]})
    span = span_score(PAIRS, SCORES, weights=weights, weight="dev_accuracy")
    label_pairs = PAIRS.rename(
        columns={"original_item": "original_text", "variant_item": "variant_text"}
    ).assign(original_label="yes", variant_label="yes")
    label_predictions = SCORES.rename(columns={"item": "text"}).assign(
        label=SCORES["correct"].map({True: "yes", False: "no"})
    )[["system", "text", "label"]]
    labels = scoring.score(
        label_pairs, label_predictions, weights=weights, weight="dev_accuracy", labels=["yes", "no"]
    )
    pd.testing.assert_frame_equal(span.breakers, labels.breakers)
    unweighted = span_score(PAIRS, SCORES, weight="none").breakers.set_index("team")["score"]
    # A broke S1 on one of its two pairs and S2 on none; B broke S2 on its one pair.
    assert unweighted.to_dict() == {"A": pytest.approx(25.0), "B": pytest.approx(50.0)}


def test_from_answers_to_a_report():
    """answer_scores feeds span_score: the mode decides which pair breaks."""
    predictions = pd.DataFrame(
        {"system": ["S", "S"], "item": ["o1", "v1"], "text": ["UCD", "the Dublin team"]}
    )
    gold = pd.DataFrame({"item": ["o1", "v1"], "text": ["UCD", "Dublin team"]})
    pairs = PAIRS.iloc[:1]
    exact = answer_scores(predictions, gold, mode="exact")
    assert span_score(pairs, exact, weight="none").builders["breaks"].tolist() == [0]
    strict = answer_scores(predictions, gold.assign(text=["UCD", "St Vincents"]), mode="exact")
    report = span_score(pairs, strict, weight="none")
    assert report.builders["breaks"].tolist() == [1]
    assert report.builders["f1"].tolist() == pytest.approx([0.5])
