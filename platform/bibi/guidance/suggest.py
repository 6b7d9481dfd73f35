"""Suggestions and draft-variant checks for breakers: the request, the answer named for the
viewer, and the intended labels. The models run on a worker (``bibi.guidance.tasks``,
``gpu.guidance_suggest``), never in the web process; in-process on the embedded default.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError

from bibi.guidance.ranking import guide_order, ranking_systems, starter_percentiles
from bibi.guidance.visibility import GuidanceSight, guidance_sight_require, system_name, team_name
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems.models import System

logger = logging.getLogger(__name__)

# Labels with an obvious opposite on a label set larger than two (``changed_label``).
POLARITY = {"positive": "negative", "negative": "positive", "pos": "neg", "neg": "pos"}


class SuggestionUnavailable(Exception):
    """No worker answered in time (or the broker is away): nothing was computed for the caller."""


@dataclass(frozen=True)
class SuggestRequest:
    """One request: suggestions for a starter original, or a check of a draft ``variant_text``
    of it with the ``variant_label`` the breaker intends (default: the original's)."""

    original_id: str
    variant_text: str | None = None
    variant_label: str | None = None
    system_ids: tuple[int, ...] | None = None
    top_k: int = 5
    words: int = 3


def guidance_suggest(
    *,
    shared_task: SharedTask,
    user: Any,
    request: SuggestRequest,
    viewer: task_selectors.Viewer | None = None,
) -> dict[str, Any]:
    """Verified suggestions for one starter original, or what every ready hosted system does
    with a draft variant of it and whether that would break it given the intended labels.

    The models run in one ``gpu.guidance_suggest`` task (in-process on the embedded default);
    the request waits for it up to ``GUIDANCE_SUGGEST_TIMEOUT`` seconds. Systems are named for
    ``user``; without ``guidance_shows_systems`` (and not an organizer) the answer holds counts
    only, no system's prediction.

    Raises ``PermissionDenied`` (guidance not visible), ``ValidationError`` (an unknown
    original, system or label, an empty or unchanged or too long variant) and
    ``SuggestionUnavailable``.
    """
    sight = guidance_sight_require(user=user, shared_task=shared_task, viewer=viewer)
    example = task_selectors.example_get(
        shared_task=shared_task, split=Dataset.Split.STARTER, external_id=request.original_id
    )
    if example is None:
        raise ValidationError(
            {"original_id": f"{request.original_id!r} is not an original of the starter set."}
        )
    variant = _clean_variant(shared_task, example, request.variant_text)
    variant_label = request.variant_label or example.label
    if variant_label not in shared_task.labels:
        raise ValidationError(
            {
                "variant_label": f"{variant_label!r} is not a label of this task "
                f"({', '.join(shared_task.labels)})."
            }
        )
    for name, value, most in (("top_k", request.top_k, 20), ("words", request.words, 10)):
        if not 1 <= value <= most:
            raise ValidationError({name: f"Give a number from 1 to {most}."})
    if request.system_ids is not None and not sight.per_system:
        raise PermissionDenied("This task shows the ranking only, not per-system guidance.")
    systems = ranking_systems(shared_task=shared_task, system_ids=request.system_ids)
    if not systems:
        raise ValidationError(
            {"system": "This task has no ready hosted system to run the text through yet."}
        )
    systems = _guide_first(systems, example)
    payload = _run_on_worker(
        [system.active_version_id or 0 for system in systems], example.text, variant, request
    )
    if "error" in payload:
        raise SuggestionUnavailable(f"A system could not run: {payload['error']}")
    by_version = {str(system.active_version_id): system for system in systems}
    original = {"id": example.external_id, "text": example.text, "label": example.label}
    if variant is not None:
        return _draft_answer(sight, payload["check"], by_version, original, variant_label)
    return _suggestion_answer(
        sight, payload["report"], payload["sources"], by_version, original, shared_task.labels
    )


def _clean_variant(shared_task: SharedTask, example: Example, text: str | None) -> str | None:
    if text is None:
        return None
    variant = text.strip()
    if not variant:
        raise ValidationError({"variant_text": "The variant is empty."})
    if variant == example.text.strip():
        raise ValidationError({"variant_text": "The variant is the original unchanged."})
    if len(variant) > shared_task.pair_max_text_chars:
        raise ValidationError(
            {
                "variant_text": f"The variant has {len(variant)} characters; this task allows "
                f"{shared_task.pair_max_text_chars}."
            }
        )
    return variant


def _guide_first(systems: list[System], example: Example) -> list[System]:
    """The systems in ``guide_order`` for the original (one without its λmax last)."""
    percentiles = starter_percentiles(systems)
    percentile = {system.id: percentiles[system.id].get(example.id, -1.0) for system in systems}
    by_id = {system.id: system for system in systems}
    return [by_id[system_id] for system_id in guide_order(percentile)]


def _run_on_worker(
    version_ids: list[int], original: str, variant: str | None, request: SuggestRequest
) -> dict[str, Any]:
    from celery.exceptions import TimeoutError as ResultTimeout
    from django.conf import settings
    from kombu.exceptions import OperationalError

    from bibi.guidance.tasks import guidance_suggest_task

    timeout = settings.GUIDANCE_SUGGEST_TIMEOUT
    result = None
    try:
        result = guidance_suggest_task.apply_async(
            args=(version_ids, original, variant, request.top_k, request.words),
            # Nobody waits longer than this: a message not started by then expires unrun,
            # and a task running past it stops.
            expires=timeout,
            soft_time_limit=timeout,
            time_limit=timeout + 15,
        )
        return result.get(timeout=timeout)
    except OperationalError as error:
        raise SuggestionUnavailable(
            f"The queue is unreachable; try again in a moment ({error})."
        ) from None
    except ResultTimeout:
        raise SuggestionUnavailable(
            f"No model worker answered within {timeout} seconds; they may be busy scoring. "
            "Try again in a moment."
        ) from None
    except Exception as error:  # the worker's failure, not the caller's: say so, log the rest
        logger.exception("gpu.guidance_suggest failed")
        raise SuggestionUnavailable(
            f"The model work failed ({error.__class__.__name__}); the operators have the details."
        ) from None
    finally:
        if result is not None:
            result.forget()


def _name(system: System, sight: GuidanceSight) -> str:
    return f"{team_name(system.team, sight)} / {system_name(system, sight)}"


def would_break(
    original_prediction: str, variant_prediction: str, original_label: str, variant_label: str
) -> bool:
    """The 2017 rule (``scoring.find_breaks`` on whole tables): right on exactly one item."""
    return (original_prediction == original_label) != (variant_prediction == variant_label)


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
        None if variant_label is None else would_break(*predicted, original_label, variant_label)
    )
    return {"system_id": system.id, "system": _name(system, sight), **outcome, "breaks": breaks}


