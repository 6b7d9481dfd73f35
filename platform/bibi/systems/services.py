"""Writes for builder systems: creating them, uploading versions, recording outcomes, and
taking self-reported predictions.

A hosted version's life: ``system_version_upload`` stores the archive and enqueues
``gpu.system_validate`` after commit; the worker runs ``validation.system_version_validate``
(the only code that loads models, kept out of this module so the web process never imports
torch), which ends the version ``ready`` or ``failed`` through ``version_finish`` alone, so
status, reason and clean-up are decided in one place.

When the worker cannot speak for itself, others do: the worker's main process records a child
that died (``system_version_worker_died``) or was killed at the hard time limit
(``system_version_stopped_at_time_limit``), and the beat's housekeeping
(``system_versions_housekeep``) sends again what the broker lost and takes back what a
vanished worker held.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Max, Q
from django.utils import timezone

import scoring
from bibi.evaluation import triggers as evaluation_triggers
from bibi.files import (
    FileFormatError,
    Row,
    RowError,
    RowErrors,
    decode_upload,
    detect_format,
    iter_rows,
)
from bibi.labelmaps import LabelLookup
from bibi.queue import enqueue_on_commit
from bibi.sharedtasks import services as sharedtask_services
from bibi.sharedtasks.models import Dataset, Phase, SharedTask, Team
from bibi.systems import selectors
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction, System, SystemVersion, text_digest
from bibi.texts import name_clash_text, name_lookalike, name_normalize, name_problems
from bibi.uploads import upload_size_require

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason
Status = SystemVersion.Status
COPY_CHUNK = 1024 * 1024
ARCHIVE = "the model archive"
PREDICTIONS_FILE = "the predictions file"


# --- Who may do what ----------------------------------------------------------------------


def _require_member(*, user: AbstractBaseUser, team: Team, doing: str) -> None:
    sharedtask_services.team_member_require(user=user, team=team, doing=doing)


def require_break_phase_closed(*, shared_task: SharedTask) -> None:
    sharedtask_services.phase_require_ended(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing="releasing the pair texts"
    )


def require_pair_predictions_window(*, shared_task: SharedTask) -> None:
    """Pair predictions are taken while the window of ``selectors.pair_predictions_window``
    is open, and refused before and after with the window's dates."""
    doing = "uploading pair predictions"
    sharedtask_services.phase_require_ended(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing=doing
    )
    window = selectors.pair_predictions_window(shared_task=shared_task)
    if window is not None and window.has_closed():
        raise ValidationError(
            f"Pair predictions were taken until {sharedtask_services.moment_text(window.closes_at)} "
            f"(server time): {doing} is no longer possible."
        )


# --- Systems ------------------------------------------------------------------------------


@transaction.atomic
def system_create(*, team: Team, actor: AbstractBaseUser, name: str, kind: str) -> System:
    _require_member(user=actor, team=team, doing="creating a system")
    if team.kind != Team.Kind.BUILDER:
        raise ValidationError("Only builder teams have systems.")
    if kind not in System.Kind.values:
        raise ValidationError(
            {"kind": f"'{kind}' is not a system kind: use hosted or self_reported."}
        )
    name = name_normalize(name)
    if not name:
        raise ValidationError({"name": "A system needs a name."})
    if name_problems(name):
        raise ValidationError({"name": name_problems(name)})
    Team.objects.select_for_update().get(id=team.id)
    quota = team.shared_task.max_systems_per_team
    if team.systems.count() >= quota:
        raise ValidationError(
            f"This team already has {quota} system(s), the most this shared task allows."
        )
    if (other := name_lookalike(name, team.systems.values_list("name", flat=True))) is not None:
        same, whose = f"The team already has a system named '{name}'.", "another system of the team"
        raise ValidationError({"name": name_clash_text(name, other, same=same, whose=whose)})
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
                upload_size_require(size, limit=settings.SYSTEM_UPLOAD_MAX_BYTES, what=ARCHIVE)
            digest.update(chunk)
            sink.write(chunk)
    return digest.hexdigest(), size


def system_version_upload_require(*, system: System, actor: AbstractBaseUser) -> None:
    """Raise unless ``actor`` may upload a model archive to ``system`` now.

    The API asks before it reads the archive, so a refused upload is never received.
    """
    _require_member(user=actor, team=system.team, doing="uploading a model")
    if system.kind != System.Kind.HOSTED:
        raise ValidationError("This system is self-reported: upload predictions, not a model.")
    sharedtask_services.phase_require_open(
        shared_task=system.shared_task, kind=Phase.Kind.BUILD, doing="uploading a model"
    )
    _check_upload_quota(system)


