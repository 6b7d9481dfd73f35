"""What a pair or example text, or a name, may hold (``bibi.texts``): invisible edits and
look-alike letters are named; the writing of real languages passes; look-alike names share a
key."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibi.texts import (
    character_name,
    invisible_characters,
    moment_text,
    name_clash_text,
    name_key,
    name_lookalike,
    name_normalize,
    name_problems,
    text_problems,
    unstorable_characters,
)

ENGLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"


@pytest.mark.parametrize(
    "text",
    [
        "Zoë's naïve café, façade and résumé",
        "Москва — столица России",
        "Η Αθήνα είναι όμορφη",
        "東京で寿司を食べる",
        "서울에서 김치를 먹었다",
        "می\u200cخواهم بروم",  # Persian: a zero-width non-joiner between two Arabic letters
        "क्\u200dषमा",  # Devanagari: a zero-width joiner after a virama
        "COVID-19, 5µm, 3rd, ½, H₂O",
        "I 👩\u200d💻 and 🏳\ufe0f\u200d🌈 and 👍🏽 and 1\ufe0f⃣",
        f"Go {ENGLAND}!",
        "tab\tand\nline breaks\r\n",
    ],
)
def test_the_writing_of_real_languages_passes(text):
    assert text_problems(text) == []


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("mo\u200bvie", "U+200B ZERO WIDTH SPACE"),
        ("mo\u200cvie", "U+200C ZERO WIDTH NON-JOINER"),
        ("mo\u200dvie", "U+200D ZERO WIDTH JOINER"),
        ("mo\u00advie", "U+00AD SOFT HYPHEN"),
        ("mo\ufeffvie", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
        ("mo\u202evie", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("mo\u2066vie", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("mo\u200fvie", "U+200F RIGHT-TO-LEFT MARK"),
        ("mo\U000e0067vie", "U+E0067 TAG LATIN SMALL LETTER G"),
        ("mo\x07vie", "U+0007 (a control character)"),
        ("mo\x85vie", "U+0085 (a control character)"),
        ("mo\ud800vie", "U+D800 (a lone surrogate)"),
    ],
)
def test_each_invisible_character_is_named(text, name):
    assert text_problems(text) == [f"has an invisible character: {name}"]


def test_several_invisible_characters_are_named_once_each_then_counted():
    text = "a\u200bb\u200bc\u00add\u202ee\u2060f"
    assert text_problems(text) == [
        "has invisible characters: U+200B ZERO WIDTH SPACE, U+00AD SOFT HYPHEN, "
        "U+202E RIGHT-TO-LEFT OVERRIDE and 1 more"
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "p\u0430yp\u0430l",
            "has a word that mixes Latin and Cyrillic letters: "
            "'p\u0430yp\u0430l' (\u0430 is U+0430 CYRILLIC SMALL LETTER A)",
        ),
        (
            "\u0441\u043eo\u043b",  # Cyrillic with one Latin o
            "has a word that mixes Cyrillic and Latin letters: "
            "'\u0441\u043eo\u043b' (o is U+006F LATIN SMALL LETTER O)",
        ),
        (
            "m\u03bfvie",
            "has a word that mixes Latin and Greek letters: "
            "'m\u03bfvie' (\u03bf is U+03BF GREEK SMALL LETTER OMICRON)",
        ),
    ],
)
def test_a_word_mixing_scripts_is_named_with_its_swapped_letters(text, problem):
    assert text_problems(text) == [problem]


def test_a_rationale_is_checked_for_characters_only():
    assert text_problems("m\u043evie", words=False) == []
    assert text_problems("m\u043evie\u200b", words=False) == [
        "has an invisible character: U+200B ZERO WIDTH SPACE"
    ]


def test_a_joiner_between_latin_letters_or_after_a_lone_emoji_is_refused():
    assert invisible_characters("a\u200cb") == ["U+200C ZERO WIDTH NON-JOINER"]
    assert invisible_characters("👍\u200d!") == ["U+200D ZERO WIDTH JOINER"]
    assert invisible_characters("\u200d👍") == ["U+200D ZERO WIDTH JOINER"]


def test_only_nul_and_lone_surrogates_are_unstorable():
    assert unstorable_characters("a\x00b\udfffc\u200b") == [
        "U+0000 (a control character)",
        "U+DFFF (a lone surrogate)",
    ]
    assert character_name("\u00e9") == "U+00E9 LATIN SMALL LETTER E WITH ACUTE"


@given(st.text(st.characters(codec="ascii", exclude_categories=["Cc"])))
def test_printable_ascii_always_passes(text):
    assert text_problems(text) == []


# --- Names: one rule for teams, aliases and systems ---------------------------------------


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("\uff33\uff54\uff52\uff41\uff57\uff4d\uff41\uff4e", "Strawman"),  # fullwidth letters
        ("Team\u00a0A", "Team A"),  # no-break space
        ("  Team \t A  ", "Team A"),
        ("Strawma\u0301n", "Strawmán"),  # a combining accent, composed
    ],
)
def test_a_name_is_stored_nfkc_normalised(given, stored):
    assert name_normalize(given) == stored


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("Straw\u200bman", "U+200B ZERO WIDTH SPACE"),
        ("Straw\u202eman", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("Straw\u2066man", "U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("St\u0440awman", "U+0440 CYRILLIC SMALL LETTER ER"),
    ],
)
def test_a_name_with_an_invisible_or_look_alike_character_is_refused_naming_it(name, named):
    problem = name_problems(name_normalize(name))
    assert problem is not None and named in problem


@pytest.mark.parametrize("name", ["Москва", "Αθήνα", "東京チーム", "Zoë's naïve team", "Team 42"])
def test_a_name_in_one_script_per_word_passes(name):
    assert name_problems(name_normalize(name)) is None


@pytest.mark.parametrize(
    "lookalike",
    [
        "strawman",
        "STRAWMAN",
        "Strawmán",
        "Strawrnan",
        "\uff33trawman",
        "Straw\u200bman",
    ],
)
def test_look_alike_names_share_a_key(lookalike):
    assert name_key(name_normalize(lookalike)) == name_key("Strawman")


def test_names_that_differ_share_no_key():
    keys = {name_key(name) for name in ["Strawman", "Strawmen", "Straw man", "Москва", "Team 1"]}
    assert len(keys) == 5
    assert name_key("Team-1") == name_key("Team\u2010l") == name_key("TEAM-l")
    assert name_key("ANONYMOUS BUILDER") == name_key("Anonymous builder")


def test_a_clash_names_the_characters_that_make_names_look_alike():
    assert name_lookalike("Team\u2010A", ["Other", "Team-A"]) == "Team-A"
    assert name_lookalike("Team B", ["Other", "Team-A"]) is None
    text = name_clash_text("Team\u2010A", "Team-A", same="same", whose="another team's name")
    assert "'Team\u2010A' looks like 'Team-A', another team's name" in text
    assert "U+2010 HYPHEN" in text
    assert name_clash_text("team-a", "Team-A", same="same", whose="x") == "same"


def test_a_moment_is_written_in_utc_to_the_second():
    from datetime import UTC, datetime, timedelta, timezone

    paris = timezone(timedelta(hours=1))
    assert moment_text(datetime(2025, 3, 1, 13, 0, 5, 999_999, tzinfo=paris)) == (
        "2025-03-01 12:00:05 UTC"
    )
    assert moment_text(datetime(2025, 3, 1, 12, 0, tzinfo=UTC)) == "2025-03-01 12:00:00 UTC"
