"""Guidance for breakers: which starter originals lie near the hosted systems' decision
boundaries, which kind of edit to try there, and who may see it.

Everything here is read from cells that already exist (the ``Prediction`` rows of the starter
set that validation and imports compute for every ready hosted version): asking again after a
system became ready or was replaced recomputes the ranking with no ``gpu`` task. The model
work of suggestions and draft checks (``guidance_suggest``) runs on a ``gpu`` worker.

The rule (also in the app's README):

- each ready hosted system ranks the starter originals by its λmax: the **percentile** of an
  original is its average rank among the originals the system has λmax for, scaled to [0, 1]
  ((rank − 1) / (n − 1), ties sharing their mean rank; 1 = the system's most fragile
  original, 0.5 when it has a single one);
- an original's **boundary score** is the mean of the systems' percentiles (over the systems
  that have its λmax; 0 when none has); **rank** 1 is the highest score, ties broken by more
  systems disagreeing with the majority label, then by starter order. Ranks are over the whole
  starter set for the systems asked for, so filtering by label keeps them;
- **strategy**: ``label_preserving`` (synonyms, names, paraphrase, typos) when the boundary
  score is at least ``NEAR_BOUNDARY`` or the systems disagree on the label, else
  ``label_changing`` (negation, contrast, sarcasm). On human minimal pairs the original's
  λmax predicts the *prediction* moving: near the boundary an edit that keeps the gold label
  breaks most often; far from it, the systems are likeliest to miss an edit that flips it;
- **words**: each system's stored edit leverage (the first-order KL of deleting a word,
  ``fim_engine.FisherResult.leverage``) as its share of the text's total, averaged over the
  systems that have it, on the words of the first system (by id) that stored any.
"""

from __future__ import annotations

import bisect
import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError

from bibi.evaluation.matrix import active_versions
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Dataset, Example, SharedTask, Team
from bibi.systems.models import Prediction, System

logger = logging.getLogger(__name__)

LABEL_PRESERVING = "label_preserving"
LABEL_CHANGING = "label_changing"
STRATEGIES = (LABEL_PRESERVING, LABEL_CHANGING)
# A boundary score at or above this (the systems' median original, on average) counts as near.
NEAR_BOUNDARY = 0.5
ORDERS = ("boundary", "confidence")
# Labels with an obvious opposite on a label set larger than two (``changed_label``).
POLARITY = {"positive": "negative", "negative": "positive", "pos": "neg", "neg": "pos"}

STRATEGY_ADVICE = {
    LABEL_PRESERVING: (
        "Near the boundary: keep the gold label and make a small change the systems should "
        "ignore (a synonym, another name, a paraphrase, a typo). Such edits break "
        "near-boundary originals most often."
    ),
    LABEL_CHANGING: (
        "Far from the boundary: the systems are confident here. Flip the gold label with an "
        "edit they may fail to follow (a negation, a contrast, sarcasm)."
    ),
}
# Words in a task's strategy-tag names that each strategy's edits belong to (the 2017 taxonomy:
# typos and names are morphosyntax and world knowledge; negation is morphosyntax too).
_STRATEGY_TAG_WORDS = {
    LABEL_PRESERVING: (
        "morpho",
        "syntax",
        "semantic",
        "world",
        "knowledge",
        "synonym",
        "paraphrase",
        "typo",
        "name",
        "lexical",
    ),
    LABEL_CHANGING: (
        "morpho",
        "syntax",
        "semantic",
        "pragmatic",
        "negation",
        "contrast",
        "sarcasm",
        "irony",
        "antonym",
    ),
}


@dataclass(frozen=True)
class SystemView:
    """One ready hosted system's view of one original."""

    system_id: int
    system_name: str  # its name to the organizers and its team, else "system <id>"
    team_name: str  # the team's display name (an anonymous team's alias unless the viewer may)
    version_id: int
    label: str
    confidence: float  # the largest probability
    lambda_max: float
    percentile: float  # λmax percentile rank in [0, 1] within the starter set


@dataclass(frozen=True)
class WordLeverage:
    """A word of the original: its text, character span and aggregated edit leverage (the
    mean over systems of its share of the text's deletion leverage; None when not stored)."""

    text: str
    start: int
    end: int
    leverage: float | None


@dataclass(frozen=True)
class RankedOriginal:
    example: Example  # the starter-set Example row
    rank: int  # 1 = nearest the boundary
    boundary_score: float  # mean of the systems' λmax percentiles, in [0, 1]
    disagreements: int  # systems whose label differs from the majority
    strategy: str  # "label_preserving" | "label_changing"
    strategy_tags: tuple[str, ...]  # the task's strategy-tag names it maps to
    systems: tuple[SystemView, ...]
    words: tuple[WordLeverage, ...]

    @property
    def confidence(self) -> float:
        """The systems' mean confidence (NaN without systems): the baseline beside λmax."""
        if not self.systems:
            return math.nan
        return sum(view.confidence for view in self.systems) / len(self.systems)

    @property
    def advice(self) -> str:
        return STRATEGY_ADVICE[self.strategy]


