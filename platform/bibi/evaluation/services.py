"""Writes of the evaluation app: scoring runs, the cells they wait for, snapshots, publication.

A run's life, each step a task that takes ids (``tasks.py``), sent after commit:

1. ``scoring_run_request`` records a run ``waiting_for_cells`` (a run still waiting serves
   any further request for the task) and sends ``default.scoring_run_advance``;
2. ``scoring_run_advance`` reads the prediction matrix from the database
   (``matrix.pair_matrix``), cuts the missing cells that no open chunk covers into
   ``CellChunk`` rows and sends one ``gpu.cells_compute`` per chunk; with no cell missing it
   moves the run to ``scoring`` and sends ``default.scoring_run_score`` (so a re-score with
   every cell known never touches the ``gpu`` queue);
3. the worker writes a chunk's cells and calls ``cell_chunk_finish``, which counts progress
   and, when the task has no open chunk left, advances its waiting runs again;
4. ``scoring_run_score`` runs ``scoring.score`` and stores the ``Snapshot``: ``done``, or
   ``failed`` with the reason.

Chunks are created under a lock on the task's row, and a chunk covers its cells until it is
done, so two runs asked for at once never compute the same cell. Every step reads what is
owed from the database, so a lost or repeated message costs a delay at most:
``housekeeping.evaluation_housekeep`` (a beat task) resends chunks and steps that made no progress for
``EVALUATION_STALL_TIMEOUT`` seconds.
"""

from __future__ import annotations

import functools
import importlib.metadata
import logging
import subprocess
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.utils import timezone

import scoring
from bibi.evaluation import selectors
from bibi.evaluation.chunks import (
    chunks_create,
    dev_scores_stale_update,
    message_send,
    shared_task_lock,
)
from bibi.evaluation.matrix import PairMatrix, pair_matrix
from bibi.evaluation.models import CellChunk, ScoringRun, Snapshot, SnapshotItem
from bibi.evaluation.reports import (
    ScoringInputs,
    report_items,
    report_tables,
    score_inputs,
    scoring_inputs,
)
from bibi.evaluation.span_reports import span_scoring_inputs
from bibi.evaluation.validated import (
    item_validation,
    no_pairs_reason,
    unvalidated_scores,
    validation_counts,
    validation_record,
    validation_tables_add,
)
from bibi.sharedtasks.models import SharedTask
from bibi.sharedtasks.services import audit_record, organizer_require
from bibi.systems.models import Prediction
from bibi.tasktypes import LABEL, SPAN, Parts

logger = logging.getLogger(__name__)

Status = ScoringRun.Status
Trigger = ScoringRun.Trigger
Source = Prediction.Source


# --- Asking for a run ---------------------------------------------------------------------


# Triggers that report a change to the scored data: only a run that has yet to read the data
# (a waiting one) serves them. Any other request is also served by a run that is scoring.
CHANGE_TRIGGERS = (Trigger.ADJUDICATION, Trigger.VALIDATION, Trigger.VERSION_READY)


def scoring_run_request(
    *,
    shared_task: SharedTask,
    trigger: str,
    actor: AbstractBaseUser | None = None,
    send: bool = True,
) -> ScoringRun:
    """A run of the task that has yet to read its cells: a new one, or the one still waiting.

    Idempotent: requests made at once (an organizer clicking eight times) get one run. A
    waiting run serves every request (one waiting run per task is a database constraint);
    a request that reports no change (``organizer``, ``command``, ``break_closed``) is also
    served by a run that is scoring. ``send=False`` leaves the run to the caller
    (``manage.py score`` works in-process).
    """
    with transaction.atomic():
        shared_task_lock(shared_task)
        serving = _run_serving(shared_task, trigger)
        if serving is not None:
            return serving
        try:
            with transaction.atomic():
                run = ScoringRun.objects.create(
                    shared_task=shared_task,
                    trigger=trigger,
                    requested_by=actor,
                    progress_at=timezone.now(),
                )
        except IntegrityError:
            # A writer that did not take the task's lock made a waiting run meanwhile.
            return ScoringRun.objects.get(shared_task=shared_task, status=Status.WAITING_FOR_CELLS)
        if send:
            message_send("default.scoring_run_advance", run.id)
    return run


