"""Guidance for breakers: which starter originals lie near the hosted systems' decision
boundaries, and which kind of edit to try there (who may see it: ``visibility``).

Everything here is read from cells that already exist (the ``Prediction`` rows of the starter
set that validation and imports compute for every ready hosted version): asking again after a
system became ready or was replaced recomputes the ranking with no ``gpu`` task. The model
work of suggestions and draft checks (``suggest.guidance_suggest``) runs on a worker.

The rule (also in the app's README):

- each ready hosted system ranks the starter originals by its λmax (the arithmetic is
  ``scoring.boundary``'s; this module reads the cells): the **percentile** of an original is its average rank among the originals the system has λmax for, scaled to [0, 1]
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
  ``fim_engine.FisherResult.leverage``) as its share of the item's total, averaged over the
  systems that have it, on the words of the first system (by id) that stored any. Each word
  is found in its own text of the item (``WordLeverage.segment``): a sentence pair's stored
  words name their segment (``[word, score, segment]``); a word stored without one is looked
  for in the texts a breaker may edit, in order.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError

import scoring
from bibi.evaluation.matrix import active_versions
from bibi.guidance.visibility import GuidanceSight, system_name, team_name
from bibi.guidance.words import WordLeverage, WordPlaces, item_words
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems.models import Prediction, System

LABEL_PRESERVING = "label_preserving"
LABEL_CHANGING = "label_changing"
STRATEGIES = (LABEL_PRESERVING, LABEL_CHANGING)
# A boundary score at or above this (the systems' median original, on average) counts as near.
NEAR_BOUNDARY = 0.5
ORDERS = ("boundary", "confidence")

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
# What λmax is worth, said beside it (issue 19, measured on held-out pairs): as a predictor of
# "this edit changes the prediction", λmax's AUC is within 0.01-0.03 of plain 1 - confidence.
LAMBDA_NOTE = (
    "λmax is shown beside 1 − confidence, the uncertainty it is compared with: on held-out "
    "pairs, λmax predicted which edits change a system's prediction only 0.01–0.03 (AUC) "
    "better than 1 − confidence does."
)
# How rarely a suggestion verified on one system carries over to others (issue 19).
TRANSFER_NOTE = (
    "A suggestion verified on one system rarely transfers: on two held-out systems, about 16% "
    "of verified suggestions broke them, against a base rate of 13–15% for any edit. Try a "
    "variant on every system before you count on it."
)
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
    label: str  # span tasks: the system's answer text
    confidence: float  # the largest probability (NaN in span tasks: no probabilities)
    lambda_max: float
    percentile: float  # λmax percentile rank in [0, 1] within the starter set

    @property
    def uncertainty(self) -> float:
        """1 − confidence: the plain baseline λmax is shown beside (``LAMBDA_NOTE``)."""
        return 1.0 - self.confidence


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
    def uncertainty(self) -> float:
        """1 − the systems' mean confidence (NaN without systems)."""
        return 1.0 - self.confidence

    @property
    def advice(self) -> str:
        return STRATEGY_ADVICE[self.strategy]


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
    _check_filters(shared_task, order=order, label=label)
    systems = ranking_systems(shared_task=shared_task, system_ids=system_ids)
    examples = list(
        Example.objects.filter(
            dataset__shared_task=shared_task, dataset__split=Dataset.Split.STARTER
        ).order_by("position", "id")
    )
    cells = _starter_cells(systems, leverage=with_words)
    scored = _scored(shared_task, examples, systems, cells, sight)
    ranking = _ranked(scored, tuple(shared_task.strategy_tags))
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


def _check_filters(shared_task: SharedTask, *, order: str, label: str | None) -> None:
    if order not in ORDERS:
        raise ValidationError({"order": f"Order by one of {', '.join(ORDERS)}, not {order!r}."})
    if label is not None and label not in shared_task.labels:
        raise ValidationError(
            {"label": f"{label!r} is not a label of this task ({', '.join(shared_task.labels)})."}
        )


@dataclass(frozen=True)
class _Scored:
    """An original before ranking: its score, disagreements, views and words."""

    example: Example
    score: float
    disagreements: int
    views: tuple[SystemView, ...]
    words: tuple[WordLeverage, ...]


