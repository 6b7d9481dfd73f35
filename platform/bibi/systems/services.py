"""Writes for builder systems: creating them, uploading versions, validating them on a worker,
and taking self-reported predictions.

A hosted version's life: ``system_version_upload`` stores the archive and enqueues
``gpu.system_validate`` after commit; the worker calls ``system_version_validate``, which
unpacks, loads, runs and records, and ends the version ``ready`` or ``failed`` through
``_finish`` alone, so status, reason and clean-up are decided in one place.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import uuid
from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

import fim_engine
import scoring
from bibi.sharedtasks import selectors as sharedtask_selectors
from bibi.sharedtasks.files import (
    FileFormatError,
    RowError,
    decode_upload,
    detect_format,
    read_rows,
)
from bibi.sharedtasks.models import Dataset, Phase, SharedTask, Team
from bibi.systems.archives import ArchiveLimits, ArchiveRejected, unpack_archive
from bibi.systems.models import Prediction, System, SystemVersion, text_digest

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason
Status = SystemVersion.Status
COPY_CHUNK = 1024 * 1024


class ValidationFailed(Exception):
    """A validation step failed for a reason the builder must hear about."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


class PredictionsRejected(ValidationError):
    """A predictions file with problems: every one is listed, nothing is stored."""

    def __init__(self, errors: list[RowError], *, encoding: str | None = None) -> None:
        super().__init__(f"{len(errors)} problem(s) in the predictions file; nothing was stored.")
        self.errors = errors
        self.encoding = encoding


# --- Who may do what ----------------------------------------------------------------------


def _require_member(*, user: AbstractBaseUser, team: Team) -> None:
    membership = sharedtask_selectors.membership_get(user=user, shared_task=team.shared_task)
    if membership is None or membership.team_id != team.id:
        raise PermissionDenied("Only the members of this team may do that.")


def _require_phase(*, shared_task: SharedTask, kind: str, what: str) -> None:
    phase = shared_task.phases.filter(kind=kind).first()
    if phase is None:
        raise ValidationError(f"{what} needs a {kind} phase, and this shared task has none yet.")
    now = timezone.now()
    if now < phase.starts_at:
        raise ValidationError(
            f"{what} opens with the {kind} phase on {phase.starts_at.isoformat()}."
        )
    if now >= phase.ends_at:
        raise ValidationError(
            f"{what} closed with the {kind} phase on {phase.ends_at.isoformat()}."
        )


def require_break_phase_closed(*, shared_task: SharedTask) -> None:
    phase = shared_task.phases.filter(kind=Phase.Kind.BREAK).first()
    if phase is None or timezone.now() < phase.ends_at:
        when = f" on {phase.ends_at.isoformat()}" if phase else ""
        raise ValidationError(f"Pair texts are released once the break phase has closed{when}.")


# --- Systems ------------------------------------------------------------------------------


@transaction.atomic
def system_create(*, team: Team, actor: AbstractBaseUser, name: str, kind: str) -> System:
    _require_member(user=actor, team=team)
    if team.kind != Team.Kind.BUILDER:
        raise ValidationError("Only builder teams have systems.")
    if kind not in System.Kind.values:
        raise ValidationError(
            {"kind": f"'{kind}' is not a system kind: use hosted or self_reported."}
        )
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A system needs a name."})
    Team.objects.select_for_update().get(id=team.id)
    quota = team.shared_task.max_systems_per_team
    if team.systems.count() >= quota:
        raise ValidationError(
            f"This team already has {quota} system(s), the most this shared task allows."
        )
    if team.systems.filter(name__iexact=name).exists():
        raise ValidationError({"name": f"The team already has a system named '{name}'."})
    return System.objects.create(shared_task=team.shared_task, team=team, name=name, kind=kind)


def _next_number(system: System) -> int:
    return (system.versions.aggregate(top=Max("number"))["top"] or 0) + 1


def _check_upload_quota(system: System) -> None:
    used = sum(1 for version in system.versions.all() if version.counts_against_quota)
    quota = system.shared_task.max_uploads_per_system
    if used >= quota:
        raise ValidationError(
            f"This system has used its {quota} upload(s). Failures the platform caused are not counted."
        )


