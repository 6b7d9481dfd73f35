"""The break rule: right on exactly one item of a pair breaks a system."""

from __future__ import annotations

import numpy as np
import pytest

from scoring import ScoringInputError, find_breaks

GOOD, NOT_GOOD = "A good film.", "Not a good film."


def broken_by(pairs, predictions, **options) -> dict[str, list[bool]]:
    breaks = find_breaks(pairs, predictions, **options)
    return {name: row.tolist() for name, row in zip(breaks.systems, breaks.broken, strict=True)}


def test_right_on_the_original_and_wrong_on_the_variant_is_a_break(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}})

    assert broken_by(pairs, predictions) == {"S": [True]}


def test_wrong_on_the_original_and_right_on_the_variant_is_a_break_too(
    make_pairs, make_predictions
):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: -1, NOT_GOOD: -1}})

    assert broken_by(pairs, predictions) == {"S": [True]}


def test_right_on_both_or_wrong_on_both_is_not_a_break(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions(
        {"right": {GOOD: 1, NOT_GOOD: -1}, "wrong": {GOOD: -1, NOT_GOOD: 1}}
    )

    breaks = find_breaks(pairs, predictions)

    assert breaks.broken.tolist() == [[False], [False]]
    assert breaks.both_wrong.tolist() == [[False], [True]]


def test_a_prediction_outside_the_label_set_is_wrong(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 0}})

    breaks = find_breaks(pairs, predictions)

    assert breaks.broken.tolist() == [[True]]
    assert breaks.labels == ["-1", "1"]
    assert breaks.vocabulary == ["-1", "1", "0"]


def test_a_given_label_set_decides_what_is_outside_it(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 0}})

    breaks = find_breaks(pairs, predictions, labels=[-1, 0, 1])

    assert breaks.labels == ["-1", "0", "1"]
    assert breaks.vocabulary == breaks.labels
    assert breaks.broken.tolist() == [[True]]


def test_labels_are_compared_as_normalized_strings(make_pairs, make_predictions):
    pairs = make_pairs(
        ("T", GOOD, "+1", NOT_GOOD, "-1"), ("T", "Fine.", "positive", "Fine?", " positive ")
    )
    predictions = make_predictions(
        {"S": {GOOD: 1.0, NOT_GOOD: " -1", "Fine.": "positive", "Fine?": "positive"}}
    )

    breaks = find_breaks(pairs, predictions)

    assert breaks.original_correct.all() and breaks.variant_correct.all()
    assert breaks.labels == ["-1", "1", "positive"]


def test_pairs_sharing_an_original_are_distinct_pairs(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1), ("T", GOOD, 1, "A great film.", 1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1, "A great film.": 1}})

    breaks = find_breaks(pairs, predictions)

    assert breaks.pairs["original_id"].tolist() == [GOOD, GOOD]
    assert breaks.broken.tolist() == [[True, False]]


def test_a_missing_prediction_names_the_system_and_the_text(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}, "lazy": {GOOD: 1}})

    with pytest.raises(
        ScoringInputError, match=r"system 'lazy' has no prediction for text 'Not a good film\.'"
    ):
        find_breaks(pairs, predictions)


def test_a_system_with_predictions_only_for_other_texts_is_missing_them_all(
    make_pairs, make_predictions
):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}, "elsewhere": {"dev text": 1}})

    with pytest.raises(ScoringInputError, match=r"'elsewhere': 2"):
        find_breaks(pairs, predictions)


def test_a_blank_label_is_a_missing_prediction(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: " "}})

    with pytest.raises(
        ScoringInputError, match=r"system 'S' has no prediction for text 'Not a good film\.'"
    ):
        find_breaks(pairs, predictions)


def test_repeated_identical_predictions_are_accepted(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}})
    repeated = predictions.iloc[[0, 1, 1, 0]].assign(label=["1", 1, "+1", 1.0])

    assert find_breaks(pairs, repeated).broken.tolist() == [[True]]


def test_conflicting_predictions_name_the_system_the_text_and_the_labels(
    make_pairs, make_predictions
):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}})
    conflicting = predictions.iloc[[0, 1, 1]].assign(label=[1, 1, -1])

    with pytest.raises(
        ScoringInputError,
        match=r"system 'S' has conflicting predictions for text 'Not a good film\.': labels '-1', '1'",
    ):
        find_breaks(pairs, conflicting)


def test_repeats_that_agree_on_the_label_but_not_on_lambda_max_conflict(
    make_pairs, make_predictions
):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions(
        {"S": {GOOD: 1, NOT_GOOD: 1}}, lambda_max={"S": {GOOD: 0.5, NOT_GOOD: 2.0}}
    )
    repeated = predictions.iloc[[0, 1, 0]].assign(lambda_max=[0.5, 2.0, 0.7])

    with pytest.raises(ScoringInputError, match="text 'A good film.': different lambda_max values"):
        find_breaks(pairs, repeated)


def test_predictions_for_texts_outside_the_pairs_are_ignored(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD: -1, "a dev sentence": "neutral"}})

    breaks = find_breaks(pairs, predictions)

    assert breaks.vocabulary == ["-1", "1"]
    assert not breaks.broken.any()


def test_texts_are_matched_exactly(make_pairs, make_predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1))
    predictions = make_predictions({"S": {GOOD: 1, NOT_GOOD.lower(): -1}})

    with pytest.raises(ScoringInputError, match="no prediction for text 'Not a good film.'"):
        find_breaks(pairs, predictions)


def test_systems_and_teams_come_sorted_and_pairs_in_team_then_id_order(
    make_pairs, make_predictions
):
    pairs = make_pairs(("b", GOOD, 1, NOT_GOOD, -1), ("a", "Fine.", 1, "Fine?", 1))
    predictions = make_predictions(
        {name: {GOOD: 1, NOT_GOOD: -1, "Fine.": 1, "Fine?": -1} for name in ("zeta", "alpha")}
    )

    breaks = find_breaks(pairs, predictions)

    assert breaks.systems == ["alpha", "zeta"]
    assert breaks.teams == ["a", "b"]
    assert breaks.pairs["pair_id"].tolist() == [2, 1]
    np.testing.assert_array_equal(breaks.broken, [[True, False], [True, False]])
