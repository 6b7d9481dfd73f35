"""Perturbation generators: each edit is minimal, labelled by intent and explained."""

from __future__ import annotations

import pytest

from fim_engine.perturbations import (
    KEEPS_LABEL,
    antonym_swaps,
    keyboard_typos,
    name_swaps,
    negation_edits,
    synonym_swaps,
)

TEXT = "Russell is terrific as coach Herb Brooks , and the film is n't dull ."


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
    perturbations = generator(TEXT)
    assert perturbations
    for perturbation in perturbations:
        assert_minimal(TEXT, perturbation)


def test_synonyms_keep_the_label_and_antonyms_change_it():
    synonyms = synonym_swaps("a witty film")
    antonyms = antonym_swaps("a good film")
    assert "a humorous film" in [p.text for p in synonyms]
    assert all(p.source == "synonym" and p.keeps_label for p in synonyms)
    assert "a bad film" in [p.text for p in antonyms]
    assert all(p.source == "antonym" and not p.keeps_label for p in antonyms)
    assert "'good'" in antonyms[0].rationale and "change the label" in antonyms[0].rationale


def test_function_words_are_left_alone():
    # WordNet knows "a" as the ångström and "i" as iodine.
    assert all(p.edit.original not in {"a", "i"} for p in synonym_swaps("i saw a film"))


def test_replacements_take_the_case_of_the_word():
    assert "Bad film" in [p.text for p in antonym_swaps("Good film")]
    assert "a BAD film" in [p.text for p in antonym_swaps("a GOOD film")]


def test_name_swaps_find_names_by_wordnet_and_by_capitals_inside_the_text():
    swapped = {p.edit.original for p in name_swaps(TEXT)}
    assert swapped == {"Russell", "Brooks"}
    assert name_swaps("there is hope", per_name=1) == []
    assert [p.text for p in name_swaps("russell is fine", per_name=1)] == ["garcia is fine"]


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
        ("it was dull , never", ["it was not dull , never", "it was dull ,"]),
    ],
)
def test_negation_edits_insert_after_auxiliaries_and_remove_negations(text, expected):
    edits = negation_edits(text)
    assert [p.text for p in edits] == expected
    assert all(p.source == "negation" and not p.keeps_label for p in edits)