# --- Who sees guidance -----------------------------------------------------------------------


@dataclass(frozen=True)
class GuidanceSight:
    """What one user may see of a task's guidance, asked once per request."""

    viewer: task_selectors.Viewer
    allowed: bool
    per_system: bool

    def team_name(self, team: Team) -> str:
        return self.viewer.team_name(team)

    def sees_system_name(self, system: System) -> bool:
        return self.viewer.sees_team_private(system.team)


def team_name(team: Team, sight: GuidanceSight | None) -> str:
    """The team as the viewer may name it (an anonymous team's alias without a viewer)."""
    return sight.team_name(team) if sight is not None else team.public_name


def system_name(system: System, sight: GuidanceSight | None) -> str:
    """A system's name is its team's private record (``bibi.systems.selectors``): the
    organizers and the team read it, everyone else (and a caller without a viewer) reads
    ``system <id>``."""
    if sight is not None and sight.sees_system_name(system):
        return system.name
    return f"system {system.id}"


def guidance_sight(
    *, user: Any, shared_task: SharedTask, viewer: task_selectors.Viewer | None = None
) -> GuidanceSight:
    """``guidance_visibility``: ``organizers`` (them only), ``breakers`` (and the members of
    breaker teams), ``public`` (everyone who can see the task). Per-system predictions go to
    the organizers always, to the others only with ``guidance_shows_systems``. A page that
    has its ``viewer`` passes it (no query then, for a task it found visible)."""
    if viewer is None:
        viewer = task_selectors.viewer_get(user=user, shared_task=shared_task)
        visible = task_selectors.can_view_shared_task(user=user, shared_task=shared_task)
    else:
        visible = True
    return sight_of(viewer, shared_task, task_visible=visible)


def sight_of(
    viewer: task_selectors.Viewer, shared_task: SharedTask, *, task_visible: bool = True
) -> GuidanceSight:
    """The rule of ``guidance_sight`` for a known viewer (no query)."""
    Visibility = SharedTask.GuidanceVisibility
    visibility = shared_task.guidance_visibility
    if viewer.is_organizer:
        allowed = True
    elif visibility == Visibility.PUBLIC:
        allowed = task_visible
    elif visibility == Visibility.BREAKERS:
        allowed = viewer.team is not None and viewer.team.kind == Team.Kind.BREAKER
    else:
        allowed = False
    per_system = allowed and (viewer.is_organizer or shared_task.guidance_shows_systems)
    return GuidanceSight(viewer=viewer, allowed=allowed, per_system=per_system)


def guidance_sight_require(
    *, user: Any, shared_task: SharedTask, viewer: task_selectors.Viewer | None = None
) -> GuidanceSight:
    """``guidance_sight``, or ``PermissionDenied`` saying who sees this task's guidance."""
    sight = guidance_sight(user=user, shared_task=shared_task, viewer=viewer)
    if not sight.allowed:
        raise PermissionDenied(_refusal(shared_task))
    return sight


def _refusal(shared_task: SharedTask) -> str:
    Visibility = SharedTask.GuidanceVisibility
    if shared_task.guidance_visibility == Visibility.ORGANIZERS:
        return "This task shows its guidance to its organizers only."
    return "This task shows its guidance to its organizers and breaker teams only."


# --- The ranking -----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cell:
    label: str
    confidence: float
    lambda_max: float
    leverage: list[list[Any]] | None


def ranking_systems(
    *, shared_task: SharedTask, system_ids: Iterable[int] | None = None
) -> list[System]:
    """The task's ready hosted systems (active version ready), by id, with team and version.

    Raises ``ValidationError`` naming any id that is not one of them.
    """
    ready = {
        version.system_id for version in active_versions(shared_task=shared_task) if version.hosted
    }
    if system_ids is not None:
        wanted = {int(system_id) for system_id in system_ids}
        unknown = sorted(wanted - ready)
        if unknown:
            raise ValidationError(
                {
                    "system": f"Not a ready hosted system of this task: "
                    f"{', '.join(map(str, unknown))}."
                }
            )
        ready = wanted
    return list(
        System.objects.filter(id__in=ready).select_related("team", "active_version").order_by("id")
    )