def clean_label_mapping(raw: Any, *, task_labels: list[str]) -> dict[str, str]:
    """A builder's stated mapping: the model's label names → the task's labels, one-to-one."""
    if raw in (None, "", {}):
        return {}
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise ValidationError(
            {"label_mapping": "Give the mapping as an object of model label → task label."}
        )
    unknown = sorted(set(raw.values()) - set(task_labels))
    if unknown:
        raise ValidationError(
            {
                "label_mapping": f"Not labels of this task: {', '.join(unknown)}. The task's labels: {', '.join(task_labels)}."
            }
        )
    if len(set(raw.values())) != len(raw):
        raise ValidationError(
            {"label_mapping": "Two model labels are mapped to the same task label."}
        )
    return dict(raw)


def _store_upload(upload: UploadedFile, destination: Path) -> tuple[str, int]:
    """Copy the upload to ``destination`` chunk by chunk; return its SHA-256 and size."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    size = 0
    with destination.open("xb") as sink:
        for chunk in upload.chunks(COPY_CHUNK):
            size += len(chunk)
            if size > settings.SYSTEM_UPLOAD_MAX_BYTES:
                sink.close()
                destination.unlink(missing_ok=True)
                raise ValidationError(
                    f"The archive is larger than the limit of {settings.SYSTEM_UPLOAD_MAX_BYTES} bytes."
                )
            digest.update(chunk)
            sink.write(chunk)
    return digest.hexdigest(), size


def system_version_upload(
    *, system: System, actor: AbstractBaseUser, archive: UploadedFile, label_mapping: Any = None
) -> SystemVersion:
    """Keep a hosted model archive and queue its validation on the ``gpu`` queue."""
    from bibi.systems.tasks import system_validate_task

    _require_member(user=actor, team=system.team)
    if system.kind != System.Kind.HOSTED:
        raise ValidationError("This system is self-reported: upload predictions, not a model.")
    _require_phase(shared_task=system.shared_task, kind=Phase.Kind.BUILD, what="Uploading a model")
    mapping = clean_label_mapping(label_mapping, task_labels=system.shared_task.labels)
    version_uuid = uuid.uuid4()
    relative = Path("systems") / str(system.id) / f"{version_uuid}.archive"
    stored = Path(settings.UPLOAD_ROOT) / relative
    sha256, size = _store_upload(archive, stored)
    try:
        with transaction.atomic():
            System.objects.select_for_update().get(id=system.id)
            _check_upload_quota(system)
            version = SystemVersion.objects.create(
                uuid=version_uuid,
                system=system,
                number=_next_number(system),
                uploaded_by=actor,
                archive_name=archive.name or "",
                archive_path=str(relative),
                archive_sha256=sha256,
                archive_bytes=size,
                label_mapping=mapping,
            )
            transaction.on_commit(lambda: system_validate_task.delay(version.id))
    except BaseException:
        stored.unlink(missing_ok=True)
        raise
    return version


@transaction.atomic
def system_version_activate(*, version: SystemVersion, actor: AbstractBaseUser) -> System:
    system = version.system
    _require_member(user=actor, team=system.team)
    if version.status != Status.READY:
        raise ValidationError(
            f"Version {version.number} is {version.status}; only a ready version can be active."
        )
    system.active_version = version
    system.save(update_fields=["active_version"])
    return system


# --- Validation on the worker -------------------------------------------------------------


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


def _run_model(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the builder's model; its own failures become reasons the builder can act on."""
    try:
        return call(*args, **kwargs)
    except (SoftTimeLimitExceeded, ValidationFailed, fim_engine.ModelFormatError):
        raise
    except MemoryError:
        raise ValidationFailed(
            Reason.OUT_OF_MEMORY, "The model ran out of memory on the worker."
        ) from None
    except Exception as exc:  # anything the model's own computation raises is the model's failure
        if "out of memory" in str(exc).lower():
            raise ValidationFailed(
                Reason.OUT_OF_MEMORY, f"The model ran out of memory: {exc}"
            ) from None
        raise ValidationFailed(
            Reason.MODEL_ERROR, f"The model raised {exc.__class__.__name__}: {exc}"
        ) from None


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


