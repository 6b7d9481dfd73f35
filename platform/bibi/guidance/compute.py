"""Suggestions and draft-variant checks for breakers: the half of guidance that runs models.

Only the worker imports this module (through ``bibi.guidance.tasks``), so the web process
never loads torch. Models come from the worker's cache (``bibi.systems.runner.version_system``);
``fim_engine.suggest`` and ``fim_engine.check_variant`` do the work. The answer is plain JSON,
keyed by version id, for ``bibi.guidance.suggest`` to name and judge for its caller.
"""

from __future__ import annotations

from typing import Any

import fim_engine
import fim_engine.sentence_pairs
from bibi.systems.errors import ValidationFailed
from bibi.systems.models import SystemVersion
from bibi.systems.runner import model_call, version_span_system, version_system

# An item as a task hands it over: a text, or the list of a sentence pair's two texts.
Given = str | list[str]


def guidance_compute(
    *,
    version_ids: list[int],
    original: Given,
    variant: Given | None,
    top_k: int,
    words: int,
    editable: str | None = None,
) -> dict[str, Any]:
    """``{"check": VariantCheck.to_dict()}`` for a draft ``variant``, else
    ``{"report": SuggestionReport.to_dict(), "sources": [...]}`` for ``original`` with the
    first version as the guide; ``{"error": reason}`` when a model cannot be loaded or run.
    Systems are named by version id. A sentence pair's ``editable`` segment (the task's
    ``model_options``) is where the suggestions edit and what λmax counts."""
    try:
        systems = _loaded(version_ids)
        item = fim_engine.sentence_pairs.as_item(original)
        if variant is not None:
            changed = fim_engine.sentence_pairs.as_item(variant)
            check = model_call(fim_engine.check_variant, item, changed, systems, editable=editable)
            return {"check": check.to_dict()}
        sources = _sources()
        report = model_call(
            fim_engine.suggest,
            item,
            systems,
            top_k=top_k,
            words=words,
            sources=sources,
            editable=editable,
        )
        return {"report": report.to_dict(), "sources": list(sources)}
    except ValidationFailed as failed:
        return {"error": failed.detail}


def guidance_compute_many(
    *,
    version_ids: list[int],
    originals: list[Given],
    top_k: int,
    words: int,
    editable: str | None = None,
) -> list[dict[str, Any]]:
    """``SuggestionReport.to_dict()`` for each of ``originals`` in order, the first version the
    guide, the verifying forward passes batched per system (``fim_engine.suggest_many``); each
    report's ``sources`` says which candidate sources were used. Raises ``ValidationFailed``
    when a model cannot be loaded or run, or a version is no longer ready."""
    systems = _loaded(version_ids)
    sources = _sources()
    items = fim_engine.sentence_pairs.as_items(originals)
    reports = model_call(
        fim_engine.suggest_many,
        items,
        systems,
        top_k=top_k,
        words=words,
        sources=sources,
        editable=editable,
    )
    return [{**report.to_dict(), "sources": list(sources)} for report in reports]


def span_guidance_compute(
    *,
    version_ids: list[int],
    sentence: str,
    variant: str | None,
    top_k: int,
    question: str,
    answers: list[dict[str, Any]],
    variant_answers: list[dict[str, Any]] | None,
    mode: str,
    threshold: float,
    predicate: tuple[int | None, str] = (None, ""),
) -> dict[str, Any]:
    """``guidance_compute`` for a span item: ``{"check": SpanDraftCheck.to_dict()}`` for a
    draft ``variant``, else ``{"suggestions": [SpanSuggestion.to_dict(), ...], "sources",
    "guide", "lambda_max", "leverage", "predictions"}`` with the first version as the guide;
    ``{"error": reason}`` when a model cannot be loaded or run. ``predicate`` (its token
    index and verb) is never edited."""
    judge = {"mode": mode, "threshold": threshold}
    try:
        systems = {
            str(vid): version_span_system(version) for vid, version in _ready(version_ids).items()
        }
        if variant is not None:
            check = model_call(
                fim_engine.check_span_variant,
                systems,
                question,
                sentence,
                answers,
                variant,
                variant_answers,
                **judge,
            )
            return {"check": check.to_dict()}
        item = (question, sentence, answers)
        return _span_suggestions(systems, item, predicate, top_k=top_k, judge=judge)
    except ValidationFailed as failed:
        return {"error": failed.detail}


