"""Tokens of a pair's texts and the measures taken with them: the token edit distance, the
shared-token ratio, and where an edit lies past what systems read."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibi.tasktypes.tokens import (
    edit_out_of_sight,
    shared_token_ratio,
    token_edit_distance,
    tokenize,
    tokens_in_sight,
)

LONG = "the film is a slow , quiet and oddly moving study of grief and memory ."


# --- Tokens, distance, overlap ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("I love this movie!", ["I", "love", "this", "movie", "!"]),
        ("I'm mad", ["I", "'m", "mad"]),
        ("It's harmless", ["It", "'s", "harmless"]),
        ("it doesn't work", ["it", "does", "n't", "work"]),
        ("it’s curly", ["it", "’s", "curly"]),
        ('is "terrific" as', ["is", '"', "terrific", '"', "as"]),
        ("is 'terrific' as", ["is", "'", "terrific", "'", "as"]),
        ("[Bettis] has", ["[", "Bettis", "]", "has"]),
        ("cutting-room floor", ["cutting", "-", "room", "floor"]),
    ],
)
def test_it_splits_words_clitics_and_punctuation(text, tokens):
    assert tokenize(text) == tokens


def test_pre_tokenized_and_plain_spellings_give_the_same_tokens():
    assert tokenize("a gripping , beautifully acted film .") == tokenize(
        "a gripping, beautifully acted film."
    )


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [
        ("a b c", "a b c", 0),
        ("a b c", "a x c", 1),
        ("a b c", "a c", 1),
        ("a b c", "a b c d", 1),
        ("a b c d", "d c b a", 4),
        ("", "a b", 2),
        ("a b c d e", "a x c y e", 2),
    ],
)
def test_token_edit_distance_counts_inserts_deletes_and_replacements(a, b, distance):
    assert token_edit_distance(a.split(), b.split()) == distance


def test_the_shared_token_ratio_is_over_the_variants_tokens_with_repeats():
    assert shared_token_ratio(["a", "b", "c"], ["a", "b", "x", "y"]) == 0.5
    assert shared_token_ratio(["a"], ["a", "a"]) == 0.5
    assert shared_token_ratio(["a", "b"], []) == 0.0


# --- Properties ---------------------------------------------------------------------------

tokens = st.lists(st.sampled_from(["a", "b", "c", "d", "'s", "!"]), max_size=12)


def plain_levenshtein(a: list[str], b: list[str]) -> int:
    table = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (a[i - 1] != b[j - 1]),
            )
    return table[-1][-1]


@given(tokens, tokens)
def test_trimming_never_changes_the_edit_distance(a, b):
    assert token_edit_distance(a, b) == plain_levenshtein(a, b)


@given(tokens, tokens)
def test_trimming_never_changes_the_shared_token_ratio(a, b):
    expected = sum((Counter(a) & Counter(b)).values()) / len(b) if b else 0.0
    assert shared_token_ratio(a, b) == pytest.approx(expected)


# --- Edits that systems may not see (a warning, not a problem) -------------------------------


def test_the_tokens_in_sight_leave_room_for_sub_words_and_the_special_tokens():
    # 126 positions for text, at 1.5 sub-word tokens per token.
    assert tokens_in_sight(128) == 84
    assert tokens_in_sight(12) == 6
    assert tokens_in_sight(1) == 0


def test_without_a_sequence_length_no_edit_is_out_of_sight():
    assert edit_out_of_sight(LONG, LONG.replace("memory", "time"), max_sequence_length=None) is None
