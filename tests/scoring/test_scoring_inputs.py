"""Bad input gets a ScoringInputError that names what is wrong."""

from __future__ import annotations

import pandas as pd
import pytest

from scoring import ScoringInputError, score

GOOD, NOT_GOOD = "A good film.", "Not a good film."


@pytest.fixture
def pairs(make_pairs):
    return make_pairs(("T", GOOD, 1, NOT_GOOD, -1))


@pytest.fixture
def predictions(make_predictions):
    return make_predictions({"S": {GOOD: 1, NOT_GOOD: 1}, "R": {GOOD: 1, NOT_GOOD: -1}})


def weights_of(**by_system: object) -> pd.DataFrame:
    return pd.DataFrame(by_system.items(), columns=["system", "weight"])


def test_the_scoring_error_is_a_value_error():
    assert issubclass(ScoringInputError, ValueError)


@pytest.mark.parametrize("column", ["pair_id", "team", "original_text", "variant_label"])
def test_missing_pair_columns_are_named(pairs, predictions, column):
    with pytest.raises(ScoringInputError, match=f"pairs is missing column\\(s\\) {column}"):
        score(pairs.drop(columns=column), predictions, weight="none")


def test_missing_prediction_columns_are_named(pairs, predictions):
    with pytest.raises(ScoringInputError, match=r"predictions is missing column\(s\) label"):
        score(pairs, predictions.rename(columns={"label": "prediction"}), weight="none")


def test_inputs_that_are_not_frames_are_refused(pairs):
    with pytest.raises(ScoringInputError, match="predictions must be a pandas DataFrame, not list"):
        score(pairs, [], weight="none")


def test_empty_inputs_are_refused(pairs, predictions):
    with pytest.raises(ScoringInputError, match="pairs has no rows"):
        score(pairs.iloc[:0], predictions, weight="none")
    with pytest.raises(ScoringInputError, match="predictions has no rows"):
        score(pairs, predictions.iloc[:0], weight="none")


def test_a_repeated_pair_id_is_named(make_pairs, predictions):
    pairs = make_pairs(("T", GOOD, 1, NOT_GOOD, -1), ("T", GOOD, 1, NOT_GOOD, -1))
    pairs["pair_id"] = ["p7", "p7"]

    with pytest.raises(ScoringInputError, match="pair_id must be unique; repeated: 'p7'"):
        score(pairs, predictions, weight="none")


def test_a_blank_text_or_label_in_a_pair_is_named(pairs, predictions):
    with pytest.raises(ScoringInputError, match="variant_text is blank for pair\\(s\\) '1'"):
        score(pairs.assign(variant_text="  "), predictions, weight="none")
    with pytest.raises(ScoringInputError, match="original_label is blank for pair\\(s\\) '1'"):
        score(pairs.assign(original_label=None), predictions, weight="none")


def test_a_gold_label_outside_the_given_label_set_is_named(pairs, predictions):
    with pytest.raises(
        ScoringInputError,
        match=r"pair '1' has variant_label '-1', which is not in the label set \['0', '1'\]",
    ):
        score(pairs, predictions, weight="none", labels=["0", "1"])


def test_a_label_set_given_as_one_string_is_refused(pairs, predictions):
    with pytest.raises(ScoringInputError, match="not one string"):
        score(pairs, predictions, weight="none", labels="-1,1")


def test_unknown_modes_are_named(pairs, predictions):
    with pytest.raises(
        ScoringInputError, match="unknown weight mode 'f1'; expected one of dev_accuracy"
    ):
        score(pairs, predictions, weight="f1")
    with pytest.raises(
        ScoringInputError, match="unknown break_rate mode 'items'; expected one of pairs, sentences"
    ):
        score(pairs, predictions, weight="none", break_rate="items")


def test_dev_accuracy_needs_weights(pairs, predictions):
    with pytest.raises(ScoringInputError, match="weight mode 'dev_accuracy' needs weights"):
        score(pairs, predictions)


def test_a_system_without_a_weight_is_named(pairs, predictions):
    with pytest.raises(ScoringInputError, match="weights has no weight for system\\(s\\) 'S'"):
        score(pairs, predictions, weights=weights_of(R=0.8))


def test_a_weight_for_a_system_without_predictions_is_named(pairs, predictions):
    with pytest.raises(
        ScoringInputError, match="weights names system\\(s\\) 'Q' that have no predictions"
    ):
        score(pairs, predictions, weights=weights_of(R=0.8, S=0.7, Q=0.9))


@pytest.mark.parametrize("bad", ["high", 1.5, -0.1, None])
def test_a_weight_that_is_not_an_accuracy_is_named(pairs, predictions, bad):
    with pytest.raises(
        ScoringInputError, match="weight must be a number between 0 and 1 .* system 'S'"
    ):
        score(pairs, predictions, weights=weights_of(R=0.8, S=bad))


def test_conflicting_weights_for_a_system_are_named(pairs, predictions):
    weights = pd.DataFrame({"system": ["R", "S", "S"], "weight": [0.8, 0.7, 0.6]})

    with pytest.raises(ScoringInputError, match="different weights for system\\(s\\) 'S'"):
        score(pairs, predictions, weights=weights)


def test_weights_are_not_needed_by_the_other_modes(pairs, predictions):
    for mode in ("original_accuracy", "original_f1", "none"):
        assert score(pairs, predictions, weight=mode).breakers["score"].notna().all()


def test_a_lambda_max_that_is_not_a_number_names_the_system_and_text(pairs, predictions):
    predictions["lambda_max"] = ["0.1", "0.2", "steep", "0.4"]

    with pytest.raises(
        ScoringInputError,
        match="lambda_max must be a finite number; system 'R' has 'steep' for text 'A good film.'",
    ):
        score(pairs, predictions, weight="none")


def test_a_blank_system_or_text_in_the_predictions_is_refused(pairs, predictions):
    with pytest.raises(ScoringInputError, match="blank system"):
        score(pairs, predictions.assign(system=["S", "S", "", "R"]), weight="none")
    with pytest.raises(ScoringInputError, match="row\\(s\\) with a blank text"):
        score(pairs, predictions.assign(text=[GOOD, NOT_GOOD, None, NOT_GOOD]), weight="none")


def test_long_texts_are_shortened_in_messages(make_pairs, make_predictions):
    long_text = "word " * 100
    pairs = make_pairs(("T", GOOD, 1, long_text, -1))
    predictions = make_predictions({"S": {GOOD: 1}})

    with pytest.raises(ScoringInputError) as raised:
        score(pairs, predictions, weight="none")

    assert "word word" in str(raised.value) and len(str(raised.value)) < 250