def _dev_scores(labels: list[str], gold: list[str], predicted: list[str]) -> tuple[float, float]:
    code = {label: i for i, label in enumerate(labels)}
    gold_codes = np.array([code[label] for label in gold], dtype=np.int64)
    predicted_codes = np.array(
        [[code.get(label, len(labels)) for label in predicted]], dtype=np.int64
    )
    groups = np.zeros(len(gold), dtype=np.int64)
    counts = scoring.confusion_counts(gold_codes, predicted_codes, groups, 1, len(labels))
    return float(scoring.accuracy(counts)[0, 0]), float(scoring.macro_f1(counts)[0, 0])


def _examples(shared_task: SharedTask, split: str) -> list:
    dataset = shared_task.datasets.filter(split=split).first()
    return list(dataset.examples.order_by("position")) if dataset else []


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
        loaded = _run_model(
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

    dev = _examples(shared_task, Dataset.Split.BLIND_DEV)
    dev_batch = _run_model(loaded.predict, [example.text for example in dev])
    starter = _examples(shared_task, Dataset.Split.STARTER)
    # One pass over the starter set: λmax's pass already gives the prediction.
    fisher = _run_model(loaded.fisher, [example.text for example in starter], hints=True)

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
        _dev_scores(list(shared_task.labels), [e.label for e in dev], [r.label for r in rows])
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
        _finish(version, Status.READY)
        System.objects.filter(id=system.id).update(active_version=version)


def _finish(version: SystemVersion, status: str, reason: str = "", detail: str = "") -> None:
    """The one place a version's outcome is set; a failure leaves no file in the model store."""
    version.status = status
    version.failure_reason = reason
    version.failure_detail = detail
    version.finished_at = timezone.now()
    version.save()
    if status == Status.FAILED:
        store = Path(settings.MODEL_STORE)
        shutil.rmtree(store / f".partial-{version.uuid}", ignore_errors=True)
        shutil.rmtree(store / str(version.uuid), ignore_errors=True)
        if version.failure_reason not in SystemVersion.PLATFORM_FAILURES and version.archive_path:
            (Path(settings.UPLOAD_ROOT) / version.archive_path).unlink(missing_ok=True)


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
        _finish(version, Status.FAILED, failure.reason, failure.detail)
    except SoftTimeLimitExceeded:
        limit = settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT
        _finish(
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


def system_versions_reap_stale(*, now: Any = None) -> int:
    """Fail versions whose worker vanished (killed, lost, past the hard limit) without counting them.

    A worker that dies mid-validation cannot record anything itself; a version still
    ``running`` well after the hard time limit had one.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SYSTEM_VALIDATION_TIME_LIMIT + 60)
    stale = SystemVersion.objects.filter(status=Status.RUNNING, started_at__lt=cutoff)
    count = 0
    for version in stale:
        _finish(
            version,
            Status.FAILED,
            Reason.WORKER_LOST,
            "The worker running this validation was lost. This does not count against your uploads: upload again.",
        )
        count += 1
    return count


# --- Self-reported predictions ------------------------------------------------------------


def _read_prediction_rows(data: bytes, filename: str) -> tuple[list, str]:
    try:
        decoded = decode_upload(data)
        rows = read_rows(decoded.text, file_format=detect_format(filename))
    except FileFormatError as exc:
        raise PredictionsRejected([RowError(getattr(exc, "line", 0) or 0, str(exc))]) from None
    return rows, decoded.encoding


def _check_predictions(
    rows: list, *, expected: dict[str, str], key: str, labels: list[str], encoding: str
) -> dict[str, str]:
    """Every expected key predicted exactly once with a label of the task; else every problem."""
    errors: list[RowError] = []
    seen: dict[str, int] = {}
    found: dict[str, str] = {}
    for row in rows:
        if row.error:
            errors.append(RowError(row.line, row.error))
            continue
        value = (row.fields.get(key) or "").strip() if key == "id" else (row.fields.get(key) or "")
        label = (row.fields.get("label") or "").strip()
        if not value.strip():
            errors.append(RowError(row.line, f"the {key} is missing"))
            continue
        if value not in expected:
            errors.append(
                RowError(row.line, f"{key} {value[:80]!r} is not one of the texts to predict")
            )
            continue
        if value in seen:
            errors.append(
                RowError(
                    row.line,
                    f"{key} {value[:80]!r} is predicted twice (first on line {seen[value]})",
                )
            )
            continue
        seen[value] = row.line
        if label not in labels:
            errors.append(
                RowError(row.line, f"label {label!r} is not in the label set ({', '.join(labels)})")
            )
            continue
        found[value] = label
    missing = [value for value in expected if value not in seen]
    errors.extend(RowError(0, f"no prediction for {key} {value[:80]!r}") for value in missing)
    if errors:
        raise PredictionsRejected(errors, encoding=encoding)
    return found


def system_predictions_upload(
    *, system: System, actor: AbstractBaseUser, data: bytes, filename: str, source: str
) -> SystemVersion:
    """Take a self-reported system's predictions for the blind dev set or for the pair texts.

    Blind dev rows give ``id`` (the example's id) and ``label``; pair-text rows give
    ``text`` and ``label``. Every text must be predicted exactly once, with a label of the
    task; otherwise every problem is listed and nothing is stored.
    """
    _require_member(user=actor, team=system.team)
    if system.kind != System.Kind.SELF_REPORTED:
        raise ValidationError("This system is hosted: the platform computes its predictions.")
    shared_task = system.shared_task
    labels = list(shared_task.labels)
    rows, encoding = _read_prediction_rows(data, filename)
    if source == Prediction.Source.BLIND_DEV:
        _require_phase(
            shared_task=shared_task, kind=Phase.Kind.BUILD, what="Uploading blind-dev predictions"
        )
        examples = {
            example.external_id: example
            for example in _examples(shared_task, Dataset.Split.BLIND_DEV)
        }
        found = _check_predictions(
            rows, expected=dict.fromkeys(examples, ""), key="id", labels=labels, encoding=encoding
        )
        cells = [(examples[key], examples[key].text, label) for key, label in found.items()]
    elif source == Prediction.Source.PAIRS:
        require_break_phase_closed(shared_task=shared_task)
        texts = pair_texts(shared_task=shared_task)
        found = _check_predictions(
            rows, expected=dict.fromkeys(texts, ""), key="text", labels=labels, encoding=encoding
        )
        cells = [(None, text, label) for text, label in found.items()]
    else:
        raise ValidationError({"source": "Use blind_dev or pairs."})
    with transaction.atomic():
        System.objects.select_for_update().get(id=system.id)
        if source == Prediction.Source.BLIND_DEV:
            _check_upload_quota(system)
            version = SystemVersion.objects.create(
                system=system,
                number=_next_number(system),
                uploaded_by=actor,
                archive_name=filename,
                status=Status.READY,
            )
        else:
            version = system.active_version
            if version is None:
                raise ValidationError(
                    "Upload blind-dev predictions first: pair predictions extend the active version."
                )
            version.predictions.filter(source=Prediction.Source.PAIRS).delete()
        Prediction.objects.bulk_create(
            [
                Prediction(
                    system_version=version,
                    source=source,
                    example=example,
                    text=text,
                    text_sha256=text_digest(text),
                    label=label,
                )
                for example, text, label in cells
            ],
            batch_size=2000,
        )
        if source == Prediction.Source.BLIND_DEV:
            gold = [example.label for example, _, _ in cells]
            predicted = [label for _, _, label in cells]
            version.dev_accuracy, version.dev_macro_f1 = (
                _dev_scores(labels, gold, predicted) if cells else (None, None)
            )
            version.dev_count = len(cells)
            version.finished_at = timezone.now()
            version.save()
            system.active_version = version
            system.save(update_fields=["active_version"])
    return version


def pair_texts(*, shared_task: SharedTask) -> list[str]:
    """Every distinct text of every pair in the task's entries (originals and variants)."""
    from bibi.pairs.selectors import pairs_effective

    pairs = pairs_effective(shared_task=shared_task)
    texts: Iterable[str] = (
        text for pair in pairs for text in (pair["original_text"], pair["variant_text"])
    )
    return sorted(set(texts))
