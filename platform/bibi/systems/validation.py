"""Validating a hosted system version: the half of the systems app that runs models.

Only the worker imports this module (through ``bibi.systems.tasks``), so the web process
never loads torch. ``system_version_validate`` unpacks the archive, checks and loads the
model, runs it on the blind dev set and computes λmax and word hints on every starter item,
as the run its task's answers have (``VERSION_RUNS``: ``label_outputs`` for
labels, with accuracy and macro-F1; ``span_outputs`` for spans, with answer accuracy under the
task's answer mode and mean token F1); the outcome is recorded by ``outcomes.version_finish``
alone.

An attempt first claims the version (``running``, with this process as its ``worker``) and
writes a heartbeat while it runs. A message for a version that another live attempt holds, or
that is already done, does nothing, so sending work twice is always safe.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bibi.systems.archives import ArchiveRejected, unpack_archive
from bibi.systems.errors import ValidationFailed
from bibi.systems.hosted_runs import HostedRun
from bibi.systems.label_outputs import label_version_run
from bibi.systems.model_store import archive_fetch, archive_limits, store_evict, store_lock
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.systems.outcomes import (
    PLATFORM_FAILED,
    version_fail_if_lost_too_often,
    version_finish,
)
from bibi.systems.runner import heartbeat, soft_time_limit_in_process
from bibi.systems.span_outputs import span_version_run
from bibi.tasktypes import LABEL, SPAN, Parts

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason
Status = SystemVersion.Status

# How a version is run on its model directory, by what its task's systems answer.
VERSION_RUNS: Parts[Callable[[SystemVersion, Path], HostedRun]] = Parts("hosted-version run")
VERSION_RUNS.register(LABEL, label_version_run)
VERSION_RUNS.register(SPAN, span_version_run)


@dataclass
class _Outcome:
    """What a successful validation computed (``run``), recorded only once the model is
    checked in full, and where its unpacked model lies."""

    run: HostedRun
    partial: Path
    root: Path


def _unpack(version: SystemVersion) -> tuple[Path, Path]:
    """Fetch the version's archive by its digest (``model_store.archive_fetch``: the worker may
    share no disk with the web process) and unpack it into ``MODEL_STORE/.partial-<uuid>``,
    within the limits; returns that directory and the model directory inside it."""
    store = Path(settings.MODEL_STORE)
    store.mkdir(parents=True, exist_ok=True)
    partial = store / f".partial-{version.uuid}"
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(store / str(version.uuid), ignore_errors=True)
    archive = store / f".fetch-{version.uuid}-validation.archive"
    try:
        archive_fetch(version, archive)
        root = unpack_archive(archive, partial, limits=archive_limits())
    except ArchiveRejected as exc:
        raise ValidationFailed(Reason.INVALID_ARCHIVE, str(exc)) from None
    finally:
        archive.unlink(missing_ok=True)
    return partial, root


def _run_validation(version: SystemVersion) -> _Outcome:
    partial, root = _unpack(version)
    run = VERSION_RUNS.of(version.system.shared_task.kind)(version, root)
    return _Outcome(run, partial, root)


def _record(version: SystemVersion, outcome: _Outcome) -> None:
    """Store the results, then move the model into the store, then mark the version ready.

    The model enters the store only once its results are committed, and a version is ready
    only once its model is in place: a failure in between leaves no model behind a failed
    version, and no ready version without its files.
    """
    store = Path(settings.MODEL_STORE)
    final = store / str(version.uuid)
    with transaction.atomic():
        version.predictions.all().delete()
        run = outcome.run
        Prediction.objects.bulk_create(run.rows, batch_size=2000)
        version.model_dir = str(
            (final / outcome.root.relative_to(outcome.partial)).relative_to(store)
        )
        version.model_format = run.model_format
        version.label_mapping = run.mapping
        version.dev_accuracy, version.dev_count = run.accuracy, run.count
        version.dev_macro_f1, version.dev_token_f1 = run.macro_f1, run.token_f1
        version.dev_answer_mode, version.dev_answer_threshold = (
            run.answer_mode,
            run.answer_threshold,
        )
        version.truncated_count = sum(row.truncated for row in run.rows)
        version.save()
    with store_lock():
        outcome.partial.rename(final)
        store_evict(store, keep={final.name})
    with transaction.atomic():
        version_finish(version, Status.READY)
        System.objects.filter(id=version.system_id).update(active_version=version)


def _claim(version_id: int, worker: str) -> SystemVersion | None:
    """Start an attempt on ``version_id`` in ``worker``, or None when there is nothing to do.

    Nothing to do: the version is done, or another attempt is running it and alive (a message
    sent twice). A version ``running`` without a sign of life lost its worker: this attempt
    takes it over, unless it has had its ``SYSTEM_VALIDATION_MAX_ATTEMPTS``.
    """
    now = timezone.now()
    with transaction.atomic():
        version = (
            SystemVersion.objects.select_for_update()
            .select_related("system__shared_task")
            .get(id=version_id)
        )
        if version.status in (Status.READY, Status.FAILED):
            return None
        last_sign = version.heartbeat_at or version.started_at
        silent_for = settings.SYSTEM_WORKER_LOST_AFTER
        if (
            version.status == Status.RUNNING
            and last_sign
            and now - last_sign < timedelta(seconds=silent_for)
        ):
            logger.info("version %s is already running in %s", version.id, version.worker)
            return None
        if version_fail_if_lost_too_often(version):
            return None
        version.status = Status.RUNNING
        version.attempts += 1
        version.started_at = version.heartbeat_at = now
        version.worker = worker
        version.save(update_fields=["status", "attempts", "started_at", "heartbeat_at", "worker"])
    return version


def _beat(version: SystemVersion) -> None:
    SystemVersion.objects.filter(
        id=version.id, status=Status.RUNNING, worker=version.worker
    ).update(heartbeat_at=timezone.now())


def system_version_validate(
    *, version_id: int, worker: str | None = None, embedded: bool = False
) -> SystemVersion:
    """Validate one uploaded version; called by the ``gpu.system_validate`` task.

    ``worker`` names the process (``host:pid``, by default this host and process). ``embedded`` is True when the task runs in
    the web process (the embedded default): no pool enforces the time limits there, so the
    soft limit is enforced in-process, and no housekeeping watches a heartbeat, so none is
    written; a platform failure is recorded at once since no worker will come back to it.
    """
    version = _claim(version_id, worker or f"{socket.gethostname()}:{os.getpid()}")
    if version is None:
        return SystemVersion.objects.get(id=version_id)
    limit = settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT
    try:
        if embedded:
            with soft_time_limit_in_process(limit):
                outcome = _run_validation(version)
        else:
            with heartbeat(lambda: _beat(version), every=settings.SYSTEM_WORKER_LOST_AFTER / 4):
                outcome = _run_validation(version)
        _record(version, outcome)
    except ValidationFailed as failure:
        version_finish(version, Status.FAILED, failure.reason, failure.detail)
    except SoftTimeLimitExceeded:
        version_finish(
            version,
            Status.FAILED,
            Reason.TIMEOUT,
            f"Validation took longer than the limit of {limit} seconds.",
        )
    except Exception:
        # The platform's own failure (database, disk, a bug): clean up and never blame the team.
        shutil.rmtree(Path(settings.MODEL_STORE) / f".partial-{version.uuid}", ignore_errors=True)
        logger.exception("validating system version %s failed inside the platform", version.id)
        if not embedded:
            # The heartbeat stops with this attempt: housekeeping sends the work again.
            raise
        version_finish(
            version,
            Status.FAILED,
            Reason.WORKER_LOST,
            PLATFORM_FAILED,
        )
    return version
