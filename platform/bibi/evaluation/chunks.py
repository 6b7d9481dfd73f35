"""The prediction matrix's cells in chunks: created under the task's lock, finished by workers.

``chunks_create`` cuts the missing cells (of a run, or of new starter and blind-dev examples
through ``triggers.dataset_cells_request``) into ``CellChunk`` rows and sends one
``gpu.cells_compute`` per chunk after commit; ``cell_chunk_finish`` records a computed
chunk, counts the waiting runs' progress and advances them when the task has no open chunk
left. ``shared_task_lock`` serializes this bookkeeping per task.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import F, Sum
from django.db.models.functions import Least
from django.utils import timezone

import scoring
from bibi.evaluation.models import CellChunk, CellFailure, ScoringRun
from bibi.queue import enqueue_on_commit
from bibi.sharedtasks.models import SharedTask
from bibi.systems.models import Prediction, SystemVersion
from bibi.systems.selectors import span_dev_scores
from bibi.tasktypes import LABEL, SPAN, Parts

Status = ScoringRun.Status
Source = Prediction.Source


def shared_task_lock(shared_task: SharedTask) -> SharedTask:
    """Serialize the work bookkeeping of one task: chunk creation and completion.

    Locks are taken in one order, the task's row before its runs' rows, so that a chunk
    finishing and a run advancing never wait for each other in a circle.
    """
    return SharedTask.objects.select_for_update().get(id=shared_task.id)


def message_send(task_name: str, *args: Any) -> None:
    """Send the task registered as ``task_name`` (e.g. ``"gpu.cells_compute"``) with ``args``
    once the current transaction commits. By name: tasks.py imports the services, so they do
    not import it."""
    enqueue_on_commit(task_name, *args)


# --- Missing cells, in chunks ---------------------------------------------------------------


def chunks_create(
    *,
    shared_task: SharedTask,
    missing: dict[int, list[Any]],
    source: str,
    run: ScoringRun | None,
    send: bool,
) -> list[CellChunk]:
    """Chunks for the missing items (texts or example ids) no open chunk covers yet.

    missing: system version id → texts (``source`` pairs; ``[sentence, question]`` in a
    span task) or example ids (starter, blind dev). The caller holds the task's lock (``shared_task_lock``), so two callers never chunk
    the same cell. Chunks are sent to the ``gpu`` queue after commit when ``send``.
    """
    covered: dict[int, set[Any]] = {}
    for version_id, items in CellChunk.objects.filter(
        shared_task=shared_task, source=source, done_at__isnull=True
    ).values_list("system_version_id", "items"):
        covered.setdefault(version_id, set()).update(map(_hashable, items))
    size = max(settings.EVALUATION_CHUNK_SIZE, 1)
    now = timezone.now()
    chunks: list[CellChunk] = []
    for version_id, items in missing.items():
        todo = [item for item in items if _hashable(item) not in covered.get(version_id, ())]
        for start in range(0, len(todo), size):
            part = todo[start : start + size]
            chunks.append(
                CellChunk(
                    shared_task=shared_task,
                    system_version_id=version_id,
                    run=run,
                    source=source,
                    items=part,
                    size=len(part),
                    sent_at=now if send else None,
                    sends=1 if send else 0,
                )
            )
    created = CellChunk.objects.bulk_create(chunks)
    if send:
        for chunk in created:
            message_send("gpu.cells_compute", chunk.id)
    return created


def _hashable(item: Any) -> Any:
    """A chunk item as a set member: a span item ([sentence, question]) as a tuple."""
    return tuple(item) if isinstance(item, list) else item


def open_cells(shared_task: SharedTask, source: str = Source.PAIRS) -> int:
    """How many cells of ``source`` the task's open chunks still owe."""
    return (
        CellChunk.objects.filter(
            shared_task=shared_task, source=source, done_at__isnull=True
        ).aggregate(total=Sum("size"))["total"]
        or 0
    )


@dataclass(frozen=True)
class FailedCell:
    text: str
    text_sha256: str
    reason: str


