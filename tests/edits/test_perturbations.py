"""Perturbation generators: each edit is minimal, labelled by intent and explained."""

from __future__ import annotations

import pytest

from edits.claims import KEEPS_LABEL
from edits.perturbations import (
    antonym_swaps,
    keyboard_typos,
    name_swaps,
    negation_edits,
    synonym_swaps,
)

TEXT = "Russell is terrific as coach Herb Brooks , and the film is n't dull ."
# One clause, no negation: where synonyms, antonyms and negation are all allowed.
SIMPLE = "The acting is weak and stale ."


def assert_minimal(text, perturbation):
    edit = perturbation.edit
    assert edit.apply(text) == perturbation.text != text
    assert text[edit.start : edit.end] == edit.original
    assert perturbation.text[: edit.start] == text[: edit.start]
    assert perturbation.text[edit.start + len(edit.replacement) :] == text[edit.end :]
    assert perturbation.keeps_label is KEEPS_LABEL[perturbation.source]
    assert perturbation.rationale


@pytest.mark.parametrize(
    "generator", [synonym_swaps, antonym_swaps, name_swaps, keyboard_typos, negation_edits]
)
def test_every_generator_makes_one_minimal_explained_edit_per_perturbation(generator):
    text = TEXT if generator in (name_swaps, keyboard_typos) else "The films are weak ."
    perturbations = generator(text)
    assert perturbations
    for perturbation in perturbations:
        assert_minimal(text, perturbation)


def test_synonyms_keep_the_label_and_antonyms_change_it():
    synonyms = synonym_swaps("The films are stale .")
    antonyms = antonym_swaps("a good film")
    assert [p.text for p in synonyms] == ["The movies are stale ."]
    assert all(p.source == "synonym" and p.keeps_label for p in synonyms)
    assert [p.text for p in antonyms] == ["a bad film"]
    assert all(p.source == "antonym" and not p.keeps_label for p in antonyms)
    assert "'good'" in antonyms[0].rationale and "change the label" in antonyms[0].rationale


def test_indirect_antonyms_are_gone():
    # WordNet's indirect antonyms: terrific → bad through good, original → last through first.
    assert antonym_swaps("Russell is terrific .") == []
    assert antonym_swaps("The idea is original .") == []
    assert antonym_swaps("an original idea") == []


def test_antonyms_only_in_one_clause_without_negation_or_lists():
    assert [p.text for p in antonym_swaps("The acting is weak .")] == ["The acting is strong ."]
    assert antonym_swaps("The acting is weak , but the story works .") == []
    assert antonym_swaps("The acting is weak and the story is shallow .") == []
    assert antonym_swaps("The acting is not weak .") == []
    # "a strong, boring film" would say two things.
    assert antonym_swaps("It is a weak , boring film .") == []
    # Only adjectives: opposite verbs rarely reverse an opinion (work → idle).
    assert antonym_swaps("It does work .") == []
    # Degree words are no adjectives to reverse ("much weaker" -> "little weaker").
    assert antonym_swaps("The second half is much weaker .") == [
        antonym for antonym in antonym_swaps("The second half is much weaker .")
        if antonym.edit.original == "weaker"
    ]  # fmt: skip


def test_rare_odd_and_misread_substitutes_are_refused():
    # "moving" → "awheel" (zipf 0) and its other rare or odd relatives.
    assert all(
        p.edit.original != "moving"
        for p in synonym_swaps("The film is a charming , funny and moving story .")
    )
    assert synonym_swaps("It is moving .") == []
    # "steals" is a plural noun to WordNet ("a bargain"): as a verb it gets nothing.
    assert all(p.edit.original != "steals" for p in synonym_swaps("He steals the show ."))
    assert all(p.edit.original != "steals" for p in synonym_swaps("The movie steals the show ."))
    # The replacement is inflected as the word was, and fits the article before it.
    assert "The movies were boring ." in [p.text for p in synonym_swaps("The films were boring .")]
    assert all(" a a" not in p.text for p in synonym_swaps("John is a funny man ."))
    # film → picture is refused: a picture is first an image, not a film.
    assert "a picture" not in {p.text for p in synonym_swaps("a film")}
    # Measured on the demo: "start to complete", "three → iii", "Nothing → Zero", "special →
    # particular effects", "never allows up".
    for text in (
        "A real pleasure from start to finish .",
        "I checked my watch three times .",
        "Nothing in this film works .",
        "A thrilling ride that never lets up .",
    ):
        assert synonym_swaps(text) == [], text
    assert all(p.edit.original != "special" for p in synonym_swaps("The special effects work ."))


def test_a_replacement_much_rarer_than_the_word_is_refused():
    # Measured on the demo: "wonderful → howling" and "worth → deserving" are WordNet synonyms
    # more than 1.5 Zipf (about 30 times) rarer than the word; "fantastic" is not.
    swaps = {p.text for p in synonym_swaps("The cast is wonderful .")}
    assert "The cast is howling ." not in swaps
    assert "The cast is fantastic ." in swaps
    assert "It is deserving seeing ." not in {p.text for p in synonym_swaps("It is worth seeing .")}