def _span_suggestions(
    systems: dict[str, fim_engine.SpanSystem],
    item: tuple[str, str, list[dict[str, Any]]],
    predicate: tuple[int | None, str],
    *,
    top_k: int,
    judge: dict[str, Any],
) -> dict[str, Any]:
    """The suggestions' payload for one (question, sentence, answers) item, the first system
    the guide."""
    question, sentence, answers = item
    verb = fim_engine.predicate_span(sentence, *predicate)
    made = fim_engine.span_perturbations(
        sentence, wordnet=_wordnet(), protect=[verb] if verb else []
    )
    guide = next(iter(systems))
    fisher = model_call(systems[guide].fisher, [question], [sentence])[0]
    # Each system answers the original once: the suggestions' outcomes and the payload's
    # predictions are both that answer.
    originals = {
        name: model_call(system.predict, [question], [sentence])[0]
        for name, system in systems.items()
    }
    suggestions = model_call(
        fim_engine.span_suggest,
        systems,
        question,
        sentence,
        answers,
        made,
        top_k=top_k,
        fisher=fisher,
        originals=originals,
        **judge,
    )
    return {
        "suggestions": [suggestion.to_dict() for suggestion in suggestions],
        "sources": sorted({p.source for p in made}),
        "guide": guide,
        "lambda_max": float(fisher.lambda_max),
        "leverage": [[word, float(kl)] for word, kl in fisher.leverage],
        "predictions": _span_predictions(originals, answers, judge),
    }


def _span_predictions(
    originals: dict[str, fim_engine.SpanPrediction],
    answers: list[dict[str, Any]],
    judge: dict[str, Any],
) -> dict[str, dict[str, Any]]:
    """Each system's answer on the original and whether it is right, by version id."""
    right = fim_engine.answers_right(
        {name: [answer] for name, answer in originals.items()}, [answers], **judge
    )
    return {
        name: {
            "answer": {"start": answer.start, "end": answer.end, "text": answer.text},
            "right": right[name][0],
        }
        for name, answer in originals.items()
    }


def _ready(version_ids: list[int]) -> dict[int, SystemVersion]:
    """The ready versions by id, in the order asked; ``ValidationFailed`` if one is not."""
    versions = {
        version.id: version
        for version in SystemVersion.objects.filter(
            id__in=version_ids, status=SystemVersion.Status.READY
        )
    }
    missing = [version_id for version_id in version_ids if version_id not in versions]
    if missing:
        raise ValidationFailed(
            SystemVersion.FailureReason.MODEL_ERROR,
            f"System version(s) {missing} are no longer ready.",
        )
    return {vid: versions[vid] for vid in version_ids}


def _loaded(version_ids: list[int]) -> dict[str, fim_engine.System]:
    """The versions' models by version id, in order, from this worker's cache."""
    return {str(vid): version_system(version) for vid, version in _ready(version_ids).items()}


def _sources() -> tuple[str, ...]:
    """Every source, or the embedding neighbours alone on a worker without WordNet."""
    from fim_engine.suggestions import SUGGESTION_SOURCES

    return SUGGESTION_SOURCES if _wordnet() is not None else ("neighbour",)


def _wordnet() -> Any:
    """WordNet, or None on a worker without it."""
    from edits.errors import WordNetMissingError
    from edits.wordnet import load_wordnet

    try:
        return load_wordnet()
    except WordNetMissingError:
        return None