def system_version_upload(
    *, system: System, actor: AbstractBaseUser, archive: UploadedFile, label_mapping: Any = None
) -> SystemVersion:
    """Keep a hosted model archive and queue its validation on the ``gpu`` queue.

    Who may upload, the phase and the quota are checked before the archive is stored, and
    the quota again under the system's lock, as the version is created.
    """
    from bibi.systems.tasks import system_validate_task

    system_version_upload_require(system=system, actor=actor)
    upload_size_require(archive.size, limit=settings.SYSTEM_UPLOAD_MAX_BYTES, what=ARCHIVE)
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
                sent_at=timezone.now(),
            )
            sending = enqueue_on_commit(system_validate_task, version.id)
    except BaseException:
        stored.unlink(missing_ok=True)
        raise
    if sending.sent is False:
        # Never sent: housekeeping sends it on its next tick, without waiting for a re-send.
        SystemVersion.objects.filter(id=version.id).update(sent_at=None)
    # On the embedded default the validation ran in-process on commit: answer with its outcome.
    version.refresh_from_db()
    # Read by the API to say the upload waits for the queue.
    version.queue_unreachable = sending.sent is False
    return version


@transaction.atomic
def system_version_activate(*, version: SystemVersion, actor: AbstractBaseUser) -> System:
    system = version.system
    _require_member(user=actor, team=system.team, doing="choosing the active version")
    if version.status != Status.READY:
        raise ValidationError(
            f"Version {version.number} is {version.status}; only a ready version can be active."
        )
    system.active_version = version
    system.save(update_fields=["active_version"])
    evaluation_triggers.scoring_run_after_version(version=version)
    return system


# --- A version's outcome, set in one place ---------------------------------------------


def dev_scores(labels: list[str], gold: list[str], predicted: list[str]) -> tuple[float, float]:
    code = {label: i for i, label in enumerate(labels)}
    gold_codes = np.array([code[label] for label in gold], dtype=np.int64)
    predicted_codes = np.array(
        [[code.get(label, len(labels)) for label in predicted]], dtype=np.int64
    )
    groups = np.zeros(len(gold), dtype=np.int64)
    counts = scoring.confusion_counts(gold_codes, predicted_codes, groups, 1, len(labels))
    return float(scoring.accuracy(counts)[0, 0]), float(scoring.macro_f1(counts)[0, 0])


def dataset_examples(shared_task: SharedTask, split: str) -> list:
    dataset = shared_task.datasets.filter(split=split).first()
    return list(dataset.examples.order_by("position")) if dataset else []


def _server_roots() -> list[str]:
    """Directories of this server that a message may quote, the most specific first."""
    roots = {
        settings.MODEL_STORE,
        settings.UPLOAD_ROOT,
        settings.VAR_DIR,
        settings.BASE_DIR,
        settings.FILE_UPLOAD_TEMP_DIR,
        tempfile.gettempdir(),
        sys.prefix,
    }
    return sorted((str(root).rstrip("/") for root in roots if root), key=len, reverse=True)


def public_detail(detail: str, version: SystemVersion) -> str:
    """A failure detail as the builder may read it: no path of this server in it.

    Paths inside the unpacked archive stay readable, relative to the archive; any other path
    under the model store, the upload root, the temporary directories or the installation
    becomes "<server path>".
    """
    store = str(settings.MODEL_STORE).rstrip("/")
    for unpacked in (f"{store}/.partial-{version.uuid}", f"{store}/{version.uuid}"):
        detail = re.sub(re.escape(unpacked) + r"/?", "<archive>/", detail)
    for root in _server_roots():
        detail = re.sub(
            r"(?<![\w<])" + re.escape(root) + r"(?=/|\b)[^\s'\"(),;]*", "<server path>", detail
        )
    return detail


def version_finish(version: SystemVersion, status: str, reason: str = "", detail: str = "") -> None:
    """The one place a version's outcome is set; a failure leaves no file in the model store."""
    version.status = status
    version.failure_reason = reason
    version.failure_detail = public_detail(detail, version)
    version.finished_at = timezone.now()
    version.save()
    evaluation_triggers.scoring_run_after_version(version=version)
    if status == Status.FAILED:
        store = Path(settings.MODEL_STORE)
        shutil.rmtree(store / f".partial-{version.uuid}", ignore_errors=True)
        shutil.rmtree(store / str(version.uuid), ignore_errors=True)
        if version.failure_reason not in SystemVersion.WORKER_FAILURES and version.archive_path:
            (Path(settings.UPLOAD_ROOT) / version.archive_path).unlink(missing_ok=True)


