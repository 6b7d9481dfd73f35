"""The opinion gate of label-changing edits: VADER's lexicon, hand-checked words."""

from __future__ import annotations

import pytest

from edits import opinion
from edits.errors import OpinionLexiconError
from edits.perturbations import antonym_replacements, antonym_swaps, negation_edits


@pytest.mark.parametrize(
    ("word", "antonym"),
    [("good", "bad"), ("bad", "good"), ("weak", "strong"), ("weaker", "stronger"),
     ("happy", "unhappy"), ("honest", "dishonest"), ("interesting", "boring")],
)  # fmt: skip
def test_words_of_opposite_opinions_are_allowed(word, antonym):
    assert opinion.opposite_opinions(word, antonym)
    assert opinion.opposite_opinions(word.upper(), antonym.capitalize())


@pytest.mark.parametrize(
    ("word", "antonym"),
    [
        # No opinion in either word: measured as wrong label changes.
        ("young", "old"), ("small", "large"), ("top", "side"), ("thin", "thick"),
        # One side without an opinion: top is 0.8, warm 0.9, hard -0.4, stale unrated.
        ("top", "bottom"), ("warm", "cold"), ("easy", "hard"), ("stale", "fresh"),
        # Both opinions of one sign.
        ("good", "great"), ("bad", "boring"),
    ],
)  # fmt: skip
def test_antonyms_without_opposite_opinions_are_refused(word, antonym):
    assert not opinion.opposite_opinions(word, antonym)


def test_the_threshold_and_the_ratings_are_the_lexicons():
    assert opinion.valence("good") == 1.9 and opinion.valence("Bad") == -2.5
    assert opinion.valence("young") is None
    assert opinion.OPINION_MIN == 1.0
    assert opinion.carries_opinion("boring")  # -1.3
    assert not opinion.carries_opinion("top")  # 0.8
    assert opinion.opinion_words(["It", "is", "top", "BORING", "fun"]) == ["BORING", "fun"]


def test_the_antonym_of_a_word_without_opinion_is_a_probe_or_nothing():
    assert [r.word for r in antonym_replacements("good", before="a", after="film")] == ["bad"]
    assert antonym_replacements("thin", before="a", after="role") == []
    (probe,) = antonym_replacements("thin", before="a", after="role", probes=True)
    assert probe.word == "thick" and probe.probe
    assert "thin unrated, thick unrated" in probe.rationale
    assert "claims no label" in probe.rationale
    (real,) = antonym_replacements("good", before="a", after="film", probes=True)
    assert not real.probe and "good +1.9, bad -2.5" in real.rationale
    # Measured on the demo's starter set: "a thick role" is no negative review.
    assert antonym_swaps("Tom Baker makes the most of a thin role .") == []
    assert [p.text for p in antonym_swaps("a good film")] == ["a bad film"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The kids will love it .", ["The kids will not love it ."]),
        # No opinion word: negating a plain fact says no other opinion.
        ("The plot is set in Paris .", []),
        ("The film is long .", []),
        # Removing a negation needs none: the negation holds the opinion.
        ("Do n't see this film .", ["See this film ."]),
        # An opinion ahead of the head that the "not" leaves standing: fine where it then
        # agrees with the new predicate, refused where it agreed with the old one.
        ("The wasted cast will love it .", ["The wasted cast will not love it ."]),
        ("The talented cast will love it .", []),
        ("The dull flick is a grim exercise .", []),
    ],
)
def test_not_goes_only_into_a_clause_with_an_opinion_word(text, expected):
    edits = negation_edits(text)
    assert [p.text for p in edits] == expected
    assert all(
        "opinion word" in p.rationale and "'love'" in p.rationale for p in edits if "not" in p.text
    )


def test_opinion_signs_are_the_signs_of_the_opinion_words():
    assert opinion.opinion_signs(["a", "dull", "grim", "film"]) == {-1}
    assert opinion.opinion_signs(["good", "but", "dull"]) == {1, -1}
    assert opinion.opinion_signs(["a", "young", "film"]) == set()


def test_a_missing_lexicon_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(opinion, "LEXICON_PACKAGE", "no_such_vader_package")
    opinion._lexicon.cache_clear()
    try:
        with pytest.raises(OpinionLexiconError, match="install the vadersentiment package"):
            opinion.valence("good")
    finally:
        monkeypatch.undo()
        opinion._lexicon.cache_clear()
    assert opinion.valence("good") == 1.9
