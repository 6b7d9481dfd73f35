"""Suggestions and draft checks for span tasks (QA-SRL): the request's span fields checked by
the span pair rules (``bibi.tasktypes.span_extraction.checks``), the worker's payload named and judged.

The worker (``compute.span_guidance_compute``) says which answers are right on each item
(the task's ``answer_mode``); this module applies the break rule (``scoring.break_rule``: right
on exactly one of the two items) only where the variant's gold answers are known: given by
the breaker, or the original's moved by an edit outside every one of them. An edit meant to
move the answer is ``label_unverified`` (``edits.claims``) and claims no break.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.exceptions import ValidationError

import scoring
from bibi.guidance.ranking import LAMBDA_NOTE, TRANSFER_NOTE
from bibi.sharedtasks.models import Example, SharedTask
from bibi.tasktypes.rules import StarterExample
from bibi.tasktypes.span_extraction.checks import question_problem, variant_answers
from edits.claims import edit_claim, edit_kind

# A system named for the viewer: (system id, "team / system"), by version id.
Names = Mapping[str, tuple[int, str]]


def span_request(
    shared_task: SharedTask,
    example: Example,
    *,
    variant: str | None,
    variant_label: str | None,
    given_answers: Sequence[Any] | None,
    question: str | None,
) -> dict[str, Any]:
    """The worker's span arguments for the draft ``variant`` (already cleaned by
    ``drafts.clean_variant``; None: suggestions), or ``ValidationError`` naming the field:
    a label given, another question, answers without a variant or not spans of it."""
    if variant_label:
        raise ValidationError(
            {"variant_label": "A span task has no labels: give the variant's answers instead."}
        )
    item = StarterExample.of(example)
    problem = question_problem(question or "", item)
    if problem:
        raise ValidationError({"question": problem[0].upper() + problem[1:] + "."})
    answers = None
    if variant is None:
        if given_answers is not None:
            raise ValidationError({"variant_answers": "Answers go with a draft variant_text."})
    elif given_answers is not None:
        answers, problems = variant_answers(
            json.dumps(list(given_answers)), variant=variant, original=item
        )
        if problems:
            raise ValidationError({"variant_answers": problems})
    return {
        "question": example.question,
        "predicate": [example.predicate_index, example.predicate],
        "answers": list(example.answers),
        "variant_answers": answers,
        "mode": shared_task.answer_mode,
        "threshold": shared_task.answer_f1_threshold,
    }


def span_original(example: Example) -> dict[str, Any]:
    return {
        "id": example.external_id,
        "text": example.text,
        "question": example.question,
        "answers": list(example.answers),
    }


def span_answer(
    payload: dict[str, Any],
    *,
    example: Example,
    shared_task: SharedTask,
    names: Names,
    per_system: bool,
) -> dict[str, Any]:
    """The worker's payload for a span item, named for the viewer (counts only without
    ``per_system``): a draft check or suggestions (``span-guidance-contract``'s shapes)."""
    head = {
        "task_type": shared_task.task_type,
        "answer_mode": shared_task.answer_mode,
        "original": span_original(example),
    }
    if "check" in payload:
        return {**head, **_draft(payload["check"], names, per_system)}
    return {**head, **_suggestions(payload, names, per_system)}


def _judged(outcomes: Mapping[str, Any], names: Names) -> list[dict[str, Any]]:
    """Each system's outcome with its name and whether the pair breaks it (None when the
    variant's answers are unknown)."""
    judged = []
    for version_id, outcome in outcomes.items():
        system_id, name = names[version_id]
        right_variant = outcome["right_variant"]
        breaks = (
            None
            if right_variant is None
            else bool(scoring.break_rule(outcome["right_original"], right_variant))
        )
        judged.append({"system_id": system_id, "system": name, **outcome, "breaks": breaks})
    return judged


def _counts(outcomes: list[dict[str, Any]], verified: bool) -> dict[str, int | None]:
    return {
        "changed": sum(bool(o["changed"]) for o in outcomes),
        "breaks": sum(bool(o["breaks"]) for o in outcomes) if verified else None,
    }


def _draft(check: dict[str, Any], names: Names, per_system: bool) -> dict[str, Any]:
    outcomes = _judged(check["outcomes"], names)
    verified = check["answers"] is not None
    edit = check["edit"]
    return {
        "variant_text": check["variant"],
        "edit": edit,
        "variant_answers": check["answers"],
        "answers_from": check["answers_from"],
        "verified": verified,
        "unverified_reason": None
        if verified
        else f"The edit ({edit['original']!r} → {edit['replacement']!r}) touches a gold answer: "
        "give the variant's answers (variant_answers) to learn whether it breaks a system.",
        "systems": len(outcomes),
        **_counts(outcomes, verified),
        "outcomes": outcomes if per_system else [],
    }


def _suggestions(payload: dict[str, Any], names: Names, per_system: bool) -> dict[str, Any]:
    suggestions = []
    for suggestion in payload["suggestions"]:
        outcomes = _judged(suggestion["outcomes"], names)
        keeps = bool(suggestion["keeps_answer"])
        # An answer-moving edit changes what the item claims: its answer is a guess.
        claim = edit_claim(edit_kind(source=suggestion["source"], keeps_label=keeps))
        suggestions.append(
            {
                **{key: suggestion[key] for key in ("text", "edit", "source", "rationale")},
                "keeps_answer": keeps,
                "label_unverified": claim.label_unverified,
                "variant_answers": suggestion["answers"],
                "leverage": suggestion["leverage"],
                **_counts(outcomes, keeps),
                "outcomes": outcomes if per_system else [],
            }
        )
    guide_id, guide_name = names[payload["guide"]]
    return {
        "guide": {"system_id": guide_id, "system": guide_name} if per_system else None,
        "lambda_max": payload["lambda_max"] if per_system else None,
        "notes": {"lambda_max": LAMBDA_NOTE, "transfer": TRANSFER_NOTE},
        "leverage": payload["leverage"],
        "sources": payload["sources"],
        "predictions": [
            {"system_id": names[vid][0], "system": names[vid][1], **prediction}
            for vid, prediction in payload["predictions"].items()
        ]
        if per_system
        else [],
        "suggestions": suggestions,
    }