def _requeue(version: SystemVersion, now: Any) -> None:
    """Back to the queue; the caller sends it (or the broker redelivers it) at ``now``."""
    version.status = Status.QUEUED
    version.queued_at = version.sent_at = now
    version.worker = ""
    version.heartbeat_at = None
    version.save(update_fields=["status", "queued_at", "sent_at", "worker", "heartbeat_at"])


def _version_in_hand(version_id: int, worker: str) -> SystemVersion | None:
    """The version, locked, if ``worker`` is the process running it; else None."""
    version = SystemVersion.objects.select_for_update().filter(id=version_id).first()
    if version is None or version.status != Status.RUNNING or version.worker != worker:
        return None
    return version


def system_version_worker_died(*, version_id: int, worker: str, cause: str) -> None:
    """The worker process running ``version_id`` died (killed by the kernel for memory, a
    ``kill -9``): queue it for another attempt, or past ``SYSTEM_VALIDATION_MAX_ATTEMPTS`` fail
    it as ``worker_crashed``. Called by the worker's main process, which saw its child die.

    It counts against the upload quota only when this archive crashed its worker every time.
    """
    with transaction.atomic():
        version = _version_in_hand(version_id, worker)
        if version is None:
            return
        version.crashes += 1
        if version.attempts < settings.SYSTEM_VALIDATION_MAX_ATTEMPTS:
            version.save(update_fields=["crashes"])
            _requeue(version, timezone.now())
            return
        counted = version.crashes >= version.attempts
        version_finish(
            version,
            Status.FAILED,
            Reason.WORKER_CRASHED,
            f"The model was killed while running, most likely for memory ({cause}), on "
            f"{version.crashes} of {version.attempts} attempts. "
            + (
                "This counts against your uploads: make the model smaller, or its batches."
                if counted
                else "Not every attempt crashed, so this does not count against your uploads."
            ),
        )


def system_version_stopped_at_time_limit(*, version_id: int, worker: str, limit: float) -> None:
    """The worker killed ``version_id``'s process at the hard time limit: a time-out."""
    with transaction.atomic():
        version = _version_in_hand(version_id, worker)
        if version is not None:
            version_finish(
                version,
                Status.FAILED,
                Reason.TIMEOUT,
                f"Validation took longer than the hard limit of {limit:g} seconds and was stopped.",
            )


def version_fail_if_lost_too_often(version: SystemVersion) -> bool:
    """Fail a version whose worker vanished as ``worker_lost`` once it has had its
    ``SYSTEM_VALIDATION_MAX_ATTEMPTS``; True when it did. The caller holds the row locked."""
    if version.attempts < settings.SYSTEM_VALIDATION_MAX_ATTEMPTS:
        return False
    version_finish(
        version,
        Status.FAILED,
        Reason.WORKER_LOST,
        f"The worker running this validation was lost on {version.attempts} attempts. "
        "This does not count against your uploads: upload again.",
    )
    return True


def _lost_versions(now: Any) -> Any:
    """Running versions with no sign of life for ``SYSTEM_WORKER_LOST_AFTER`` seconds."""
    cutoff = now - timedelta(seconds=settings.SYSTEM_WORKER_LOST_AFTER)
    return SystemVersion.objects.filter(status=Status.RUNNING).filter(
        Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True, started_at__lt=cutoff)
    )


def system_versions_housekeep(*, now: Any = None) -> dict[str, int]:
    """Nothing stays stuck: the beat's housekeeping for hosted versions.

    - A ``running`` version with no heartbeat for ``SYSTEM_WORKER_LOST_AFTER`` seconds lost its
      worker (machine gone, process killed with its parent): it is queued and sent again, or,
      past ``SYSTEM_VALIDATION_MAX_ATTEMPTS``, failed as ``worker_lost`` (not counted).
    - A ``queued`` version sent more than ``SYSTEM_QUEUE_RESEND_AFTER`` seconds ago is sent
      again: the broker may have been down or lost its queue. A duplicate message finds the
      version taken or done and does nothing.
    - A ``.partial-*`` directory in the model store that no running version owns (a worker
      killed while unpacking) is removed.
    """
    from bibi.systems.tasks import system_validate_task

    now = now or timezone.now()
    done = {"resent": 0, "requeued": 0, "failed": 0, "partials_removed": 0}
    with transaction.atomic():
        for version in _lost_versions(now).select_for_update(skip_locked=True):
            if version_fail_if_lost_too_often(version):
                done["failed"] += 1
            else:
                _requeue(version, now)
                enqueue_on_commit(system_validate_task, version.id)
                done["requeued"] += 1
        resend_before = now - timedelta(seconds=settings.SYSTEM_QUEUE_RESEND_AFTER)
        waiting = SystemVersion.objects.filter(status=Status.QUEUED).filter(
            Q(sent_at__isnull=True) | Q(sent_at__lt=resend_before)
        )
        for version in waiting.select_for_update(skip_locked=True):
            version.sent_at = now
            version.save(update_fields=["sent_at"])
            enqueue_on_commit(system_validate_task, version.id)
            done["resent"] += 1
    done["partials_removed"] = _remove_orphan_partials()
    return done


