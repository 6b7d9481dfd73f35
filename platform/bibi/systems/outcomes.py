"""A hosted version's outcome, set in one place, and what becomes of an attempt that cannot
speak for itself.

``version_finish`` alone ends a version ``ready`` or ``failed`` (status, reason, a detail the
builder may read, clean-up). The worker's main process records a child that died
(``system_version_worker_died``) or was killed at the hard time limit
(``system_version_stopped_at_time_limit``); housekeeping and the next attempt fail a version
whose worker vanished too often (``version_fail_if_lost_too_often``).

Imported by ``tasks`` (the worker's main process) and ``validation``; it sends no task, so
``tasks`` can import it without a cycle.
"""

from __future__ import annotations

import logging
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.systems.models import SystemVersion

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason
Status = SystemVersion.Status


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


def version_requeue(version: SystemVersion, now: Any) -> None:
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


# What a team reads when validation failed for the platform's own reasons, not its model's.
PLATFORM_FAILED = (
    "The platform failed while validating this version. This does not count against "
    "your uploads: upload again."
)


def system_version_failed_in_process(*, version_id: int, cause: str) -> None:
    """A validation running in the web process (the embedded default) raised past its own
    handling: fail the version unless it already ended, so it never stays ``running``."""
    with transaction.atomic():
        version = SystemVersion.objects.select_for_update().filter(id=version_id).first()
        if version is None or version.status in (Status.READY, Status.FAILED):
            return
        logger.error("validation of version %s stopped in-process: %s", version_id, cause)
        version_finish(
            version,
            Status.FAILED,
            Reason.WORKER_LOST,
            PLATFORM_FAILED,
        )


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
            version_requeue(version, timezone.now())
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
