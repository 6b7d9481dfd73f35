"""Validating a hosted system version: the half of the systems app that runs models.

Only the worker imports this module (through ``bibi.systems.tasks``), so the web process
never loads torch. ``system_version_validate`` unpacks the archive, checks and loads the
model, runs it on the blind dev set (accuracy, macro-F1) and computes λmax and word hints on
every starter original; the outcome is recorded by ``services.version_finish`` alone.
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

import fim_engine
from bibi.sharedtasks.models import Dataset
from bibi.systems.archives import ArchiveLimits, ArchiveRejected, unpack_archive
from bibi.systems.models import Prediction, System, SystemVersion, text_digest
from bibi.systems.runner import model_call
from bibi.systems.services import (
    ValidationFailed,
    dataset_examples,
    dev_scores,
    version_finish,
)

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
        )
        for example, (label, row, truncated) in zip(examples, outputs, strict=True)
    ]


def _run_validation(version: SystemVersion) -> None:
    system = version.system
    shared_task = system.shared_task
    store = Path(settings.MODEL_STORE)
    partial = store / f".partial-{version.uuid}"
    final = store / str(version.uuid)
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(final, ignore_errors=True)
    limits = ArchiveLimits(
        max_files=settings.SYSTEM_ARCHIVE_MAX_FILES,
        max_bytes=settings.SYSTEM_ARCHIVE_MAX_UNPACKED_BYTES,
        max_ratio=settings.SYSTEM_ARCHIVE_MAX_RATIO,
    )
    try:
        root = unpack_archive(
            Path(settings.UPLOAD_ROOT) / version.archive_path, partial, limits=limits
        )
    except ArchiveRejected as exc:
        raise ValidationFailed(Reason.INVALID_ARCHIVE, str(exc)) from None
    try:
        model_format = fim_engine.check_model_dir(root)
        loaded = model_call(
            fim_engine.load_system,
            root,
            batch_size=settings.SYSTEM_BATCH_SIZE,
            max_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
            expected_num_labels=len(shared_task.labels),
        )
    except fim_engine.LabelCountError as exc:
        raise ValidationFailed(Reason.LABEL_MISMATCH, str(exc)) from None
    except fim_engine.ModelFormatError as exc:
        raise ValidationFailed(Reason.INVALID_MODEL, str(exc)) from None
    mapping = _label_mapping(loaded.labels, list(shared_task.labels), version.label_mapping)

    dev = dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
    dev_batch = model_call(loaded.predict, [example.text for example in dev])
    starter = dataset_examples(shared_task, Dataset.Split.STARTER)
    # One pass over the starter set: λmax's pass already gives the prediction.
    fisher = model_call(loaded.fisher, [example.text for example in starter], hints=True)

    dev_outputs = zip(dev_batch.labels, dev_batch.probabilities, dev_batch.truncated, strict=True)
    rows = _predictions(
        version,
        Prediction.Source.BLIND_DEV,
        dev,
        dev_outputs,
        label_names=loaded.labels,
        mapping=mapping,
    )
    starter_outputs = ((r.label, r.probabilities, r.truncated) for r in fisher)
    starter_rows = _predictions(
        version,
        Prediction.Source.STARTER,
        starter,
        starter_outputs,
        label_names=loaded.labels,
        mapping=mapping,
    )
    for row, result in zip(starter_rows, fisher, strict=True):
        row.lambda_max = result.lambda_max
        row.hints = [[word, score] for word, score in result.hints]
    accuracy, macro_f1 = (
        dev_scores(list(shared_task.labels), [e.label for e in dev], [r.label for r in rows])
        if dev
        else (None, None)
    )
    # Move the model into place before recording success: a ready version always has its files.
    partial.rename(final)
    model_dir = final / root.relative_to(partial)
    with transaction.atomic():
        version.predictions.all().delete()
        Prediction.objects.bulk_create([*rows, *starter_rows], batch_size=2000)
        version.model_dir = str(model_dir.relative_to(store))
        version.model_format = model_format.kind
        version.label_mapping = mapping
        version.dev_accuracy, version.dev_macro_f1, version.dev_count = accuracy, macro_f1, len(dev)
        version.truncated_count = sum(r.truncated for r in rows) + sum(
            r.truncated for r in starter_rows
        )
        version_finish(version, Status.READY)
        System.objects.filter(id=system.id).update(active_version=version)


def system_version_validate(*, version_id: int) -> SystemVersion:
    """Validate one uploaded version; called by the ``gpu.system_validate`` task."""
    with transaction.atomic():
        version = (
            SystemVersion.objects.select_for_update()
            .select_related("system__shared_task")
            .get(id=version_id)
        )
        if version.status in (Status.READY, Status.FAILED):
            return version
        version.status = Status.RUNNING
        version.attempts += 1
        version.started_at = timezone.now()
        version.save(update_fields=["status", "attempts", "started_at"])
    try:
        _run_validation(version)
    except ValidationFailed as failure:
        version_finish(version, Status.FAILED, failure.reason, failure.detail)
    except SoftTimeLimitExceeded:
        limit = settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT
        version_finish(
            version,
            Status.FAILED,
            Reason.TIMEOUT,
            f"Validation took longer than the limit of {limit} seconds.",
        )
    except BaseException:
        # The platform's own failure (database, disk, a bug): clean up, let the task machinery
        # retry or report it, and never blame the team.
        shutil.rmtree(Path(settings.MODEL_STORE) / f".partial-{version.uuid}", ignore_errors=True)
        logger.exception("validating system version %s failed inside the platform", version.id)
        raise
    return version