def cell_chunk_finish(
    *, chunk: CellChunk, computed: int, failures: Sequence[FailedCell]
) -> CellChunk:
    """Record a computed chunk (its cells are written in the same transaction).

    Counts the runs' progress, updates the version's dev scores when its blind-dev cells
    are complete, and advances the task's waiting runs when no pair chunk is left open.
    """
    now = timezone.now()
    shared_task = shared_task_lock(chunk.shared_task)
    if failures:
        CellFailure.objects.bulk_create(
            [
                CellFailure(
                    system_version_id=chunk.system_version_id,
                    source=chunk.source,
                    text=failure.text,
                    text_sha256=failure.text_sha256,
                    reason=failure.reason,
                    run_id=chunk.run_id,
                )
                for failure in failures
            ],
            ignore_conflicts=True,
        )
    chunk.done_at = now
    chunk.computed = computed
    chunk.save(update_fields=["done_at", "computed"])
    if chunk.source == Source.BLIND_DEV:
        still_open = CellChunk.objects.filter(
            system_version_id=chunk.system_version_id,
            source=Source.BLIND_DEV,
            done_at__isnull=True,
        ).exists()
        if not still_open:
            version_dev_scores_update(version=chunk.system_version)
        return chunk
    if chunk.source != Source.PAIRS:
        return chunk
    waiting = ScoringRun.objects.filter(
        shared_task=shared_task, status=Status.WAITING_FOR_CELLS
    ).order_by("id")
    waiting.update(
        cells_done=Least(F("cells_done") + chunk.size, F("cells_needed")), progress_at=now
    )
    if not open_cells(shared_task):
        for run_id in waiting.values_list("id", flat=True):
            message_send("default.scoring_run_advance", run_id)
    return chunk


def version_dev_scores_update(*, version: SystemVersion) -> SystemVersion:
    """The version's dev scores again, from every blind-dev cell it has, as its task's answers
    are scored (``DEV_SCORES``)."""
    return DEV_SCORES.of(version.system.shared_task.kind)(version=version)


def version_label_dev_scores_update(*, version: SystemVersion) -> SystemVersion:
    """A labelled version's dev accuracy and macro-F1 again, from every blind-dev cell."""
    rows = list(
        Prediction.objects.filter(
            system_version=version, source=Source.BLIND_DEV, example__isnull=False
        ).values_list("example__label", "label")
    )
    labels = list(version.system.shared_task.labels)
    if rows:
        gold, predicted = zip(*rows, strict=True)
        scores = scoring.label_scores(labels, gold, predicted)
        version.dev_accuracy, version.dev_macro_f1 = scores.accuracy, scores.macro_f1
    version.dev_count = len(rows)
    version.save(update_fields=["dev_accuracy", "dev_macro_f1", "dev_count"])
    return version


def version_span_dev_scores_update(*, version: SystemVersion) -> SystemVersion:
    """A span version's dev answer accuracy (under the task's answer mode, stored with it) and
    mean token F1 again, from every blind-dev cell (``span_dev_scores``: each distinct cell
    once, against the union of its examples' gold answers)."""
    cells = list(
        Prediction.objects.filter(
            system_version=version, source=Source.BLIND_DEV, example__isnull=False
        ).select_related("example")
    )
    span_dev_scores(shared_task=version.system.shared_task, cells=cells).set_on(version)
    version.save(
        update_fields=[
            "dev_accuracy",
            "dev_token_f1",
            "dev_count",
            "dev_answer_mode",
            "dev_answer_threshold",
        ]
    )
    return version


def dev_scores_stale_update(*, shared_task: SharedTask) -> int:
    """Dev figures counted again where they were computed under another answer rule than the
    task's now (``answer_mode``, ``answer_f1_threshold``: the settings of a type whose
    ``scoring_settings`` has them), or before figures recorded their rule; from the stored
    blind-dev cells, no model runs. Returns how many versions were counted again.

    After an organizer changes the rule (``triggers.dev_scores_after_answer_rule``) and before
    a run scores (``services.scoring_run_score``): dev weights never mix two rules.
    """
    rule = shared_task.kind.scoring_settings(shared_task)
    if "answer_mode" not in rule:
        return 0
    stale = (
        SystemVersion.objects.filter(
            system__shared_task=shared_task, predictions__source=Source.BLIND_DEV
        )
        .exclude(
            dev_answer_mode=rule["answer_mode"],
            dev_answer_threshold=rule["answer_f1_threshold"],
        )
        .distinct()
        .select_related("system")
        .order_by("id")
    )
    count = 0
    for version in stale:
        version.system.shared_task = shared_task
        version_dev_scores_update(version=version)
        count += 1
    return count


# How a version's dev scores are computed again, by what its task's systems answer.
DEV_SCORES: Parts[Callable[..., SystemVersion]] = Parts("dev scores")
DEV_SCORES.register(LABEL, version_label_dev_scores_update)
DEV_SCORES.register(SPAN, version_span_dev_scores_update)