def _remove_orphan_partials() -> int:
    store = Path(settings.MODEL_STORE)
    if not store.is_dir():
        return 0
    # Listed before the running versions are read: a version claimed in between has no
    # partial directory yet (a worker unpacks only after its claim has committed).
    partials = list(store.glob(".partial-*"))
    running = {
        str(key)
        for key in SystemVersion.objects.filter(status=Status.RUNNING).values_list(
            "uuid", flat=True
        )
    }
    removed = 0
    for entry in partials:
        if entry.name.removeprefix(".partial-") not in running:
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed


# --- Self-reported predictions ------------------------------------------------------------


def _read_prediction_rows(
    data: bytes, filename: str
) -> tuple[Callable[[], Iterator[Row]], str, str]:
    """The file's rows, as often as they are wanted (read anew each time, never kept)."""
    try:
        file_format = detect_format(filename)
        decoded = decode_upload(data)
        iter_rows(decoded.text, file_format=file_format)
    except FileFormatError as error:
        raise PredictionsRejected.from_format_error(error, source=filename) from None

    def rows() -> Iterator[Row]:
        return iter_rows(decoded.text, file_format=file_format)

    return rows, decoded.encoding, file_format


def _check_predictions(
    rows: Iterable[Row],
    *,
    expected: dict[str, str],
    key: str,
    labels: LabelLookup,
    rejected: Callable[[RowErrors], PredictionsRejected],
) -> dict[str, str]:
    """Every expected key predicted exactly once with a label of the task; else every problem."""
    errors = RowErrors()
    seen: dict[str, int] = {}
    found: dict[str, str] = {}
    for row in rows:
        if row.error:
            errors.add(row.line, row.error)
            continue
        value = (row.fields.get(key) or "").strip() if key == "id" else (row.fields.get(key) or "")
        raw_label = row.fields.get("label")
        if not value.strip():
            errors.add(row.line, f"the {key} is missing")
            continue
        if value not in expected:
            errors.add(row.line, f"{key} {value[:80]!r} is not one of the texts to predict")
            continue
        if value in seen:
            errors.add(
                row.line, f"{key} {value[:80]!r} is predicted twice (first on line {seen[value]})"
            )
            continue
        seen[value] = row.line
        label = labels.resolve(raw_label)
        if label is None:
            errors.add(row.line, labels.problem(raw_label))
            continue
        found[value] = label
    missing = [value for value in expected if value not in seen]
    for value in missing:
        errors.add(0, f"no prediction for {key} {value[:80]!r}")
    if errors:
        raise rejected(errors)
    return found


def _sentence_as_text(
    rows: Callable[[], Iterator[Row]], *, rejected: Callable[[RowErrors], PredictionsRejected]
) -> Callable[[], Iterator[Row]]:
    """Pair-text rows may name the text ``sentence``, as the 2017 files do."""
    named_sentence = False
    named_text: Row | None = None
    for row in rows():
        if not row.error:
            named_sentence = named_sentence or "sentence" in row.fields
            named_text = named_text or (row if "text" in row.fields else None)
    if not named_sentence:
        return rows
    if named_text is not None:
        raise rejected(
            RowErrors(
                [
                    RowError(
                        named_text.line, "the file has both text and sentence: give the text in one"
                    )
                ]
            )
        )

    def renamed() -> Iterator[Row]:
        for row in rows():
            if not row.error and "sentence" in row.fields:
                row.fields["text"] = row.fields.pop("sentence")
            yield row

    return renamed


def _self_reported_version(
    *, system: System, actor: AbstractBaseUser, filename: str
) -> SystemVersion:
    """A new ready version of a self-reported system, made active; counted as an upload."""
    _check_upload_quota(system)
    version = SystemVersion.objects.create(
        system=system,
        number=_next_number(system),
        uploaded_by=actor,
        archive_name=filename,
        status=Status.READY,
        finished_at=timezone.now(),
    )
    system.active_version = version
    system.save(update_fields=["active_version"])
    return version