def _run_serving(shared_task: SharedTask, trigger: str) -> ScoringRun | None:
    """The run in progress that serves a request: the waiting one, else (for a request that
    reports no change) the latest one scoring."""
    statuses = [Status.WAITING_FOR_CELLS]
    if trigger not in CHANGE_TRIGGERS:
        statuses.append(Status.SCORING)
    runs = ScoringRun.objects.filter(shared_task=shared_task, status__in=statuses)
    return min(runs, key=lambda run: (statuses.index(run.status), -run.id), default=None)


def scoring_run_request_by_organizer(
    *, shared_task: SharedTask, actor: AbstractBaseUser
) -> ScoringRun:
    # The helper's message reads "... may do {doing}.": "that: <what>", as its team twin says.
    organizer_require(user=actor, shared_task=shared_task, doing="that: ask for a scoring run")
    return scoring_run_request(shared_task=shared_task, trigger=Trigger.ORGANIZER, actor=actor)


def scoring_run_advance(*, run_id: int, send: bool = True) -> ScoringRun:
    """Send a waiting run's missing cells to the ``gpu`` queue, or score it if none is missing."""
    shared_task_id = ScoringRun.objects.values_list("shared_task_id", flat=True).get(id=run_id)
    with transaction.atomic():
        # The task's lock first, then the run's: the order every writer here takes them in.
        shared_task = SharedTask.objects.select_for_update().get(id=shared_task_id)
        run = ScoringRun.objects.select_for_update().get(id=run_id)
        if run.status != Status.WAITING_FOR_CELLS:
            return run
        matrix = pair_matrix(shared_task=shared_task, with_cells=False)
        now = timezone.now()
        if matrix.cells_missing:
            chunks_create(
                shared_task=shared_task,
                missing={
                    version_id: texts for version_id, texts in matrix.missing.items() if texts
                },
                source=Source.PAIRS,
                run=run,
                send=send,
            )
        run.cells_needed = matrix.cells_needed
        run.cells_done = matrix.cells_needed - matrix.cells_missing
        run.progress_at = now
        if not matrix.cells_missing:
            run.status = Status.SCORING
            run.scoring_started_at = now
            if send:
                message_send("default.scoring_run_score", run.id)
        run.save()
    return run


# --- Scoring --------------------------------------------------------------------------------


def _run_fail(run: ScoringRun, reason: str) -> ScoringRun:
    with transaction.atomic():
        run = ScoringRun.objects.select_for_update().get(id=run.id)
        if run.status in (Status.DONE, Status.FAILED):
            return run
        run.status = Status.FAILED
        run.failure_reason = reason
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "failure_reason", "finished_at"])
    return run


@functools.cache
def code_version() -> str:
    """What code scored: ``git describe`` of the checkout, else the installed package version."""
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--tags"],
            cwd=settings.BASE_DIR,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        described = ""
    if described:
        return f"git {described}"
    try:
        return f"bibi {importlib.metadata.version('bibi')}"
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def scoring_run_score(*, run_id: int, send: bool = True) -> ScoringRun:
    """Score a run whose cells are all known and store its snapshot; ``done`` or ``failed``."""
    run = ScoringRun.objects.select_related("shared_task").get(id=run_id)
    if run.status != Status.SCORING:
        return run
    shared_task = run.shared_task
    # Weights are dev figures under the task's answer rule now, never one recorded before.
    dev_scores_stale_update(shared_task=shared_task)
    matrix = pair_matrix(shared_task=shared_task)
    if matrix.cells_missing:
        return _run_wait_again(run, send=send)
    if not matrix.pairs:
        return _run_fail(run, f"There are no pairs to score: {no_pairs_reason(matrix)}.")
    if not matrix.versions:
        return _run_fail(run, "There is no system to score: no system has a ready version.")
    try:
        inputs = _inputs(matrix, shared_task)
        report = score_inputs(
            inputs,
            weight_mode=shared_task.weight_mode,
            break_rate_mode=shared_task.break_rate_mode,
            labels=list(shared_task.labels),
        )
    except scoring.ScoringInputError as error:
        return _run_fail(run, f"Scoring refused the inputs: {error}")
    tables = report_tables(report, inputs, matrix.versions)
    validation_tables_add(tables, matrix, unvalidated_scores(matrix, shared_task))
    validation_used, tables["validation_summary"] = validation_record(shared_task, matrix)
    items = [{**item, **item_validation(item, matrix)} for item in report_items(report, inputs)]
    with transaction.atomic():
        run = ScoringRun.objects.select_for_update().get(id=run.id)
        if run.status != Status.SCORING:
            return run
        snapshot = Snapshot.objects.create(
            run=run,
            shared_task=shared_task,
            code_version=code_version(),
            settings_used={
                **_settings_used(shared_task),
                "validation": validation_used,
                "precisions": cell_precisions(matrix),
            },
            pair_set_ids=sorted({pair["pair_set_id"] for pair in matrix.pairs}),
            systems=_systems_scored(matrix, tables),
            excluded_systems=matrix.excluded,
            tables=tables,
            counts=_counts(matrix, run),
            failures=_failures(matrix),
        )
        SnapshotItem.objects.bulk_create(
            [SnapshotItem(snapshot=snapshot, **item) for item in items], batch_size=2000
        )
        run.status = Status.DONE
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "finished_at"])
    return run


