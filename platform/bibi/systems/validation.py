"""Validating a hosted system version: the half of the systems app that runs models.

Only the worker imports this module (through ``bibi.systems.tasks``), so the web process
never loads torch. ``system_version_validate`` unpacks the archive, checks and loads the
model, runs it on the blind dev set (accuracy, macro-F1) and computes λmax and word hints on
every starter original; the outcome is recorded by ``outcomes.version_finish`` alone. A span
task's version (an extractive QA model) is run by ``span_outputs.span_version_rows``: answer
accuracy under the task's answer mode and mean token F1 on the blind dev set, span λmax on
every starter item.

An attempt first claims the version (``running``, with this process as its ``worker``) and
writes a heartbeat while it runs. A message for a version that another live attempt holds, or
that is already done, does nothing, so sending work twice is always safe.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

import fim_engine
from bibi.sharedtasks.models import Dataset
from bibi.systems.archives import ArchiveRejected, unpack_archive
from bibi.systems.errors import ValidationFailed
from bibi.systems.model_store import archive_fetch, archive_limits, store_evict, store_lock
from bibi.systems.models import Prediction, System, SystemVersion, text_digest
from bibi.systems.outcomes import version_fail_if_lost_too_often, version_finish
from bibi.systems.runner import (
    heartbeat,
    input_digests,
    model_call,
    soft_time_limit_in_process,
    version_system,
)
from bibi.systems.selectors import dataset_examples, dev_scores
from bibi.systems.span_outputs import span_version_rows

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason
Status = SystemVersion.Status


def _label_mapping(
    model_labels: list[str], task_labels: list[str], stated: dict[str, str]
) -> dict[str, str]:
    """Decide which task label each model label means, or say why it cannot be decided."""
    if len(model_labels) != len(task_labels):
        raise ValidationFailed(
            Reason.LABEL_MISMATCH,
            f"The model has {len(model_labels)} labels ({', '.join(model_labels)}) and the task has "
            f"{len(task_labels)} ({', '.join(task_labels)}).",
        )
    if stated:
        missing = [label for label in model_labels if label not in stated]
        if missing or len(stated) != len(model_labels):
            raise ValidationFailed(
                Reason.LABEL_MISMATCH,
                f"The stated mapping must name every model label exactly once; the model's labels are "
                f"{', '.join(model_labels)}.",
            )
        return dict(stated)
    by_name = {label.lower(): label for label in task_labels}
    if {label.lower() for label in model_labels} == set(by_name):
        return {label: by_name[label.lower()] for label in model_labels}
    generic = [f"LABEL_{i}" for i in range(len(model_labels))]
    if model_labels == generic or model_labels == [str(i) for i in range(len(model_labels))]:
        # Unnamed outputs are taken in the task's label order, as a trained head would be.
        return dict(zip(model_labels, task_labels, strict=True))
    raise ValidationFailed(
        Reason.LABEL_MISMATCH,
        f"The model's labels ({', '.join(model_labels)}) are not the task's ({', '.join(task_labels)}): "
        f"state which task label each model label means when you upload.",
    )


def _predictions(
    version: SystemVersion,
    source: str,
    examples: list,
    outputs: Iterable[tuple[str, Any, bool]],
    *,
    label_names: list[str],
    mapping: dict[str, str],
) -> list[Prediction]:
    """Prediction rows from the model's (label, probabilities, truncated) per example."""
    names = [mapping[name] for name in label_names]
    return [
        Prediction(
            system_version=version,
            source=source,
            example=example,
            text=example.text,
            text_sha256=text_digest(example.text),
            label=mapping[label],
            probabilities=dict(zip(names, map(float, row), strict=True)),
            truncated=truncated,
            precision=settings.SYSTEM_PRECISION,
        )
        for example, (label, row, truncated) in zip(examples, outputs, strict=True)
    ]


@dataclass
class _Outcome:
    """What a successful validation computed, recorded only once the model is checked in full."""

    rows: list[Prediction]
    model_format: str
    mapping: dict[str, str]
    scores: tuple[float | None, float | None, int]
    partial: Path
    root: Path
    # Span tasks: the mean token F1 on the blind dev set (``scores`` has no macro-F1 then).
    token_f1: float | None = None


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


def _starter_rows(
    version: SystemVersion, loaded: fim_engine.System, mapping: dict[str, str]
) -> list[Prediction]:
    """The starter originals' predictions, with λmax, hints, leverage and what the model saw."""
    starter = dataset_examples(version.system.shared_task, Dataset.Split.STARTER)
    # One pass over the starter set: λmax's pass already gives the prediction.
    fisher = model_call(loaded.fisher, [example.text for example in starter], hints=True)
    outputs = ((r.label, r.probabilities, r.truncated) for r in fisher)
    rows = _predictions(
        version,
        Prediction.Source.STARTER,
        starter,
        outputs,
        label_names=loaded.labels,
        mapping=mapping,
    )
    seen = input_digests(loaded, [row.text for row in rows])
    for row, result, digest in zip(rows, fisher, seen, strict=True):
        row.lambda_max = result.lambda_max
        row.hints = [[word, score] for word, score in result.hints]
        row.leverage = [[word, score] for word, score in result.leverage]
        row.input_sha256 = digest
    return rows


def _run_validation(version: SystemVersion) -> _Outcome:
    shared_task = version.system.shared_task
    partial, root = _unpack(version)
    if shared_task.is_span:
        rows, (accuracy, token_f1, count) = span_version_rows(version, root)
        return _Outcome(
            rows=rows,
            model_format="transformers",
            mapping={},
            scores=(accuracy, None, count),
            partial=partial,
            root=root,
            token_f1=token_f1,
        )
    loaded = version_system(version, unpacked=root)
    mapping = _label_mapping(loaded.labels, list(shared_task.labels), version.label_mapping)

    dev = dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
    dev_batch = model_call(loaded.predict, [example.text for example in dev])
    dev_outputs = zip(dev_batch.labels, dev_batch.probabilities, dev_batch.truncated, strict=True)
    rows = _predictions(
        version,
        Prediction.Source.BLIND_DEV,
        dev,
        dev_outputs,
        label_names=loaded.labels,
        mapping=mapping,
    )
    starter_rows = _starter_rows(version, loaded, mapping)
    accuracy, macro_f1 = (
        dev_scores(list(shared_task.labels), [e.label for e in dev], [r.label for r in rows])
        if dev
        else (None, None)
    )
    return _Outcome(
        rows=[*rows, *starter_rows],
        model_format=loaded.format,
        mapping=mapping,
        scores=(accuracy, macro_f1, len(dev)),
        partial=partial,
        root=root,
    )


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
        Prediction.objects.bulk_create(outcome.rows, batch_size=2000)
        version.model_dir = str(
            (final / outcome.root.relative_to(outcome.partial)).relative_to(store)
        )
        version.model_format = outcome.model_format
        version.label_mapping = outcome.mapping
        version.dev_accuracy, version.dev_macro_f1, version.dev_count = outcome.scores
        version.dev_token_f1 = outcome.token_f1
        version.truncated_count = sum(row.truncated for row in outcome.rows)
        version.save()
    with store_lock(exclusive=True):
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
            "The platform failed while validating this version. This does not count against "
            "your uploads: upload again.",
        )
    return version
