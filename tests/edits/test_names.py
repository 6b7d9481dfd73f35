"""Name swaps only where the word is a person's name in its sentence (issue 32, point 2)."""

from __future__ import annotations

import pytest

from edits.perturbations import name_swaps


def swapped(text):
    return [p.text for p in name_swaps(text, per_name=1)]


@pytest.mark.parametrize(
    "text",
    [
        # The spoiled pairs: lowercase words with a person sense in WordNet.
        "this movie tells us what it is about .",
        "on a more modest scale , it works .",
        "what begins as a comedy ends as a bore .",
        "a moody grandiosity .",
        # Capitalised, but a verb, an adjective or a function word, or a sentence's first word.
        "Tell us more .",
        "What begins as a comedy ends as a bore .",
        "On A More Modest Scale",
        "Moody grandiosity fills it .",
        "Mark composed texts honoring God .",
        # Companies, films and titles.
        "Walt Disney Pictures made it .",
        "The Disney Channel shows it .",
        "It is a Disney film .",
        "the best of the Pierce Brosnan James Bond films",
        "He is the King of the Gypsies .",
        # Places, joined words, a common word after a common word (tuning set, issue 32).
        "He was made a Deputy Lieutenant for the County of Kent .",
        "In 1971 , Britten-Norman encountered financial problems .",
        "the murder of AWB leader Eugene Terre'Blanche in April 2010 .",
        "in Picture Rocks , the creek crosses Route 864 .",
        "A Fresnel lens manufactured by glass makers was installed .",
        "the site was visited by George VI .",
    ],
)
def test_words_that_are_no_names_in_their_sentence_are_not_swapped(text):
    assert name_swaps(text) == []


def test_a_real_name_is_swapped_in_context():
    assert swapped("Steven Spielberg directs a film .") == ["Steven Garcia directs a film ."]
    assert swapped("Spielberg directs .") == ["Garcia directs ."]
    assert swapped("a story written by Stephen King .") == ["a story written by Stephen Garcia ."]
    assert swapped("Queen Sophia of Spain smiled .") == ["Queen Garcia of Spain smiled ."]
    (made,) = name_swaps("a story written by Stephen King .", per_name=1)
    assert made.edit.original == "King" and made.kind == "keeps"
    assert "'Stephen King'" in made.rationale


def test_name_swaps_are_deterministic():
    text = "Russell is terrific as coach Mel Brooks , and Barbara Kruger is fine ."
    first = name_swaps(text)
    assert first == name_swaps(text)
    assert [p.edit.original for p in first] == [
        "Russell",
        "Russell",
        "Brooks",
        "Brooks",
        "Kruger",
        "Kruger",
    ]