# A run's inputs, by what the task's systems answer: labels (``reports.scoring_inputs``), or
# answer spans scored by the task's answer mode (``span_reports``).
SCORING_INPUTS: Parts[Callable[[PairMatrix, SharedTask], ScoringInputs]] = Parts("scoring adapter")
SCORING_INPUTS.register(LABEL, lambda matrix, shared_task: scoring_inputs(matrix))
SCORING_INPUTS.register(
    SPAN, lambda matrix, shared_task: span_scoring_inputs(matrix, shared_task=shared_task)
)


def _inputs(matrix: PairMatrix, shared_task: SharedTask) -> ScoringInputs:
    return SCORING_INPUTS.of(shared_task.kind)(matrix, shared_task)


def _settings_used(shared_task: SharedTask) -> dict[str, Any]:
    """The task settings a snapshot was scored with (its type's: the labels, or the answer
    rule of a span task)."""
    return {
        "task_type": shared_task.task_type,
        "weight_mode": shared_task.weight_mode,
        "break_rate_mode": shared_task.break_rate_mode,
        "max_sequence_length": settings.SYSTEM_MAX_SEQUENCE_LENGTH,
        **shared_task.kind.scoring_settings(shared_task),
    }


def cell_precisions(matrix: PairMatrix) -> dict[str, int]:
    """How many of the hosted cells a run scores were computed in each numeric precision
    (``SYSTEM_PRECISION`` of the worker that computed them): {"fp32": 120, "bf16": 4}."""
    counts = (
        Prediction.objects.filter(
            system_version_id__in=[version.version_id for version in matrix.hosted],
            source__in=[Prediction.Source.PAIRS, Prediction.Source.STARTER],
            text_sha256__in=list(matrix.texts),
        )
        .exclude(precision="")
        .values("precision")
        .annotate(cells=Count("id"))
    )
    return {row["precision"]: row["cells"] for row in counts.order_by("precision")}


def _run_wait_again(run: ScoringRun, *, send: bool) -> ScoringRun:
    """Something changed since the run was advanced (a new system, a new version): it waits
    for the new cells, unless another run already waits (and will score with them)."""
    with transaction.atomic():
        shared_task_lock(run.shared_task)
        other = (
            ScoringRun.objects.filter(
                shared_task_id=run.shared_task_id, status=Status.WAITING_FOR_CELLS
            )
            .exclude(id=run.id)
            .first()
        )
        if other is None:
            ScoringRun.objects.filter(id=run.id, status=Status.SCORING).update(
                status=Status.WAITING_FOR_CELLS, progress_at=timezone.now()
            )
    if other is not None:
        return _run_fail(
            run, f"New cells were needed while it scored; run {other.id} scores the task instead."
        )
    return scoring_run_advance(run_id=run.id, send=send)


