"""Celery tasks of the evaluation app: take ids, load, call a service.

Every task is safe to run twice (the database says what is still owed) and retries with
exponential back-off when the database, the broker or a model's archive is briefly away. Results are not
stored (the database is where a run's outcome is read).
"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError
from django.db import OperationalError as DatabaseUnavailable
from kombu.exceptions import OperationalError as BrokerUnavailable
from redis.exceptions import ConnectionError as RedisUnavailable

from bibi.evaluation import services
from bibi.systems.model_store import ArchiveUnavailable

# ArchiveUnavailable: a worker could not fetch a model's archive (the platform or the bucket
# briefly away); the chunk is tried again, and never failed against the model.
TRANSIENT = (
    DatabaseUnavailable,
    InterfaceError,
    BrokerUnavailable,
    RedisUnavailable,
    ArchiveUnavailable,
)
RETRIES = {
    "autoretry_for": TRANSIENT,
    "retry_backoff": 2,
    "retry_backoff_max": 120,
    "retry_jitter": True,
    "max_retries": settings.EVALUATION_TASK_MAX_RETRIES,
    "ignore_result": True,
    "acks_late": True,
}


@shared_task(
    name="gpu.cells_compute",
    soft_time_limit=settings.EVALUATION_CHUNK_SOFT_TIME_LIMIT,
    time_limit=settings.EVALUATION_CHUNK_TIME_LIMIT,
    **RETRIES,
)
def cells_compute_task(chunk_id: int) -> int:
    # Imported here, on the worker: computing cells loads models, and with them torch.
    from bibi.evaluation import compute

    return compute.cell_chunk_compute(chunk_id=chunk_id)


@shared_task(name="default.scoring_run_advance", **RETRIES)
def scoring_run_advance_task(run_id: int) -> str:
    return services.scoring_run_advance(run_id=run_id).status


@shared_task(name="default.scoring_run_score", **RETRIES)
def scoring_run_score_task(run_id: int) -> str:
    return services.scoring_run_score(run_id=run_id).status