def boundary_ranking(
    shared_task: SharedTask,
    *,
    system_ids: Iterable[int] | None = None,
    label: str | None = None,
    order: str = "boundary",
    sight: GuidanceSight | None = None,
    with_words: bool = True,
) -> list[RankedOriginal]:
    """The starter originals ranked by how near they lie to the ready hosted systems'
    decision boundaries (module docstring), in ``order``: ``boundary`` (rank 1 first) or
    ``confidence`` (the systems' least confident original first, ties by rank).

    ``system_ids`` limits the systems (default: every ready hosted system); ``label`` keeps
    the originals with that gold label. Team names are those ``sight``'s viewer may read
    (without one, an anonymous team's alias). Costs four queries whatever the size.
    ``with_words=False`` leaves ``words`` empty and reads no leverage (a page of the ranking
    gets its words from ``ranking_words``).

    Raises ``ValidationError`` for an unknown order, label or system.

    Example::

        top = boundary_ranking(shared_task)[0]
        top.example.text, top.boundary_score, [v.label for v in top.systems]
    """
    if order not in ORDERS:
        raise ValidationError({"order": f"Order by one of {', '.join(ORDERS)}, not {order!r}."})
    if label is not None and label not in shared_task.labels:
        raise ValidationError(
            {"label": f"{label!r} is not a label of this task ({', '.join(shared_task.labels)})."}
        )
    systems = ranking_systems(shared_task=shared_task, system_ids=system_ids)
    examples = list(
        Example.objects.filter(
            dataset__shared_task=shared_task, dataset__split=Dataset.Split.STARTER
        ).order_by("position", "id")
    )
    cells = _starter_cells(systems, leverage=with_words)
    percentiles = {
        system.id: _percentiles({eid: cell.lambda_max for eid, cell in cells[system.id].items()})
        for system in systems
    }

    tags = tuple(shared_task.strategy_tags)
    unranked = []
    for example in examples:
        views = tuple(
            SystemView(
                system_id=system.id,
                system_name=system_name(system, sight),
                team_name=team_name(system.team, sight),
                version_id=system.active_version_id or 0,
                label=cell.label,
                confidence=cell.confidence,
                lambda_max=cell.lambda_max,
                percentile=percentiles[system.id][example.id],
            )
            for system in systems
            if (cell := cells[system.id].get(example.id)) is not None
        )
        score = sum(view.percentile for view in views) / len(views) if views else 0.0
        disagreements = _disagreements(view.label for view in views)
        strategy = LABEL_PRESERVING if score >= NEAR_BOUNDARY or disagreements else LABEL_CHANGING
        words = _words(
            example.text,
            [cell.leverage for s in systems if (cell := cells[s.id].get(example.id))],
        )
        unranked.append((example, score, disagreements, strategy, views, words))

    unranked.sort(key=lambda row: (-row[1], -row[2], row[0].position, row[0].id))
    ranking = [
        RankedOriginal(
            example=example,
            rank=rank,
            boundary_score=score,
            disagreements=disagreements,
            strategy=strategy,
            strategy_tags=strategy_tags(strategy, tags),
            systems=views,
            words=words,
        )
        for rank, (example, score, disagreements, strategy, views, words) in enumerate(
            unranked, start=1
        )
    ]
    if label is not None:
        ranking = [original for original in ranking if original.example.label == label]
    if order == "confidence":
        ranking.sort(
            key=lambda original: (
                math.isnan(original.confidence),
                0.0 if math.isnan(original.confidence) else original.confidence,
                original.rank,
            )
        )
    return ranking


def strategy_tags(strategy: str, tags: Sequence[str]) -> tuple[str, ...]:
    """The task's tag names that ``strategy``'s edits belong to (by the words in their names;
    a task with tags of its own naming may get none)."""
    words = _STRATEGY_TAG_WORDS[strategy]
    return tuple(tag for tag in tags if any(word in tag.lower() for word in words))


def ranking_words(originals: Sequence[RankedOriginal]) -> list[RankedOriginal]:
    """``originals`` with their ``words`` (one query): for a page of a ranking made with
    ``with_words=False``."""
    versions = {view.version_id for original in originals for view in original.systems}
    rows = Prediction.objects.filter(
        system_version_id__in=versions,
        source=Prediction.Source.STARTER,
        example_id__in=[original.example.id for original in originals],
    ).values_list("system_version_id", "example_id", "leverage")
    leverage = {(version_id, example_id): value for version_id, example_id, value in rows}
    return [
        replace(
            original,
            words=_words(
                original.example.text,
                [leverage.get((view.version_id, original.example.id)) for view in original.systems],
            ),
        )
        for original in originals
    ]


