"""Writes for builder systems: creating them, uploading hosted versions, choosing the active
one.

A hosted version's life: ``system_version_upload`` stores the archive and enqueues
``gpu.system_validate`` after commit; the worker runs ``validation.system_version_validate``
(the only code that loads models, kept out of this module so the web process never imports
torch), which ends the version ``ready`` or ``failed`` through ``outcomes.version_finish``
alone, so status, reason and clean-up are decided in one place.

Beside this module: ``outcomes`` (a version's outcome, and attempts that cannot speak for
themselves), ``housekeeping`` (the beat's sweep), ``predictions`` (self-reported systems).
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import storages
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.sharedtasks import services as sharedtask_services
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.systems import model_store, selectors
from bibi.systems.models import System, SystemVersion
from bibi.systems.tasks import validation_send_on_commit
from bibi.texts import name_clash_text, name_lookalike, name_normalize, name_problems
from bibi.uploads import upload_size_require

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason
Status = SystemVersion.Status
COPY_CHUNK = 1024 * 1024
ARCHIVE = "the model archive"
PREDICTIONS_FILE = "the predictions file"


# --- Who may do what ----------------------------------------------------------------------


def require_member(*, user: AbstractBaseUser, team: Team, doing: str) -> None:
    sharedtask_services.team_member_require(user=user, team=team, doing=doing)


def require_break_phase_closed(*, shared_task: SharedTask) -> None:
    sharedtask_services.phase_require_ended(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing="releasing the pair texts"
    )


# --- Systems ------------------------------------------------------------------------------


@transaction.atomic
def system_create(*, team: Team, actor: AbstractBaseUser, name: str, kind: str) -> System:
    require_member(user=actor, team=team, doing="creating a system")
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


def next_version_number(system: System) -> int:
    return (system.versions.aggregate(top=Max("number"))["top"] or 0) + 1


def require_upload_quota(system: System) -> None:
    quota = system.shared_task.max_uploads_per_system
    if selectors.uploads_left(system=system) == 0:
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


def archive_to_bucket(path: Path, *, sha256: str) -> None:
    """Copy a stored archive to the ``archives`` bucket by its digest, when one is configured,
    before its validation is sent: workers on other machines read it there. An archive
    already there (the same bytes uploaded before) is not sent again."""
    if not model_store.bucket_configured():
        return
    bucket = storages[model_store.ARCHIVE_STORAGE]
    key = model_store.archive_key(sha256)
    if not bucket.exists(key):
        with path.open("rb") as handle:
            bucket.save(key, File(handle))


def system_version_upload_require(*, system: System, actor: AbstractBaseUser) -> None:
    """Raise unless ``actor`` may upload a model archive to ``system`` now.

    The API asks before it reads the archive, so a refused upload is never received.
    """
    require_member(user=actor, team=system.team, doing="uploading a model")
    if system.kind != System.Kind.HOSTED:
        raise ValidationError("This system is self-reported: upload predictions, not a model.")
    sharedtask_services.phase_require_open(
        shared_task=system.shared_task, kind=Phase.Kind.BUILD, doing="uploading a model"
    )
    require_upload_quota(system)


def system_version_upload(
    *, system: System, actor: AbstractBaseUser, archive: UploadedFile, label_mapping: Any = None
) -> SystemVersion:
    """Keep a hosted model archive and queue its validation on the ``gpu`` queue.

    Who may upload, the phase and the quota are checked before the archive is stored, and
    the quota again under the system's lock, as the version is created.
    """
    system_version_upload_require(system=system, actor=actor)
    upload_size_require(archive.size, limit=settings.SYSTEM_UPLOAD_MAX_BYTES, what=ARCHIVE)
    mapping = clean_label_mapping(label_mapping, task_labels=system.shared_task.labels)
    version_uuid = uuid.uuid4()
    relative = Path("systems") / str(system.id) / f"{version_uuid}.archive"
    stored = Path(settings.UPLOAD_ROOT) / relative
    sha256, size = _store_upload(archive, stored)
    try:
        archive_to_bucket(stored, sha256=sha256)
        with transaction.atomic():
            System.objects.select_for_update().get(id=system.id)
            require_upload_quota(system)
            version = SystemVersion.objects.create(
                uuid=version_uuid,
                system=system,
                number=next_version_number(system),
                uploaded_by=actor,
                archive_name=archive.name or "",
                archive_path=str(relative),
                archive_sha256=sha256,
                archive_bytes=size,
                label_mapping=mapping,
                sent_at=timezone.now(),
            )
            sending = validation_send_on_commit(version.id)
    except BaseException:
        stored.unlink(missing_ok=True)
        raise
    if sending.sent is False:
        # Never sent: housekeeping sends it on its next tick, without waiting for a re-send.
        SystemVersion.objects.filter(id=version.id).update(sent_at=None)
    # Where the validation ran in the request (eager, not in the background): its outcome.
    version.refresh_from_db()
    # Read by the API to say the upload waits for the queue.
    version.queue_unreachable = sending.sent is False
    return version


@transaction.atomic
def system_version_activate(*, version: SystemVersion, actor: AbstractBaseUser) -> System:
    system = version.system
    require_member(user=actor, team=system.team, doing="choosing the active version")
    if version.status != Status.READY:
        raise ValidationError(
            f"Version {version.number} is {version.status}; only a ready version can be active."
        )
    system.active_version = version
    system.save(update_fields=["active_version"])
    evaluation_triggers.scoring_run_after_version(version=version)
    return system
