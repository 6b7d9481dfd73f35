"""Span suggestions: edits outside the answer keep it (moved to its new offsets) and are
verified by every system's forward pass; edits meant to move it stay unverified."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
import torch

from edits.perturbations import Edit, keyboard_typos, negation_edits
from fim_engine.span_model import SpanPrediction, SpanSystem, load_span_system
from fim_engine.span_suggestions import (
    answers_after,
    answers_stretched,
    changed_stretch,
    check_span_variant,
    predicate_span,
    span_perturbations,
    span_suggest,
    word_spans,
)
from scoring.answers import answer_scores

SENTENCE = "the film is fun and witty , and the cast was charming ."
QUESTION = "what is fun ?"
ANSWER = {"start": 0, "end": 8, "text": "the film"}


@pytest.fixture(scope="module")
def systems(tmp_path_factory: pytest.TempPathFactory, builders: ModuleType) -> dict:
    from transformers import BertForQuestionAnswering

    loaded: dict[str, SpanSystem] = {}
    for seed in (5, 6):
        torch.manual_seed(seed)
        out: Path = tmp_path_factory.mktemp(f"tiny-qa-{seed}")
        BertForQuestionAnswering(builders.tiny_bert_config(2)).save_pretrained(out)
        builders.tiny_tokenizer().save_pretrained(out)
        loaded[f"qa{seed}"] = load_span_system(out, device="cpu", max_answer_tokens=4)
    return loaded


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (Edit(9, 11, "is", "was"), [(0, 8)]),  # after the answer: it stays
        (Edit(0, 3, "the", "a"), None),  # inside it: it moves
        (Edit(8, 8, "", " itself"), [(0, 8)]),  # inserted at its end: outside
        (Edit(4, 4, "", "new "), None),  # inserted strictly inside
    ],
)
def test_answers_after_an_edit(edit, expected):
    moved = answers_after(edit, [ANSWER])
    assert (None if moved is None else [(a["start"], a["end"]) for a in moved]) == expected


def test_an_answer_after_the_edit_moves_by_its_change_of_length():
    answer = {"start": 36, "end": 40, "text": "cast"}
    edit = Edit(12, 15, "fun", "enjoyable")
    (moved,) = answers_after(edit, [answer])
    assert edit.apply(SENTENCE)[moved["start"] : moved["end"]] == "cast"


def test_word_spans_follow_the_sentence():
    assert word_spans("a b a", ["a", "b", "a"]) == [(0, 1), (2, 3), (4, 5)]


def test_suggestions_keep_the_answer_outside_it_and_are_verified_by_a_forward_pass(systems):
    candidates = keyboard_typos(SENTENCE) + negation_edits(SENTENCE)
    suggestions = span_suggest(systems, QUESTION, SENTENCE, [ANSWER], candidates, top_k=4)
    keeping = [s for s in suggestions if s.keeps_answer]
    moving = [s for s in suggestions if not s.keeps_answer]
    assert len(keeping) == 4 and len(moving) == 4
    assert suggestions == keeping + moving
    for group in (keeping, moving):
        assert [s.leverage for s in group] == sorted((s.leverage for s in group), reverse=True)

    for suggestion in keeping:
        (answer,) = suggestion.answers
        assert suggestion.text[answer["start"] : answer["end"]] == "the film"
        assert suggestion.edit.start >= ANSWER["end"] or suggestion.edit.end <= ANSWER["start"]
        for outcome in suggestion.outcomes:
            system = systems[outcome.system]
            variant = system.predict([QUESTION], [suggestion.text])[0]
            assert (outcome.variant.start, outcome.variant.end) == (variant.start, variant.end)
            expected = answer_scores(
                pd.DataFrame({"system": ["s"], "item": [0], "text": [variant.text]}),
                pd.DataFrame({"item": [0], "text": ["the film"]}),
            )["correct"].iloc[0]
            assert outcome.right_after == bool(expected)
        assert set(suggestion.breaks) == {
            o.system for o in suggestion.outcomes if o.right_before and not o.right_after
        }

    for suggestion in moving:
        # Unverified: the variant's answer is for a person to give.
        assert suggestion.answers == () and suggestion.breaks == ()
        assert all(outcome.right_after is None for outcome in suggestion.outcomes)
        touches = answers_after(suggestion.edit, [ANSWER]) is None
        assert touches or suggestion.source == "negation"


def test_the_guide_leverage_ranks_the_edits(systems):
    guide = systems["qa5"]
    fisher = guide.fisher([QUESTION], [SENTENCE])[0]
    spans = word_spans(SENTENCE, [w for w, _ in fisher.leverage])
    suggestions = span_suggest(systems, QUESTION, SENTENCE, [ANSWER], keyboard_typos(SENTENCE))
    top = suggestions[0]
    edited = [
        kl
        for (a, b), (_, kl) in zip(spans, fisher.leverage, strict=True)
        if a < top.edit.end and top.edit.start < b
    ]
    assert top.leverage == pytest.approx(sum(edited))
    # keyboard_typos edits the words of three letters or more.
    outside = [
        kl
        for (a, _), (word, kl) in zip(spans, fisher.leverage, strict=True)
        if a >= ANSWER["end"] and len(word) >= 3
    ]
    assert top.leverage == pytest.approx(max(outside))


def test_the_answers_a_caller_already_has_on_the_original_are_used_as_given(systems):
    candidates = keyboard_typos(SENTENCE)
    # Answers no tiny random model gives: the outcomes can only have them from the caller.
    given = {
        "qa5": SpanPrediction(0, 8, "the film", 1.0, False),
        "qa6": SpanPrediction(45, 53, "charming", 1.0, False),
    }
    suggestions = span_suggest(
        systems, QUESTION, SENTENCE, [ANSWER], candidates, top_k=2, originals=given
    )
    assert suggestions
    for suggestion in suggestions:
        outcomes = {o.system: o for o in suggestion.outcomes}
        assert {name: o.original for name, o in outcomes.items()} == given
        assert (outcomes["qa5"].right_before, outcomes["qa6"].right_before) == (True, False)
    with pytest.raises(ValueError, match="every system"):
        span_suggest(
            systems, QUESTION, SENTENCE, [ANSWER], candidates, originals={"qa5": given["qa5"]}
        )


@pytest.mark.parametrize(
    ("variant", "edit"),
    [
        ("the film is great and witty , and the cast was charming .", (12, 15, "fun", "great")),
        ("the film is fun , and the cast was charming .", (16, 26, "and witty ", "")),
        ("the new film is fun and witty , and the cast was charming .", (4, 4, "", "new ")),
    ],
)
def test_the_changed_stretch_of_a_draft(variant, edit):
    found = changed_stretch(SENTENCE, variant)
    assert (found.start, found.end, found.original, found.replacement) == edit
    assert found.apply(SENTENCE) == variant


def test_an_answer_the_edit_touches_is_stretched_over_it_and_others_move():
    cast = {"start": 36, "end": 44, "text": "cast was"}
    edit = Edit(4, 8, "film", "new movie")
    variant = edit.apply(SENTENCE)
    stretched = answers_stretched(edit, [ANSWER, cast], variant)
    assert [a["text"] for a in stretched] == ["the new movie", "cast was"]


def test_a_draft_is_judged_against_given_moved_or_no_answers(systems):
    kept = "the film is great and witty , and the cast was charming ."
    moved = check_span_variant(systems, QUESTION, SENTENCE, [ANSWER], kept)
    assert moved.answers_from == "moved" and moved.answers == (ANSWER,)
    touched = "a film is fun and witty , and the cast was charming ."
    unknown = check_span_variant(systems, QUESTION, SENTENCE, [ANSWER], touched)
    assert unknown.answers is None and unknown.answers_from is None
    given = check_span_variant(
        systems, QUESTION, SENTENCE, [ANSWER], touched, [{"start": 0, "end": 6, "text": "a film"}]
    )
    assert given.answers_from == "given"
    for check in (moved, unknown, given):
        for outcome in check.outcomes:
            before, after = systems[outcome.system].predict(
                [QUESTION] * 2, [SENTENCE, check.variant]
            )
            assert (outcome.original, outcome.variant) == (before, after)
            assert (outcome.right_after is None) is (check.answers is None)
            if check.answers is not None:
                gold = pd.DataFrame([(0, a["text"], a["start"], a["end"]) for a in check.answers])
                gold.columns = ["item", "text", "start", "end"]
                frame = pd.DataFrame([("s", 0, after.text, after.start, after.end)])
                frame.columns = ["system", "item", "text", "start", "end"]
                assert outcome.right_after is bool(answer_scores(frame, gold)["correct"].iloc[0])


def test_the_predicate_the_question_asks_about_is_never_edited():
    verb = predicate_span(SENTENCE, 5, "witty")
    assert verb is not None and SENTENCE[verb[0] : verb[1]] == "witty"
    assert predicate_span(SENTENCE, 5, "fun") is None  # not the token there: nothing guarded
    every = span_perturbations(SENTENCE, wordnet=None)
    guarded = span_perturbations(SENTENCE, wordnet=None, protect=[verb])
    assert [p for p in every if p.edit.original == "witty"]
    assert guarded == [p for p in every if p.edit.original != "witty"]