def _draft_answer(
    sight: GuidanceSight,
    check: dict[str, Any],
    by_version: dict[str, System],
    original: dict[str, Any],
    variant_label: str,
) -> dict[str, Any]:
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
        "variant_text": check["variant"],
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
) -> dict[str, Any]:
    predictions = report["predictions"]
    suggestions = []
    for suggestion in report["suggestions"]:
        variant_label = intended_label(suggestion["keeps_label"], original["label"], labels)
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
                **{key: suggestion[key] for key in ("text", "edit", "source", "keeps_label")},
                **{key: suggestion[key] for key in ("rationale", "projection", "predicted_kl")},
                "variant_label": variant_label,
                "changed": sum(outcome["changed"] for outcome in outcomes),
                "breaks": None
                if variant_label is None
                else sum(bool(outcome["breaks"]) for outcome in outcomes),
                "outcomes": outcomes if sight.per_system else [],
            }
        )
    guide = by_version[report["guide"]]
    return {
        "original": original,
        "guide": {"system_id": guide.id, "system": _name(guide, sight)}
        if sight.per_system
        else None,
        "lambda_max": report["lambda_max"] if sight.per_system else None,
        "leverage": report["leverage"],
        "sources": sources,
        "predictions": [
            {"system_id": by_version[vid].id, "system": _name(by_version[vid], sight), **prediction}
            for vid, prediction in predictions.items()
        ]
        if sight.per_system
        else [],
        "suggestions": suggestions,
    }


def intended_label(keeps_label: bool, original_label: str, labels: Sequence[str]) -> str | None:
    """The gold label a suggestion is meant to carry: the original's when it keeps the label,
    else ``changed_label`` (None when that is not known)."""
    return original_label if keeps_label else changed_label(original_label, labels)


def changed_label(label: str, labels: Sequence[str]) -> str | None:
    """The gold label of a label-changing edit of an original labelled ``label``: the other
    label of a binary task, the opposite of a polarity pair (``POLARITY``, any case) on a
    larger label set, else None (a negated "neutral" item is not reliably anything).

    >>> changed_label("positive", ["negative", "positive"])
    'negative'
    >>> changed_label("Positive", ["Negative", "Neutral", "Positive"])
    'Negative'
    >>> changed_label("neutral", ["negative", "neutral", "positive"]) is None
    True
    """
    if len(labels) == 2:
        return labels[1] if label == labels[0] else labels[0]
    opposite = POLARITY.get(label.lower())
    return next((other for other in labels if other.lower() == opposite), None)
