"""When a span answer is right: each mode on hand-checked cases, the edge cases, the break rule
for spans and the builder scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scoring import ScoringInputError, breaker_scores
from scoring.answers import answer_scores, normalize_answer, overlap_ratio, token_f1
from scoring.span_breaks import span_breaks, span_builder_metrics

SENTENCE = "UCD finished the 2006 championship as Dublin champions , by beating St Vincents ."


def span(text: str, occurrence: str | None = None) -> tuple[int, int]:
    start = SENTENCE.index(occurrence or text)
    return start, start + len(text)


def gold_frame(*answers: tuple[str, str]) -> pd.DataFrame:
    """Gold answers as (item, text) with their offsets in SENTENCE."""
    rows = [(item, text, *span(text)) for item, text in answers]
    return pd.DataFrame(rows, columns=["item", "text", "start", "end"])


def predict(*answers: tuple[str, str, str]) -> pd.DataFrame:
    """Predictions as (system, item, text); offsets in SENTENCE (empty text: an empty span)."""
    rows = [(s, item, text, *(span(text) if text else (0, 0))) for s, item, text in answers]
    return pd.DataFrame(rows, columns=["system", "item", "text", "start", "end"])


def test_normalisation_lowercases_and_drops_punctuation_articles_and_spacing() -> None:
    assert normalize_answer("  The 2006   Championship. ") == "2006 championship"
    assert normalize_answer("`` A Responsible Plan ''") == "responsible plan"
    assert normalize_answer("“The Apple”") == "apple"
    assert normalize_answer("theatre and anthem") == "theatre and anthem"  # not articles
    assert normalize_answer("?!") == ""


def test_token_f1_counts_tokens_as_multisets() -> None:
    predicted = pd.Series(["dublin dublin", "2006 championship", "st vincents", ""])
    gold = pd.Series(["dublin", "2006 championship as dublin champions", "vincents st", ""])
    # 1 common of 2 and 1: P 1/2, R 1; 2 of 2 and 5: P 1, R 2/5; order does not matter; empty.
    assert token_f1(predicted, gold) == pytest.approx([2 / 3, 4 / 7, 1.0, 1.0])


def test_exact_mode_matches_any_gold_answer_after_normalisation() -> None:
    gold = gold_frame(("q1", "UCD"), ("q2", "the 2006 championship"), ("q2", "2006"))
    predictions = predict(("S", "q1", "UCD"), ("S", "q2", "2006 championship"))
    scores = answer_scores(predictions, gold, mode="exact")
    assert scores["correct"].tolist() == [True, True]
    assert scores["token_f1"].tolist() == [1.0, 1.0]
    wrong = answer_scores(predict(("S", "q2", "the 2006 championship as")), gold, mode="exact")
    assert wrong["correct"].tolist() == [False]
    assert wrong["token_f1"].tolist() == pytest.approx([0.8])  # best gold: 2 of 3 and 2


def test_token_f1_mode_uses_the_best_gold_answer_and_the_threshold() -> None:
    gold = gold_frame(("q", "St Vincents"), ("q", "beating St Vincents"))
    cases = predict(
        ("A", "q", "Vincents"),  # vs "st vincents": P 1, R 1/2 -> 2/3
        ("B", "q", "beating"),  # vs "beating st vincents": P 1, R 1/3 -> 1/2, at the threshold
        ("C", "q", "Dublin champions , by beating"),  # 1 of 4 and 3 -> 2/7
    )
    scores = answer_scores(cases, gold, mode="token_f1")
    assert scores["token_f1"].tolist() == pytest.approx([2 / 3, 1 / 2, 2 / 7])
    assert scores["correct"].tolist() == [True, True, False]
    stricter = answer_scores(cases, gold, mode="token_f1", threshold=0.6)
    assert stricter["correct"].tolist() == [True, False, False]


def test_overlap_longer_divides_the_shared_characters_by_the_longer_span() -> None:
    gold = gold_frame(("q", "the 2006 championship"))  # 21 characters
    cases = predict(
        ("A", "q", "2006 championship"),  # 17 shared / 21 = 0.81
        ("B", "q", "the 2006"),  # 8 / 21 = 0.38
        ("C", "q", "the 2006 championship as Dublin"),  # 21 / 31 = 0.68: too long
        ("D", "q", SENTENCE),  # the whole sentence is never right
    )
    scores = answer_scores(cases, gold, mode="overlap_longer")
    assert scores["correct"].tolist() == [True, False, False, False]
    assert overlap_ratio(*np.array([[4], [21], [0], [21]])) == pytest.approx([17 / 21])


def test_overlap_2017_divides_the_shared_characters_by_the_true_answer() -> None:
    # The overview's words: "overlapped at least 75% in characters with the true answer".
    gold = gold_frame(("q", "the 2006 championship"))  # 21 characters
    cases = predict(
        ("A", "q", "2006 championship"),  # 17 / 21 = 0.81
        ("B", "q", "the 2006"),  # 8 / 21 = 0.38
        ("C", "q", "the 2006 championship as Dublin"),  # 21 / 21 = 1: right, however long
        ("D", "q", "2006 championship as Dublin"),  # 17 / 21 = 0.81 (0.63 of the longer)
        ("E", "q", "championship as Dublin"),  # 12 / 21 = 0.57
    )
    scores = answer_scores(cases, gold, mode="overlap_2017")
    assert scores["correct"].tolist() == [True, False, True, True, False]
    longer = answer_scores(cases, gold, mode="overlap_longer")
    assert longer["correct"].tolist() == [True, False, False, False, False]
    # By hand: "the 2006 championship" at 0-21, "2006 championship as Dublin" at 4-31.
    by_gold = overlap_ratio(*np.array([[4], [31], [0], [21]]), over="gold")
    by_longer = overlap_ratio(*np.array([[4], [31], [0], [21]]), over="longer")
    assert by_gold == pytest.approx([17 / 21])
    assert by_longer == pytest.approx([17 / 27])
    with pytest.raises(ScoringInputError, match="'longer' or 'gold'"):
        overlap_ratio(*np.array([[4], [31], [0], [21]]), over="prediction")


def test_overlap_2017_counts_offsets_not_equal_text_elsewhere() -> None:
    # The same words at another place of the sentence share no characters with the gold span.
    sentence_twice = "the cup and the cup"
    gold = pd.DataFrame({"item": ["q"], "text": ["the cup"], "start": [0], "end": [7]})
    elsewhere = pd.DataFrame(
        {"system": ["S"], "item": ["q"], "text": ["the cup"], "start": [12], "end": [19]}
    )
    assert sentence_twice[12:19] == "the cup"
    scores = answer_scores(elsewhere, gold, mode="overlap_2017")
    assert scores["correct"].tolist() == [False]
    assert answer_scores(elsewhere, gold, mode="exact")["correct"].tolist() == [True]


@pytest.mark.parametrize("mode", ["exact", "token_f1", "overlap_2017", "overlap_longer"])
def test_empty_and_punctuation_only_predictions_are_wrong(mode: str) -> None:
    gold = gold_frame(("q", "UCD"), ("p", ","))
    predictions = pd.DataFrame(
        {
            "system": ["S", "S", "T"],
            "item": ["q", "p", "q"],
            "text": ["", ",", None],
            "start": [0, *span(",")[:1], 0],
            "end": [0, span(",")[1], 0],
        }
    )
    scores = answer_scores(predictions, gold, mode=mode)
    assert scores["token_f1"].tolist() == [0.0, 1.0, 0.0]
    # A punctuation-only gold answer normalises to nothing, as does the prediction: exact and
    # F1 call that a match; the overlap rule compares characters.
    assert scores["correct"].tolist() == [False, True, False]


def test_bad_input_is_refused_with_the_reason() -> None:
    gold = gold_frame(("q", "UCD"))
    with pytest.raises(ScoringInputError, match="unknown answer mode 'fuzzy'"):
        answer_scores(predict(("S", "q", "UCD")), gold, mode="fuzzy")
    with pytest.raises(ScoringInputError, match=r"threshold must be in \(0, 1\]"):
        answer_scores(predict(("S", "q", "UCD")), gold, threshold=0)
    with pytest.raises(ScoringInputError, match="item 'x' has no gold answer"):
        answer_scores(predict(("S", "x", "UCD")), gold)
    with pytest.raises(ScoringInputError, match="more than one prediction for item 'q'"):
        answer_scores(predict(("S", "q", "UCD"), ("S", "q", "St")), gold)
    no_offsets = predict(("S", "q", "UCD")).drop(columns=["start", "end"])
    assert answer_scores(no_offsets, gold, mode="exact")["correct"].tolist() == [True]
    with pytest.raises(ScoringInputError, match="missing column"):
        answer_scores(no_offsets, gold, mode="overlap_2017")
    reversed_span = predict(("S", "q", "UCD")).assign(start=5, end=2)
    with pytest.raises(ScoringInputError, match="invalid end offset"):
        answer_scores(reversed_span, gold, mode="overlap_2017")


@pytest.fixture
def span_pairs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pair_id": [1, 2, 3],
            "team": ["T", "T", "U"],
            "original_id": ["o1", "o1", "o2"],
            "original_item": ["o1", "o1", "o2"],
            "variant_item": ["v1", "v2", "v3"],
        }
    )


def test_a_span_pair_breaks_a_system_right_on_exactly_one_item(span_pairs: pd.DataFrame) -> None:
    scores = pd.DataFrame(
        {
            "system": ["A"] * 5 + ["B"] * 5,
            "item": ["o1", "v1", "v2", "o2", "v3"] * 2,
            "correct": [True, False, True, False, False, True, True, True, False, True],
            "token_f1": [1.0, 0.0, 1.0, 0.2, 0.4, 1.0, 0.8, 0.6, 0.0, 1.0],
        }
    )
    breaks = span_breaks(span_pairs, scores)
    assert breaks.systems == ["A", "B"]
    # A: right, wrong (break); right, right; wrong, wrong (both wrong). B: none; none; break.
    assert breaks.broken.tolist() == [[True, False, False], [False, False, True]]
    assert breaks.both_wrong.tolist() == [[False, False, True], [False, False, False]]
    metrics = span_builder_metrics(breaks, scores).set_index("system")
    # Items per pair, the original counted once per pair: A right on o1, o1, v2 of 6.
    assert metrics.loc["A", "answer_accuracy"] == pytest.approx(3 / 6)
    assert metrics.loc["A", "mean_token_f1"] == pytest.approx((1 + 0 + 1 + 1 + 0.2 + 0.4) / 6)
    assert metrics.loc["B", "answer_accuracy"] == pytest.approx(5 / 6)
    assert metrics.loc["B", "mean_token_f1"] == pytest.approx((1 + 0.8 + 1 + 0.6 + 0 + 1) / 6)
    assert metrics.loc["A", "broken_pct"] == pytest.approx(100 / 3)
    # Eq. 1 reads the same Breaks: weights times breaks per team.
    weights = pd.DataFrame({"system": ["A", "B"], "weight": [0.5, 1.0]})
    teams, _ = breaker_scores(breaks, weights=weights)
    # T: (0.5 · 50 + 1.0 · 0) / 2 = 12.5; U: (0.5 · 0 + 1.0 · 100) / 2 = 50.
    assert dict(zip(teams["team"], teams["score"], strict=True)) == pytest.approx(
        {"U": 50.0, "T": 12.5}
    )


def test_span_scores_missing_an_item_are_refused(span_pairs: pd.DataFrame) -> None:
    scores = pd.DataFrame(
        {"system": ["A"] * 4, "item": ["o1", "v1", "v2", "o2"], "correct": [True] * 4}
    )
    with pytest.raises(ScoringInputError, match="no prediction for text 'v3'"):
        span_breaks(span_pairs, scores)