def _scored(
    shared_task: SharedTask,
    examples: list[Example],
    systems: list[System],
    cells: dict[int, dict[int, _Cell]],
    sight: GuidanceSight | None,
) -> list[_Scored]:
    """Each original's systems' views (with their λmax percentiles) and its boundary score."""
    percentiles = {system.id: _percentiles(_lambdas(cells[system.id])) for system in systems}
    rows = []
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
        words = item_words(
            WordPlaces.of(shared_task, example),
            [cell.leverage for s in systems if (cell := cells[s.id].get(example.id))],
        )
        rows.append(
            _Scored(example, 0.0, _disagreements(view.label for view in views), views, words)
        )
    matrix = np.array(
        [[percentiles[s.id].get(e.id, math.nan) for s in systems] for e in examples], dtype=float
    ).reshape(len(examples), len(systems))
    scores = scoring.boundary_scores(matrix)
    return [replace(row, score=float(score)) for row, score in zip(rows, scores, strict=True)]


def _ranked(scored: list[_Scored], tags: tuple[str, ...]) -> list[RankedOriginal]:
    """Rank 1 = highest score; ties to more disagreements, then starter order."""
    scored = sorted(
        scored,
        key=lambda row: (-row.score, -row.disagreements, row.example.position, row.example.id),
    )
    ranking = []
    for rank, row in enumerate(scored, start=1):
        near = row.score >= NEAR_BOUNDARY or row.disagreements
        strategy = LABEL_PRESERVING if near else LABEL_CHANGING
        ranking.append(
            RankedOriginal(
                example=row.example,
                rank=rank,
                boundary_score=row.score,
                disagreements=row.disagreements,
                strategy=strategy,
                strategy_tags=strategy_tags(strategy, tags),
                systems=row.views,
                words=row.words,
            )
        )
    return ranking


def strategy_tags(strategy: str, tags: Sequence[str]) -> tuple[str, ...]:
    """The task's tag names that ``strategy``'s edits belong to (by the words in their names;
    a task with tags of its own naming may get none)."""
    words = _STRATEGY_TAG_WORDS[strategy]
    return tuple(tag for tag in tags if any(word in tag.lower() for word in words))


def ranking_words(
    originals: Sequence[RankedOriginal], *, shared_task: SharedTask
) -> list[RankedOriginal]:
    """``originals`` (of ``shared_task``'s ranking) with their ``words`` (one query): for a page
    of a ranking made with ``with_words=False``."""
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
            words=item_words(
                WordPlaces.of(shared_task, original.example),
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
        "answer_text",
        "probabilities",
        "lambda_max",
        "leverage" if leverage else "lambda_max",
    )
    for version_id, example_id, label, answer, probabilities, lambda_max, words in rows.iterator(
        chunk_size=2000
    ):
        confidence = max(probabilities.values()) if probabilities else math.nan
        # A span cell has no label: its answer is what systems agree or disagree on.
        cells[by_version[version_id]][example_id] = _Cell(
            label or answer, float(confidence), float(lambda_max), words if leverage else None
        )
    return cells


def starter_percentiles(systems: list[System]) -> dict[int, dict[int, float]]:
    """system id → starter example id → its λmax percentile for that system (one query)."""
    cells = _starter_cells(systems, leverage=False)
    return {system.id: _percentiles(_lambdas(cells[system.id])) for system in systems}


def _lambdas(cells: dict[int, _Cell]) -> dict[int, float]:
    return {example_id: cell.lambda_max for example_id, cell in cells.items()}


def _percentiles(values: dict[int, float]) -> dict[int, float]:
    """Each key's percentile rank of its value in [0, 1] (``scoring.percentile_ranks``)."""
    ranks = scoring.percentile_ranks(list(values.values()))
    return {key: float(rank) for key, rank in zip(values, ranks, strict=True)}


def _disagreements(labels: Iterable[str]) -> int:
    counts = Counter(labels)
    if not counts:
        return 0
    return sum(counts.values()) - counts.most_common(1)[0][1]


def guide_order(percentiles: Mapping[int, float]) -> list[int]:
    """System ids (keys of ``percentiles``, each system's λmax percentile on one original)
    with the original's *guide* first: the system it lies nearest the boundary of (highest
    percentile), ties by id. The guide's eigenvector and leverage place suggested edits."""
    return sorted(percentiles, key=lambda system_id: (-percentiles[system_id], system_id))