def _systems_scored(matrix: PairMatrix, tables: dict[str, Any]) -> list[dict[str, Any]]:
    weights = {row["system_id"]: row for row in tables["builders"]}
    return [
        {
            "system_id": version.system_id,
            "name": version.system_name,
            "team_id": version.team_id,
            "kind": version.kind,
            "version_id": version.version_id,
            "version": version.version_number,
            "dev_accuracy": version.dev_accuracy,
            "weight": weights[version.system_id]["weight"],
            "weight_source": weights[version.system_id]["weight_source"],
        }
        for version in matrix.versions
    ]


def _counts(matrix: PairMatrix, run: ScoringRun) -> dict[str, int]:
    return {
        "pairs": len(matrix.pairs),
        "teams": len({pair["team_id"] for pair in matrix.pairs}),
        "systems": len(matrix.versions),
        "texts": len(matrix.texts),
        "cells": len(matrix.versions) * len(matrix.texts),
        "cells_computed": _cells_computed(matrix, run),
        "failures": sum(len(failed) for failed in matrix.failures.values()),
        **validation_counts(matrix),
    }


def _cells_computed(matrix: PairMatrix, run: ScoringRun) -> int:
    """The distinct cells of the matrix the run's pair chunks computed: each (version, text)
    that a done chunk of the run was asked for and that has a cell now, once. Not the chunks'
    ``computed`` summed: two chunks can both write one cell (two workers at once each found
    it missing; the upsert kept one), and a sum counted it twice. Per version, never more
    than its chunks wrote (a text validation computed meanwhile was skipped, not written)."""
    asked: dict[int, set[str]] = {}
    written: dict[int, int] = {}
    chunks = CellChunk.objects.filter(
        run=run, source=Prediction.Source.PAIRS, done_at__isnull=False, computed__gt=0
    ).values_list("system_version_id", "items", "computed")
    for version_id, items, computed in chunks:
        asked.setdefault(version_id, set()).update(
            matrix.kind.item_key((item,) if isinstance(item, str) else tuple(item))
            for item in items
        )
        written[version_id] = written.get(version_id, 0) + computed
    return sum(
        min(len(digests & matrix.cells.get(version_id, {}).keys()), written[version_id])
        for version_id, digests in asked.items()
    )


def _failures(matrix: PairMatrix) -> list[dict[str, Any]]:
    by_version = {version.version_id: version for version in matrix.versions}
    reasons = []
    for version_id, failed in matrix.failures.items():
        version = by_version[version_id]
        for digest, reason in failed.items():
            reasons.append(
                {"system_id": version.system_id, "text": matrix.texts[digest], "reason": reason}
            )
    return reasons


# --- Publication ----------------------------------------------------------------------------


class PublishUnconfirmed(ValidationError):
    """Publishing would put pairs that wait for votes on the leaderboard, unconfirmed."""


def snapshot_publish(
    *, snapshot: Snapshot, actor: AbstractBaseUser | None, confirm: bool = False
) -> Snapshot:
    """Make a snapshot the task's leaderboard (the latest published one is).

    ``actor`` must organize the task; None is the operator (``manage.py score --publish``).
    A snapshot scored while pairs were still waiting for validators' votes
    (``selectors.publish_warning``) is published only with ``confirm``; otherwise
    ``PublishUnconfirmed`` says how many, by team. Publishing it anyway is audited with
    the warning.
    """
    shared_task = snapshot.shared_task
    if actor is not None:
        organizer_require(user=actor, shared_task=shared_task, doing="that: publish results")
    warning = selectors.publish_warning(snapshot=snapshot)
    if warning is not None and not confirm and snapshot.published_at is None:
        raise PublishUnconfirmed(warning, code="confirm")
    with transaction.atomic():
        snapshot = Snapshot.objects.select_for_update().get(id=snapshot.id)
        if snapshot.published_at is None:
            snapshot.published_at = timezone.now()
            snapshot.published_by = actor
            snapshot.save(update_fields=["published_at", "published_by"])
            audit_record(
                shared_task=shared_task,
                actor=actor,
                action="snapshot.publish",
                target=f"snapshot:{snapshot.id}",
                details={
                    "run": snapshot.run_id,
                    "code_version": snapshot.code_version,
                    "confirmed_warning": warning,
                },
            )
    return snapshot