def test_proper_names_get_no_synonyms():
    # "John" is a toilet to WordNet, whose synonyms would include "can".
    assert all(p.edit.original.lower() != "john" for p in synonym_swaps("Then John came ."))
    assert all(p.edit.original != "john" for p in synonym_swaps("i saw john there ."))
    assert all(p.edit.original != "Hope" for p in synonym_swaps("It stars Bob Hope ."))


def test_function_words_are_left_alone():
    # WordNet knows "a" as the ångström and "i" as iodine.
    assert all(p.edit.original not in {"a", "i"} for p in synonym_swaps("i saw a film"))


def test_replacements_take_the_case_of_the_word():
    assert [p.text for p in antonym_swaps("Weak acting .")] == ["Strong acting ."]
    assert [p.text for p in antonym_swaps("The acting is WEAK .")] == ["The acting is STRONG ."]


def test_name_swaps_find_names_by_wordnet_and_by_capitals_inside_the_text():
    swapped = {p.edit.original for p in name_swaps(TEXT)}
    # "Herb" is a common noun, so "Brooks" (a common word too) is no surname here (issue 32).
    assert swapped == {"Russell"}
    assert {p.edit.original for p in name_swaps(TEXT.replace("Herb", "Mel"))} == {
        "Russell",
        "Brooks",
    }
    assert name_swaps("there is hope", per_name=1) == []
    # A lowercase word is no name whatever WordNet knows of it (issue 32).
    assert name_swaps("russell is fine", per_name=1) == []
    assert [p.text for p in name_swaps("Russell is fine", per_name=1)] == ["Garcia is fine"]


def test_keyboard_typos_are_one_slip_inside_a_word_and_repeatable():
    typos = keyboard_typos("a wonderful movie", per_word=3)
    assert typos == keyboard_typos("a wonderful movie", per_word=3)
    assert typos != keyboard_typos("a wonderful movie", per_word=3, seed=1)
    for typo in typos:
        original, replacement = typo.edit.original, typo.edit.replacement
        assert original in {"wonderful", "movie"}
        assert replacement[0] == original[0] and replacement[-1] == original[-1]
        assert abs(len(replacement) - len(original)) <= 1
    assert len([t for t in typos if t.edit.original == "movie"]) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("it is funny", ["it is not funny"]),
        ("it is n't funny", ["it is funny"]),
        ("It isn't funny.", ["It is funny."]),
        ("I can't stand it", ["I can stand it"]),
        ("i ca n't stand it", ["i can stand it"]),
        ("it is not funny", ["it is funny"]),
        ("never dull", ["dull"]),
        ("The cast has done a good job .", ["The cast has not done a good job ."]),
        ("I did enjoy it .", ["I did not enjoy it ."]),
        # "has" as a main verb: not "It has not its flaws".
        ("It has its flaws .", []),
        ("I loved it .", []),
        # Two clauses: "The performances are not weak and the story is shallow".
        ("The performances are weak and the story is shallow .", []),
        ("It has its flaws , but it works .", []),
        ("It is funny , and the cast is good .", []),
        # A double negative, and "no", which rarely leaves a sentence behind.
        ("It is not bad , and never dull .", []),
        ("There is no plot .", []),
        # Judged on the demo: a relative clause, a head after "to", a listed predicate, a
        # degree word, "without".
        ("Sarah Chen steals every scene she is in .", []),
        ("A fine film that could have been great .", []),
        ("A dull , plodding film that never takes off .", []),
        ("The director seems to have lost interest .", []),
        ("The film is too long and too loud .", []),
        ("The second half is much weaker than the first .", []),
        ("The story is told without any spark .", []),
        (
            "The film is a charming , funny and moving story .",
            ["The film is not a charming , funny and moving story ."],
        ),
    ],
)
def test_negation_edits_insert_after_auxiliaries_and_remove_negations(text, expected):
    edits = negation_edits(text)
    assert [p.text for p in edits] == expected
    assert all(p.source == "negation" and not p.keeps_label for p in edits)


@pytest.mark.parametrize(
    "text",
    [
        # A subordinate or relative clause: the "not" would land in one of two clauses.
        "The film is a delight because the cast is superb .",
        "It encourages knowing laughter at jokes only a insider would get .",
        "It appears that something has been lost in the move to the screen .",
        "The strength of the film is that it never loses its nerve .",
        "The problem with the film is that it lacks focus .",
        "What sets it apart is its concern with the cost of words .",
        "It plays like you could smell the script from miles away .",
        "A routine effort that wo n't do much for the franchise .",
        # Coordinated clauses or verb phrases with their own verb.
        "The humor is forced , and the plot is simply unpleasant .",
        "The director has taken a fine cast and turned it into a bore .",
        "He put his heart into the first film and did n't save any for this one .",
        # A contrast, a dash, a phrase set off by a comma.
        "The cast is great , but the plot is thin .",
        "The film is a train wreck -- a stunning waste of a fine cast .",
        "This is a shameless sham , calculated to cash in on its stars .",
        "At its best , the film is campy fun .",
        "A delightful thriller filled with surprises , the film is an original .",
        # A question, and a quantifier that the "not" would tangle with.
        "Is the time really ripe for another spy spoof ?",
        "Is n't it great ?",
        "Few films this year have been as tender .",
        # A word that needs the negation: "It does amount to anything".
        "It does n't amount to anything .",
    ],
)
def test_no_label_changing_negation_in_a_text_of_several_clauses(text):
    assert negation_edits(text) == []
