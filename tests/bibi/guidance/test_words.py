"""Where the ranking finds a system's stored words in an item: a sentence pair's words in the
segment they name, older rows (``[word, score]``) in the texts a breaker may edit; shares
averaged onto the first system's words. Pure: no database."""

from __future__ import annotations

import pytest

from bibi.guidance.words import WordPlaces, item_words

TEXT = WordPlaces({"text": "The film is good."}, fields=("text",), editable=("text",))
PAIR = WordPlaces(
    {"text": "it is good and it is fun", "text_b": "it is good"},
    fields=("text", "text_b"),
    editable=("text_b",),
)
BOTH = WordPlaces(PAIR.texts, fields=PAIR.fields, editable=("text", "text_b"))


def located(places, *leverages):
    return [(w.segment, w.start, w.end, w.text) for w in item_words(places, leverages)]


def test_a_text_rows_words_are_found_in_order_ignoring_case_and_punctuation():
    rows = [["the", 1.0], ["film", 1.0], ["is", 1.0], ["good", 5.0], [".", 92.0]]
    words = item_words(TEXT, [rows])
    assert [(w.text, w.start, w.end, w.segment) for w in words] == [
        ("The", 0, 3, "text"), ("film", 4, 8, "text"), ("is", 9, 11, "text"),
        ("good", 12, 16, "text"),
    ]  # fmt: skip
    assert [w.leverage for w in words] == pytest.approx([0.125, 0.125, 0.125, 0.625])


def test_a_pairs_words_are_found_in_the_segment_they_name():
    # "it is good" is in the premise too: a hypothesis word is never looked for there.
    rows = [["it", 1.0, "hypothesis"], ["is", 1.0, "hypothesis"], ["good", 2.0, "hypothesis"]]
    assert located(PAIR, rows) == [
        ("text_b", 0, 2, "it"), ("text_b", 3, 5, "is"), ("text_b", 6, 10, "good")
    ]  # fmt: skip
    premise = [["fun", 1.0, "premise"], ["good", 1.0, "hypothesis"]]
    assert located(BOTH, premise) == [("text", 21, 24, "fun"), ("text_b", 6, 10, "good")]


def test_words_stored_without_their_segment_are_looked_for_in_the_editable_texts():
    assert located(PAIR, [["good", 1.0]]) == [("text_b", 6, 10, "good")]
    # Both editable: the premise's words first, then the hypothesis's, in order.
    rows = [["fun", 1.0], ["it", 1.0], ["good", 1.0]]
    assert located(BOTH, rows) == [
        ("text", 21, 24, "fun"), ("text_b", 0, 2, "it"), ("text_b", 6, 10, "good")
    ]  # fmt: skip


def test_shares_are_averaged_onto_the_first_systems_words_of_the_same_segment():
    first = [["it", 1.0, "premise"], ["good", 3.0, "hypothesis"]]
    # The second system's "it" is the hypothesis's: it adds to no premise word.
    second = [["it", 1.0, "hypothesis"], ["good", 1.0, "hypothesis"]]
    words = item_words(BOTH, [first, None, second])
    assert [(w.segment, w.text) for w in words] == [("text", "it"), ("text_b", "good")]
    assert words[0].leverage == pytest.approx((0.25 + 0.0) / 2)
    assert words[1].leverage == pytest.approx((0.75 + 0.5) / 2)


def test_a_segment_the_item_does_not_have_is_left_out():
    assert located(TEXT, [["film", 1.0, "hypothesis"], ["good", 1.0]]) == [("text", 12, 16, "good")]
    assert item_words(TEXT, [None, []]) == ()
