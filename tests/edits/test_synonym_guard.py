"""Synonyms keep the word's opinion, its frame and its argument structure (issue 32, point 3)."""

from __future__ import annotations

import pytest

from edits.opinion import same_opinion
from edits.perturbations import synonym_replacements, synonym_swaps


def replacements(text):
    return {(p.edit.original.lower(), p.edit.replacement.lower()) for p in synonym_swaps(text)}


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # The examples: a rated word never becomes an unrated or opposite one.
        ("Fantastic it most certainly ai n't .", ("fantastic", "grotesque")),
        ("a fantastic film", ("fantastic", "grotesque")),
        ("it is funny", ("funny", "comic")),
        ("a sappy film", ("sappy", "wacky")),
        # Argument structure: "tells us" needs a verb that takes a person as its object.
        ("this movie tells us", ("tells", "says")),
        ("this movie tells us", ("tells", "states")),
        # Collocations: an adverb read as an adjective, an adverb of a complex preposition.
        ("it is scarcely worth the effort", ("scarcely", "scarce")),
        ("instead of a story", ("instead", "alternatively")),
    ],
)
def test_synonyms_that_change_polarity_or_read_wrong_are_refused(text, refused):
    assert refused not in replacements(text)


def test_good_synonyms_are_still_made():
    assert ("funny", "amusing") in replacements("it is funny")
    assert ("scarcely", "barely") in replacements("it is scarcely worth the effort")
    assert ("movie", "film") in replacements("this movie tells us")
    assert ("films", "movies") in replacements("The films are stale .")
    assert synonym_swaps("it is funny") == synonym_swaps("it is funny")


def test_same_opinion_asks_for_sign_and_strength():
    assert not same_opinion("fantastic", "grotesque")  # +2.6 → unrated
    assert not same_opinion("good", "bad")
    assert not same_opinion("good", "superb")  # +1.9 → +3.1: a stronger praise
    assert same_opinion("funny", "amusing")
    assert same_opinion("film", "movie")  # both unrated
    assert synonym_replacements("tells", before="movie", after="us") == []
