"""The audit log: every organizer action leaves an entry, written here and nowhere else."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from bibi.sharedtasks.models import (
    AuditLogEntry,
    SharedTask,
)


def audit_record(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser | None,
    action: str,
    target: str,
    details: dict[str, Any] | None = None,
) -> AuditLogEntry:
    return AuditLogEntry.objects.create(
        shared_task=shared_task, actor=actor, action=action, target=target, details=details or {}
    )
