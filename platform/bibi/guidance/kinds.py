"""What guidance does by what a task's systems answer (``GUIDANCE_KINDS``), and how a
worker's answer is named and judged for its viewer: which systems a draft breaks given the
intended labels, and what suggestions claim (``suggestion_claim``: ``edits.claims``' rule).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

import scoring
from bibi.guidance import jobs
from bibi.guidance.ranking import LAMBDA_NOTE, TRANSFER_NOTE
from bibi.guidance.span_guidance import span_answer, span_request
from bibi.guidance.visibility import GuidanceSight, system_name, team_name
from bibi.sharedtasks.models import Example, SharedTask
from bibi.systems.models import System
from bibi.tasktypes import LABEL, SPAN, Parts, TaskType
from edits.claims import Claim, edit_claim, edit_kind
from fim_engine.sentence_pairs import SEGMENTS


@dataclass(frozen=True)
class SuggestRequest:
    """One request: suggestions for a starter original, or a check of a draft ``variant_text``
    of it with the ``variant_label`` the breaker intends (default: the original's). An item of
    two texts (a sentence pair) has its second text's draft in ``variant_text_b``; a text left
    out is the original's (``drafts.clean_variant``)."""

    original_id: str
    variant_text: str | None = None
    variant_text_b: str | None = None
    variant_label: str | None = None
    system_ids: tuple[int, ...] | None = None
    top_k: int = 5
    words: int = 3
    # Span tasks: the variant's answers (offsets into the normalised variant, or texts) and
    # the question, which must be the original's when given.
    variant_answers: tuple[Any, ...] | None = None
    question: str | None = None


def _label_answer(
    record: jobs.JobRecord,
    shared_task: SharedTask,
    sight: GuidanceSight,
    payload: dict[str, Any],
    example: Example,
    by_version: dict[str, System],
) -> dict[str, Any]:
    """A labelled task's answer: the draft judged with the intended labels, or the
    suggestions with the labels they claim. Texts are named by their ``Example`` fields (a
    sentence pair's premise ``text``, hypothesis ``text_b``), a variant's by its ``Pair``
    fields (``variant_text``, ``variant_text_b``)."""
    kind = shared_task.kind
    original = {
        "id": example.external_id,
        **kind.item_fields(kind.item(example)),
        "label": example.label,
    }
    if record.variant is not None:
        variant = _variant_fields(kind.segment_fields, record.variant_texts or (record.variant,))
        check = payload["check"]
        return _draft_answer(sight, check, by_version, (original, variant), record.variant_label)
    return _suggestion_answer(
        sight,
        payload["report"],
        payload["sources"],
        by_version,
        original,
        shared_task.labels,
        kind.segment_fields,
    )


def _variant_fields(fields: Sequence[str], texts: Sequence[str]) -> dict[str, str]:
    """A variant item's texts by the ``Pair`` field that holds each."""
    return {f"variant_{field}": text for field, text in zip(fields, texts, strict=False)}


def suggestion_variant(suggestion: dict[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    """Where a worker's suggestion (``fim_engine.Suggestion.to_dict``) puts its edit, in the
    platform's names: ``segment``, the ``Example`` field of the text it edits (``fields``: the
    task type's segment fields, in the order the model reads them, as fim_engine numbers a
    pair's segments), and ``variant``, the variant's texts by ``Pair`` field (an item of one
    text: ``{"variant_text": text}``)."""
    if "segment" not in suggestion:
        return {"segment": fields[0], "variant": {"variant_text": suggestion["text"]}}
    names = [name for name in SEGMENTS if name in suggestion]
    return {
        "segment": fields[SEGMENTS.index(suggestion["segment"])],
        "variant": _variant_fields(fields, [suggestion[name] for name in names]),
    }


def _span_answer(
    record: jobs.JobRecord,
    shared_task: SharedTask,
    sight: GuidanceSight,
    payload: dict[str, Any],
    example: Example,
    by_version: dict[str, System],
) -> dict[str, Any]:
    names = {vid: (system.id, _name(system, sight)) for vid, system in by_version.items()}
    return span_answer(
        payload, example=example, shared_task=shared_task, names=names, per_system=sight.per_system
    )


def _name(system: System, sight: GuidanceSight) -> str:
    return f"{team_name(system.team, sight)} / {system_name(system, sight)}"


def _judged(
    system: System,
    sight: GuidanceSight,
    outcome: dict[str, Any],
    predicted: tuple[str, str],
    intended: tuple[str, str | None],
) -> dict[str, Any]:
    """One system's outcome named for the viewer, with whether it breaks the system given
    the ``intended`` (original, variant) labels (None when the variant's is not known)."""
    original_label, variant_label = intended
    breaks = (
        None
        if variant_label is None
        else scoring.pair_breaks(original_label, variant_label, *predicted)
    )
    return {"system_id": system.id, "system": _name(system, sight), **outcome, "breaks": breaks}


def _draft_answer(
    sight: GuidanceSight,
    check: dict[str, Any],
    by_version: dict[str, System],
    items: tuple[dict[str, Any], dict[str, str]],
    variant_label: str,
) -> dict[str, Any]:
    original, variant = items
    outcomes = [
        _judged(
            by_version[version_id],
            sight,
            outcome,
            (outcome["original"]["label"], outcome["variant"]["label"]),
            (original["label"], variant_label),
        )
        for version_id, outcome in check["outcomes"].items()
    ]
    return {
        "original": original,
        **variant,
        "variant_label": variant_label,
        "keeps_label": variant_label == original["label"],
        "systems": len(outcomes),
        "changed": sum(outcome["changed"] for outcome in outcomes),
        "breaks": sum(outcome["breaks"] for outcome in outcomes),
        "outcomes": outcomes if sight.per_system else [],
    }


def _suggestion_answer(
    sight: GuidanceSight,
    report: dict[str, Any],
    sources: list[str],
    by_version: dict[str, System],
    original: dict[str, Any],
    labels: Sequence[str],
    fields: Sequence[str],
) -> dict[str, Any]:
    # A probe (an embedding neighbour) claims nothing, not even that it keeps the label.
    predictions = report["predictions"]
    suggestions = []
    for suggestion in report["suggestions"]:
        claim = suggestion_claim(suggestion, original["label"], labels)
        variant_label = claim.label
        outcomes = [
            _judged(
                by_version[version_id],
                sight,
                outcome,
                (predictions[version_id]["label"], outcome["label"]),
                (original["label"], variant_label),
            )
            for version_id, outcome in suggestion["outcomes"].items()
        ]
        suggestions.append(
            {
                **{key: suggestion[key] for key in ("text", "edit", "source")},
                "keeps_label": None if claim.probe else bool(suggestion["keeps_label"]),
                **suggestion_variant(suggestion, fields),
                **{key: suggestion[key] for key in ("rationale", "projection", "predicted_kl")},
                "label_unverified": claim.label_unverified,
                "probe": claim.probe,
                "variant_label": variant_label,
                "changed": sum(outcome["changed"] for outcome in outcomes),
                "breaks": _breaks(variant_label, outcomes),
                "outcomes": outcomes if sight.per_system else [],
            }
        )
    guide = by_version[report["guide"]]
    guide_confidence = max(predictions[report["guide"]]["probabilities"].values(), default=1.0)
    return {
        "original": original,
        "guide": {"system_id": guide.id, "system": _name(guide, sight)}
        if sight.per_system
        else None,
        "lambda_max": report["lambda_max"] if sight.per_system else None,
        "uncertainty": 1.0 - guide_confidence if sight.per_system else None,
        "notes": {"lambda_max": LAMBDA_NOTE, "transfer": TRANSFER_NOTE},
        "leverage": _leverage(report, fields),
        "sources": sources,
        "predictions": [
            {"system_id": by_version[vid].id, "system": _name(by_version[vid], sight), **prediction}
            for vid, prediction in predictions.items()
        ]
        if sight.per_system
        else [],
        "suggestions": suggestions,
    }


def _breaks(variant_label: str | None, outcomes: list[dict[str, Any]]) -> int | None:
    """How many systems a suggestion breaks; None when it claims no label (a probe)."""
    return None if variant_label is None else sum(bool(o["breaks"]) for o in outcomes)


def _leverage(report: dict[str, Any], fields: Sequence[str]) -> list[list[Any]]:
    """The guide's word leverage, ``[word, score]``, with each word's ``Example`` field after
    it for the words of a sentence pair (the report's ``word_segments``)."""
    segments = report.get("word_segments")
    if segments is None:
        return report["leverage"]
    return [
        [word, score, fields[SEGMENTS.index(segment)]]
        for (word, score), segment in zip(report["leverage"], segments, strict=True)
    ]


@dataclass(frozen=True)
class GuidanceKind:
    """What guidance does differently by what a task's systems answer: the task's keyword
    arguments beyond the texts (``request``: the shared task, the original, the draft item or
    None, the request), what the worker reads of an item (``model_input``), which intended
    labels are refused (``label_check``, raising ``ValidationError``) and how the worker's
    payload is named and judged (``answer``)."""

    request: Callable[[SharedTask, Example, tuple[str, ...] | None, SuggestRequest], dict[str, Any]]
    model_input: Callable[[TaskType, Sequence[str]], Any]
    label_check: Callable[[SharedTask, str], None]
    answer: Callable[..., dict[str, Any]]


def _label_in_set(shared_task: SharedTask, label: str) -> None:
    if label not in shared_task.labels:
        raise ValidationError(
            {
                "variant_label": f"{label!r} is not a label of this task "
                f"({', '.join(shared_task.labels)})."
            }
        )


def _label_request(
    shared_task: SharedTask,
    example: Example,
    variant: tuple[str, ...] | None,
    request: SuggestRequest,
) -> dict[str, Any]:
    """The model options of the task's type (a sentence pair's editable segment), if any."""
    options = shared_task.kind.model_options(shared_task)
    return {"options": options} if options else {}


def _span_request(
    shared_task: SharedTask,
    example: Example,
    variant: tuple[str, ...] | None,
    request: SuggestRequest,
) -> dict[str, Any]:
    span = span_request(
        shared_task,
        example,
        variant=None if variant is None else variant[0],
        variant_label=request.variant_label,
        given_answers=request.variant_answers,
        question=request.question,
    )
    return {"span": span}


GUIDANCE_KINDS: Parts[GuidanceKind] = Parts("guidance")
GUIDANCE_KINDS.register(
    LABEL,
    GuidanceKind(
        request=_label_request,
        model_input=lambda kind, item: kind.model_input(item),
        label_check=_label_in_set,
        answer=_label_answer,
    ),
)
# A span task's intended label is refused by ``span_request`` (it has answers instead).
GUIDANCE_KINDS.register(
    SPAN,
    GuidanceKind(
        request=_span_request,
        # The sentence: the question goes with the span arguments.
        model_input=lambda kind, item: item[0],
        label_check=lambda shared_task, label: None,
        answer=_span_answer,
    ),
)


def suggestion_claim(
    suggestion: dict[str, Any], original_label: str, labels: Sequence[str]
) -> Claim:
    """What a worker's suggestion (``fim_engine.Suggestion.to_dict``) claims for a variant of an
    original labelled ``original_label``: the one rule of ``edits.claims``."""
    kind = edit_kind(
        source=suggestion["source"],
        keeps_label=bool(suggestion["keeps_label"]),
        probe=bool(suggestion.get("probe")),
    )
    return edit_claim(kind, original_label=original_label, labels=labels)
