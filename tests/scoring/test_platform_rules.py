"""The rules the platform takes from the library: the leaderboard rank, dev scores, the
break rule for one pair and the weight "dev accuracy, else accuracy on the originals"."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from scoring import (
    WEIGHT_FROM_DEV,
    WEIGHT_FROM_ORIGINALS,
    LabelScores,
    ScoringInputError,
    dev_or_original_weights,
    find_breaks,
    label_scores,
    pair_breaks,
    rank_leaderboard,
    score,
)

GOOD, NOT_GOOD, FINE, NOT_FINE = "A good film.", "Not a good film.", "Fine.", "Not fine."


def test_ties_share_the_better_rank_and_a_missing_score_ranks_last():
    frame = pd.DataFrame({"team": list("abcde"), "score": [30.0, np.nan, 10.0, 30.0, np.nan]})

    ranked = rank_leaderboard(frame, "score", ascending=False)

    assert ranked.columns[0] == "rank"
    assert ranked["rank"].tolist() == [1, 4, 3, 1, 4]
    assert ranked["rank"].dtype == np.int64
    assert ranked["team"].tolist() == list("abcde")


def test_lower_is_better_ranks_the_lowest_first_and_nan_still_last():
    frame = pd.DataFrame({"system": list("abc"), "broken_pct": [50.0, np.nan, 25.0]})

    assert rank_leaderboard(frame, "broken_pct", ascending=True)["rank"].tolist() == [2, 3, 1]


def test_the_markdown_report_ranks_a_team_no_system_saw_last(make_pairs, make_predictions):
    pairs = make_pairs(("A", GOOD, 1, NOT_GOOD, -1), ("B", FINE, 1, NOT_FINE, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}})
    unseen = pd.DataFrame({"system": ["S"], "pair_id": [2]})

    report = score(pairs, predictions, weight="none", unseen=unseen)

    assert math.isnan(report.breakers.set_index("team").loc["B", "score"])
    assert "| 2 | B |" in report.to_markdown()


def test_label_scores_counts_accuracy_and_macro_f1_by_hand():
    # pos: 2 gold, predicted twice, 1 hit -> F1 2·1 / (2 + 2) = 1/2; neg: 2 gold, predicted
    # once (wrongly), no hit -> F1 0; "maybe" is outside the set: a miss for neg and no
    # label's hit. Accuracy: 1 of 4.
    scores = label_scores(
        ["neg", "pos"], ["pos", "pos", "neg", "neg"], ["pos", "neg", "pos", "maybe"]
    )

    assert scores == LabelScores(accuracy=0.25, macro_f1=0.25)


def test_label_scores_all_right_is_one_and_a_label_never_seen_does_not_count():
    assert label_scores(["a", "b", "c"], ["a", "b"], ["a", "b"]) == LabelScores(1.0, 1.0)


def test_label_scores_refuses_a_gold_label_outside_the_set_and_unequal_lengths():
    with pytest.raises(ScoringInputError, match="'x' outside the label set"):
        label_scores(["a", "b"], ["a", "x"], ["a", "a"])
    with pytest.raises(ScoringInputError, match="2 gold label"):
        label_scores(["a", "b"], ["a", "b"], ["a"])


def test_pair_breaks_is_the_rule_of_find_breaks_on_every_combination(make_pairs, make_predictions):
    for gold_variant, predicted_original, predicted_variant in itertools.product(
        [1, -1], [1, -1, 0], [1, -1, 0]
    ):
        pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, gold_variant))
        predictions = make_predictions(
            {"S": {GOOD: predicted_original, NOT_GOOD: predicted_variant}}
        )
        whole = bool(find_breaks(pairs, predictions, labels=[-1, 1]).broken[0, 0])

        one = pair_breaks("1", str(gold_variant), str(predicted_original), str(predicted_variant))

        assert one == whole, (gold_variant, predicted_original, predicted_variant)


def test_pair_breaks_compares_normalized_labels_and_refuses_blanks():
    assert pair_breaks("1", "-1", "1.0", "+1") is True
    assert pair_breaks("pos", "pos", "pos", "Pos") is True
    with pytest.raises(ScoringInputError, match="non-blank"):
        pair_breaks("1", "-1", "", "1")


def test_a_weight_is_the_dev_accuracy_else_the_accuracy_on_the_distinct_originals(
    make_pairs, make_predictions
):
    # Two pairs share the original GOOD: it counts once. "other" is right on GOOD and
    # wrong on FINE: 1 of 2 distinct originals.
    pairs = make_pairs(
        ("A", GOOD, 1, NOT_GOOD, -1), ("B", GOOD, 1, "Good.", 1), ("B", FINE, 1, NOT_FINE, -1)
    )
    every_text = [GOOD, NOT_GOOD, "Good.", FINE, NOT_FINE]
    predictions = make_predictions(
        {
            "dev": dict.fromkeys(every_text, 1),
            "other": {GOOD: 1, NOT_GOOD: -1, "Good.": 1, FINE: -1, NOT_FINE: -1},
        }
    )
    breaks = find_breaks(pairs, predictions)

    weights = dev_or_original_weights(breaks, {"dev": 0.9, "other": None})

    assert weights.to_dict("records") == [
        {"system": "dev", "weight": 0.9, "source": WEIGHT_FROM_DEV},
        {"system": "other", "weight": 0.5, "source": WEIGHT_FROM_ORIGINALS},
    ]


def test_an_unseen_pair_leaves_its_original_out_of_the_weight(make_pairs, make_predictions):
    pairs = make_pairs(("A", GOOD, 1, NOT_GOOD, -1), ("A", FINE, 1, NOT_FINE, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: -1, FINE: -1}})
    unseen = pd.DataFrame({"system": ["S"], "pair_id": [2]})

    weights = dev_or_original_weights(find_breaks(pairs, predictions, unseen=unseen), {})

    assert weights["weight"].tolist() == [1.0]
    assert weights["source"].tolist() == [WEIGHT_FROM_ORIGINALS]


def test_a_system_that_saw_no_original_weighs_nothing(make_pairs, make_predictions):
    pairs = make_pairs(("A", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: -1}})
    unseen = pd.DataFrame({"system": ["S"], "pair_id": [1]})

    weights = dev_or_original_weights(
        find_breaks(pairs, predictions, unseen=unseen), {"S": float("nan")}
    )

    assert weights["weight"].tolist() == [0.0]
