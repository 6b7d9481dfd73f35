"""The evaluation app's share of beat's housekeeping (``bibi.housekeeping``): start the runs
of closed break phases, send again prediction chunks whose messages were lost, and wake runs
that stalled. Services, like ``services``: the database is the only record of what is due."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

from bibi.celery import GPU_QUEUE
from bibi.evaluation.chunks import message_send
from bibi.evaluation.models import CellChunk, ScoringRun
from bibi.evaluation.services import scoring_run_request
from bibi.queue import waiting
from bibi.sharedtasks.models import Phase
from bibi.systems.models import Prediction

Status = ScoringRun.Status
Trigger = ScoringRun.Trigger
Source = Prediction.Source


def _last_sign_of_life(*moments: datetime | None) -> datetime | None:
    return max((moment for moment in moments if moment is not None), default=None)


def evaluation_housekeep(*, now: datetime | None = None) -> dict[str, int]:
    """What the beat task does: start the runs of closed break phases, and wake what stalled.

    - a task whose break phase has closed gets a run, unless one was asked for since;
    - when no chunk of a task has started or finished for ``EVALUATION_STALL_TIMEOUT``
      seconds and the ``gpu`` queue holds no message, its open chunks sent longer ago than
      that are sent again: their messages were lost with a worker or a broker (a chunk at
      work, or messages waiting for a worker, are left alone);
    - a waiting run with no open pair chunk, or without progress for the time-out, is
      advanced again; a run ``scoring`` for longer is sent to scoring again.
    """
    now = now or timezone.now()
    stale = now - timedelta(seconds=settings.EVALUATION_STALL_TIMEOUT)
    return {
        "runs_started": _runs_start_after_break(now),
        "chunks_resent": _chunks_resend(now, stale),
        "runs_woken": _runs_wake(now, stale),
    }


def _runs_start_after_break(now: datetime) -> int:
    """A run for every task whose break phase closed and that has no run since."""
    started = 0
    closed = Phase.objects.filter(kind=Phase.Kind.BREAK, ends_at__lte=now).select_related(
        "shared_task"
    )
    for phase in closed:
        if not ScoringRun.objects.filter(
            shared_task_id=phase.shared_task_id, created_at__gte=phase.ends_at
        ).exists():
            scoring_run_request(shared_task=phase.shared_task, trigger=Trigger.BREAK_CLOSED)
            started += 1
    return started


def _chunks_resend(now: datetime, stale: datetime) -> int:
    """Send again the open chunks of tasks with no sign of life since ``stale``, when the
    ``gpu`` queue holds no message (theirs went with a worker or a broker)."""
    open_tasks = CellChunk.objects.filter(done_at__isnull=True).values("shared_task_id")
    lively = (
        CellChunk.objects.filter(shared_task_id__in=open_tasks)
        .values("shared_task_id")
        .annotate(started=Max("started_at"), done=Max("done_at"))
    )
    stalled = [
        row["shared_task_id"]
        for row in lively
        if (last := _last_sign_of_life(row["started"], row["done"])) is None or last < stale
    ]
    if not stalled or waiting(GPU_QUEUE) != 0:
        return 0
    with transaction.atomic():
        chunks = list(
            CellChunk.objects.select_for_update(skip_locked=True)
            .filter(shared_task_id__in=stalled, done_at__isnull=True)
            .filter(Q(sent_at__lt=stale) | Q(sent_at__isnull=True, created_at__lt=stale))
        )
        for chunk in chunks:
            chunk.sent_at = now
            chunk.sends += 1
            chunk.save(update_fields=["sent_at", "sends"])
            message_send("gpu.cells_compute", chunk.id)
    return len(chunks)


def _runs_wake(now: datetime, stale: datetime) -> int:
    """Advance waiting runs with no open pair chunk or no progress since ``stale``; send
    runs scoring since before ``stale`` to scoring again."""
    woken = 0
    working = set(
        CellChunk.objects.filter(source=Source.PAIRS, done_at__isnull=True).values_list(
            "shared_task_id", flat=True
        )
    )
    for run in ScoringRun.objects.filter(status=Status.WAITING_FOR_CELLS):
        if run.shared_task_id not in working or (run.progress_at or run.created_at) < stale:
            with transaction.atomic():
                message_send("default.scoring_run_advance", run.id)
            woken += 1
    for run in ScoringRun.objects.filter(status=Status.SCORING, scoring_started_at__lt=stale):
        with transaction.atomic():
            ScoringRun.objects.filter(id=run.id).update(scoring_started_at=now)
            message_send("default.scoring_run_score", run.id)
        woken += 1
    return woken