def _require_predictions_window(*, shared_task: SharedTask, source: str) -> None:
    if source == Prediction.Source.BLIND_DEV:
        sharedtask_services.phase_require_open(
            shared_task=shared_task, kind=Phase.Kind.BUILD, doing="uploading blind-dev predictions"
        )
    elif source == Prediction.Source.PAIRS:
        require_pair_predictions_window(shared_task=shared_task)
    else:
        raise ValidationError({"source": "Use blind_dev or pairs."})


def system_predictions_upload_require(
    *, system: System, actor: AbstractBaseUser, source: str | None = None
) -> None:
    """Raise unless ``actor`` may upload predictions of ``source`` to ``system`` now.

    With ``source`` None (the API, before it has read the form that says which), predictions
    of either source will do: a file that can be taken for neither is refused unread, with
    the reason of the window that matters now: the blind dev set's until the build phase
    has ended (nothing else can come before), the pair texts' after it.
    """
    _require_member(user=actor, team=system.team, doing="uploading predictions")
    if system.kind != System.Kind.SELF_REPORTED:
        raise ValidationError("This system is hosted: the platform computes its predictions.")
    if source is not None:
        _require_predictions_window(shared_task=system.shared_task, source=source)
        return
    refusals: dict[str, ValidationError] = {}
    for candidate in Prediction.Source.values:
        try:
            _require_predictions_window(shared_task=system.shared_task, source=candidate)
        except ValidationError as error:
            refusals[candidate] = error
        else:
            return
    build = system.shared_task.phases.filter(kind=Phase.Kind.BUILD).first()
    if build is not None and timezone.now() >= build.ends_at:
        raise refusals[Prediction.Source.PAIRS]
    raise refusals[Prediction.Source.BLIND_DEV]


def system_predictions_upload(
    *,
    system: System,
    actor: AbstractBaseUser,
    data: bytes,
    filename: str,
    source: str,
    label_map: dict[str, str] | None = None,
) -> SystemVersion:
    """Take a self-reported system's predictions for the blind dev set or for the pair texts.

    Blind dev rows give ``id`` (the example's id) and ``label``; pair-text rows give
    ``text`` (or ``sentence``) and ``label``. Every text must be predicted exactly once, with
    a label of the task (or one ``label_map`` translates, see ``bibi.labelmaps``); otherwise
    every problem is listed (``PredictionsRejected``) and nothing is stored. Pair predictions
    are taken during the pair-prediction window only; a system without blind-dev predictions
    gets its first version from them, whose ``dev_accuracy`` stays empty.
    """
    system_predictions_upload_require(system=system, actor=actor, source=source)
    shared_task = system.shared_task
    labels = list(shared_task.labels)
    lookup = LabelLookup.build(label_map, labels=labels)
    rows, encoding, file_format = _read_prediction_rows(data, filename)

    def rejected(errors: RowErrors) -> PredictionsRejected:
        return PredictionsRejected(
            errors, source=filename, encoding=encoding, file_format=file_format
        )

    if source == Prediction.Source.PAIRS:
        rows = _sentence_as_text(rows, rejected=rejected)

    if source == Prediction.Source.BLIND_DEV:
        examples = {
            example.external_id: example
            for example in dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
        }
        found = _check_predictions(
            rows(), expected=dict.fromkeys(examples, ""), key="id", labels=lookup, rejected=rejected
        )
        cells = [(examples[key], examples[key].text, label) for key, label in found.items()]
    else:
        texts = pair_texts(shared_task=shared_task)
        found = _check_predictions(
            rows(), expected=dict.fromkeys(texts, ""), key="text", labels=lookup, rejected=rejected
        )
        cells = [(None, text, label) for text, label in found.items()]
    with transaction.atomic():
        System.objects.select_for_update().get(id=system.id)
        # Pair predictions extend the active version; a system that never predicted the
        # blind dev set (as in 2017) gets its first version from them, with no dev scores.
        version = system.active_version
        if source == Prediction.Source.BLIND_DEV or version is None:
            version = _self_reported_version(system=system, actor=actor, filename=filename)
        else:
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
                dev_scores(labels, gold, predicted) if cells else (None, None)
            )
            version.dev_count = len(cells)
            version.save()
        if source == Prediction.Source.PAIRS:
            evaluation_triggers.scoring_run_after_version(version=version)
    return version


def pair_texts(*, shared_task: SharedTask) -> list[str]:
    """Every distinct text of every pair in the task's entries (originals and variants)."""
    from bibi.pairs.selectors import pairs_effective

    pairs = pairs_effective(shared_task=shared_task)
    texts: Iterable[str] = (
        text for pair in pairs for text in (pair["original_text"], pair["variant_text"])
    )
    return sorted(set(texts))
