"""Celery tasks for builder systems: take ids, load, call a service."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from bibi.systems import services


@shared_task(
    name="gpu.system_validate",
    soft_time_limit=settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT,
    time_limit=settings.SYSTEM_VALIDATION_TIME_LIMIT,
)
def system_validate_task(version_id: int) -> str:
    # Imported here, on the worker: validation loads models, and with them torch.
    from bibi.systems import validation

    return validation.system_version_validate(version_id=version_id).status


@shared_task(name="default.system_versions_reap_stale")
def system_versions_reap_stale_task() -> int:
    return services.system_versions_reap_stale()
