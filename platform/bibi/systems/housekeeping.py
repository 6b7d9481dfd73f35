"""The beat's housekeeping for hosted versions: what the broker lost is sent again, what a
vanished worker held is taken back, and half-unpacked models nobody owns are removed."""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from bibi.queue import enqueue_on_commit
from bibi.systems.models import SystemVersion
from bibi.systems.outcomes import version_fail_if_lost_too_often, version_requeue
from bibi.systems.tasks import system_validate_task

Status = SystemVersion.Status


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
    now = now or timezone.now()
    done = {"resent": 0, "requeued": 0, "failed": 0, "partials_removed": 0}
    with transaction.atomic():
        for version in _lost_versions(now).select_for_update(skip_locked=True):
            if version_fail_if_lost_too_often(version):
                done["failed"] += 1
            else:
                version_requeue(version, now)
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