def _starter_cells(systems: list[System], *, leverage: bool = True) -> dict[int, dict[int, _Cell]]:
    """system id → starter example id → its active version's cell (with λmax; its leverage
    only if asked for: decoding it is most of the ranking's time)."""
    by_version = {system.active_version_id: system.id for system in systems}
    cells: dict[int, dict[int, _Cell]] = {system.id: {} for system in systems}
    rows = Prediction.objects.filter(
        system_version_id__in=list(by_version),
        source=Prediction.Source.STARTER,
        example__isnull=False,
        lambda_max__isnull=False,
    ).values_list(
        "system_version_id",
        "example_id",
        "label",
        "probabilities",
        "lambda_max",
        "leverage" if leverage else "lambda_max",
    )
    for version_id, example_id, label, probabilities, lambda_max, words in rows.iterator(
        chunk_size=2000
    ):
        confidence = max(probabilities.values()) if probabilities else math.nan
        cells[by_version[version_id]][example_id] = _Cell(
            label, float(confidence), float(lambda_max), words if leverage else None
        )
    return cells


def _percentiles(values: dict[int, float]) -> dict[int, float]:
    """Each key's percentile rank of its value in [0, 1], ties sharing their mean rank."""
    if not values:
        return {}
    if len(values) == 1:
        return dict.fromkeys(values, 0.5)
    ordered = sorted(values.items(), key=lambda item: item[1])
    scale = len(ordered) - 1
    result: dict[int, float] = {}
    start = 0
    while start < len(ordered):
        end = start
        while end + 1 < len(ordered) and ordered[end + 1][1] == ordered[start][1]:
            end += 1
        mean_rank = (start + end) / 2
        for key, _ in ordered[start : end + 1]:
            result[key] = mean_rank / scale
        start = end + 1
    return result


def _disagreements(labels: Iterable[str]) -> int:
    counts = Counter(labels)
    if not counts:
        return 0
    return sum(counts.values()) - counts.most_common(1)[0][1]


def _located(text: str, leverage: list[list[Any]]) -> list[tuple[int, int, float]]:
    """The character spans of a system's leverage words in ``text``, found in order, ignoring
    case (a word a tokenizer changed beyond case is skipped)."""
    lowered = text.lower()
    # Lowercasing keeps offsets but for a few characters (e.g. "İ"); then search the text as is.
    haystack = lowered if len(lowered) == len(text) else text
    found = []
    cursor = 0
    for word, score in leverage:
        needle = str(word)
        if not needle:
            continue
        start = haystack.find(needle.lower() if haystack is lowered else needle, cursor)
        if start < 0:
            continue
        cursor = start + len(needle)
        found.append((start, cursor, float(score)))
    return found


def _words(text: str, leverages: Sequence[list[list[Any]] | None]) -> tuple[WordLeverage, ...]:
    """Each system's leverage (in system order) as shares, averaged onto the first one's words."""
    located = [_located(text, leverage) for leverage in leverages if leverage]
    if not located:
        return ()
    reference = located[0]
    starts = [start for start, _, _ in reference]
    shares: list[list[float]] = [[] for _ in reference]
    for spans in located:
        total = sum(score for _, _, score in spans)
        if not total > 0:
            continue
        sums = [0.0] * len(reference)
        for start, _, score in spans:
            # A system's word goes to the reference word its first character falls in.
            index = bisect.bisect_right(starts, start) - 1
            if index >= 0 and start < reference[index][1]:
                sums[index] += score
        for index, value in enumerate(sums):
            shares[index].append(value / total)
    return tuple(
        WordLeverage(
            text=text[start:end],
            start=start,
            end=end,
            leverage=sum(share) / len(share) if share else None,
        )
        for (start, end, _), share in zip(reference, shares, strict=True)
    )


# --- Suggestions and draft variants (computed on a gpu worker) -------------------------------


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


def guide_order(percentiles: Mapping[int, float]) -> list[int]:
    """System ids (keys of ``percentiles``, each system's λmax percentile on one original)
    with the original's *guide* first: the system it lies nearest the boundary of (highest
    percentile), ties by id. The guide's eigenvector and leverage place suggested edits."""
    return sorted(percentiles, key=lambda system_id: (-percentiles[system_id], system_id))


def _guide_first(systems: list[System], example: Example) -> list[System]:
    """The systems in ``guide_order`` for the original (one without its λmax last)."""
    cells = _starter_cells(systems, leverage=False)
    percentile = {
        system.id: _percentiles(
            {eid: cell.lambda_max for eid, cell in cells[system.id].items()}
        ).get(example.id, -1.0)
        for system in systems
    }
    by_id = {system.id: system for system in systems}
    return [by_id[system_id] for system_id in guide_order(percentile)]


def _run_on_worker(
    version_ids: list[int], original: str, variant: str | None, request: SuggestRequest
) -> dict[str, Any]:
    from celery.exceptions import TimeoutError as ResultTimeout
    from django.conf import settings
    from kombu.exceptions import OperationalError

    from bibi.evaluation.tasks import guidance_suggest_task

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
