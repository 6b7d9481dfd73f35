"""Suggestions and draft-variant checks for breakers: the request checked, started as a job
(``jobs.py``) and followed, the answer named and judged for the viewer, the intended labels.
The models run on a worker (``bibi.guidance.tasks``, ``gpu.guidance_suggest`` on the
``interactive`` queue), never in the web process; in-process on the embedded default.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

import redis
from celery.exceptions import TimeoutError as ResultTimeout
from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import PermissionDenied, ValidationError
from kombu.exceptions import OperationalError

from bibi.celery import app
from bibi.guidance import jobs
from bibi.guidance.drafts import clean_variant
from bibi.guidance.kinds import GUIDANCE_KINDS, SuggestRequest
from bibi.guidance.ranking import (
    guide_order,
    ranking_systems,
    starter_percentiles,
)
from bibi.guidance.tasks import guidance_suggest_task
from bibi.guidance.visibility import GuidanceSight, guidance_sight_require
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems.models import System

logger = logging.getLogger(__name__)

RESULT_KEY = "guidance:result:{}"


@dataclass(frozen=True)
class JobOutcome:
    """Where a job stands for its asker: ``done`` with the ``answer``, ``waiting`` (poll again),
    or ``failed`` with the reason in ``detail``. ``record`` says what was asked."""

    record: jobs.JobRecord
    status: str
    answer: dict[str, Any] | None = None
    detail: str | None = None

    @property
    def job_id(self) -> str:
        return self.record.id


class JobNotFound(Exception):
    """No such job for this caller: unknown, expired, another user's or another task's."""


class JobStoreUnreachable(Exception):
    """Redis, which keeps the jobs' records and counts, cannot be reached just now."""


UNREACHABLE = (
    "The job store (Redis) is unreachable, so no job can be queued or followed; "
    "try again in a moment."
)


def suggest_start(
    *,
    shared_task: SharedTask,
    user: Any,
    request: SuggestRequest,
    viewer: task_selectors.Viewer | None = None,
) -> JobOutcome:
    """Ask for verified suggestions for one starter original, or for what every ready hosted
    system does with a draft variant of it and whether that would break it given the intended
    labels; the answer if it came within ``GUIDANCE_SUGGEST_WAIT`` seconds, else the job to
    poll (``suggest_job``).

    The models run in one ``gpu.guidance_suggest`` task on the ``interactive`` queue
    (in-process on the embedded default: done at once). Systems are named for ``user``;
    without ``guidance_shows_systems`` (and not an organizer) the answer holds counts only.

    Raises ``PermissionDenied`` (guidance not visible), ``ValidationError`` (an unknown
    original, system or label, an empty or unchanged or too long variant) and
    ``jobs.CapReached`` (too many jobs in flight for the user, the team or the site).
    """
    sight = guidance_sight_require(user=user, shared_task=shared_task, viewer=viewer)
    example, variant, variant_label = _checked(shared_task, sight, request)
    guidance = GUIDANCE_KINDS.of(shared_task.kind)
    extra = guidance.request(shared_task, example, variant, request)
    systems = ranking_systems(shared_task=shared_task, system_ids=request.system_ids)
    if not systems:
        raise ValidationError(
            {"system": "This task has no ready hosted system to run the text through yet."}
        )
    systems = _guide_first(systems, example)
    team = sight.viewer.team
    record = jobs.JobRecord(
        id=jobs.new_job_id(),
        user_id=user.id,
        team_id=team.id if team is not None else None,
        shared_task_id=shared_task.id,
        original_id=example.external_id,
        variant=None if variant is None else variant[0],
        variant_label=variant_label,
        system_ids=tuple(system.id for system in systems),
        version_ids=tuple(system.active_version_id or 0 for system in systems),
        created=time.time(),
        variant_texts=variant,
    )
    refused = _admit(record)
    if refused is not None:
        return refused
    kind = shared_task.kind
    items = (
        guidance.model_input(kind, kind.item(example)),
        None if variant is None else guidance.model_input(kind, variant),
    )
    failed = _send(record, items, request, extra)
    if failed is not None:
        jobs.release(record)
        return JobOutcome(record, "failed", detail=failed)
    return _outcome(record, shared_task, sight, wait=settings.GUIDANCE_SUGGEST_WAIT)


def _admit(record: jobs.JobRecord) -> JobOutcome | None:
    """Count the job in flight and keep its record (``jobs.CapReached`` past a cap); the
    failed outcome when Redis, which keeps both, cannot be reached: with it away no job could
    be followed, so none is sent (the throttle before this let the request through)."""
    try:
        jobs.admit(record)
        jobs.record_save(record)
    except redis.RedisError as error:
        logger.warning("guidance job store unreachable: %s: %s", error.__class__.__name__, error)
        with contextlib.suppress(redis.RedisError):
            jobs.release(record)
        return JobOutcome(record, "failed", detail=UNREACHABLE)
    return None


def suggest_job(
    *,
    shared_task: SharedTask,
    user: Any,
    job_id: str,
    viewer: task_selectors.Viewer | None = None,
) -> JobOutcome:
    """Where ``user``'s job ``job_id`` on ``shared_task`` stands (``JobOutcome``). Raises
    ``JobNotFound`` for a job that is not theirs (or expired, after ``GUIDANCE_JOB_TTL``
    seconds), ``PermissionDenied`` if the guidance was closed to them since,
    ``JobStoreUnreachable`` while Redis is away."""
    try:
        record = jobs.record_get(job_id) if job_id.isalnum() else None
    except redis.RedisError as error:
        logger.warning("guidance job store unreachable: %s: %s", error.__class__.__name__, error)
        raise JobStoreUnreachable(UNREACHABLE) from None
    if (
        record is None
        or record.user_id != getattr(user, "id", None)
        or record.shared_task_id != shared_task.id
    ):
        raise JobNotFound("No job of yours has this id (a job is kept for a while only).")
    sight = guidance_sight_require(user=user, shared_task=shared_task, viewer=viewer)
    return _outcome(record, shared_task, sight, wait=0)


def _checked(
    shared_task: SharedTask, sight: GuidanceSight, request: SuggestRequest
) -> tuple[Example, tuple[str, ...] | None, str]:
    """The original, the cleaned variant item (None: suggestions) and the intended label."""
    example = task_selectors.example_get(
        shared_task=shared_task, split=Dataset.Split.STARTER, external_id=request.original_id
    )
    if example is None:
        raise ValidationError(
            {"original_id": f"{request.original_id!r} is not an original of the starter set."}
        )
    variant = clean_variant(shared_task, example, request)
    variant_label = request.variant_label or example.label
    GUIDANCE_KINDS.of(shared_task.kind).label_check(shared_task, variant_label)
    for name, value, most in (("top_k", request.top_k, 20), ("words", request.words, 10)):
        if not 1 <= value <= most:
            raise ValidationError({name: f"Give a number from 1 to {most}."})
    if request.system_ids is not None and not sight.per_system:
        raise PermissionDenied("This task shows the ranking only, not per-system guidance.")
    return example, variant, variant_label


def _send(
    record: jobs.JobRecord,
    items: tuple[Any, Any],
    request: SuggestRequest,
    extra: dict[str, Any],
) -> str | None:
    """Send the job's task (run it, on the embedded default); the reason when that failed.
    ``items``: the original and the draft variant (None) as the worker reads them (a text, or
    a sentence pair's texts); ``extra``: the task's keyword arguments for the task's kind
    (``GuidanceKind.request``)."""
    timeout = settings.GUIDANCE_SUGGEST_TIMEOUT
    original, variant = items
    try:
        result = guidance_suggest_task.apply_async(
            args=(list(record.version_ids), original, variant, request.top_k, request.words),
            kwargs=extra,
            task_id=record.id,
            # Nobody polls past this: a message not started by then expires unrun, and a task
            # running past it stops.
            expires=timeout,
            soft_time_limit=timeout,
            time_limit=timeout + 15,
        )
    except OperationalError as error:
        return f"The queue is unreachable; try again in a moment ({error})."
    except Exception as error:  # in-process (embedded): the task itself failed
        logger.exception("gpu.guidance_suggest failed")
        return (
            f"The model work failed ({error.__class__.__name__}); the operators have the details."
        )
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # No result backend in-process: the job's answer is kept beside its record.
        cache.set(RESULT_KEY.format(record.id), result.result, timeout=settings.GUIDANCE_JOB_TTL)
    return None


def _state(record: jobs.JobRecord, wait: float) -> tuple[str, Any]:
    """The task's state (``SUCCESS``, ``FAILURE``, ``REVOKED``, else waiting) and its result,
    waiting up to ``wait`` seconds for it."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        payload = cache.get(RESULT_KEY.format(record.id))
        return ("SUCCESS", payload) if payload is not None else ("PENDING", None)
    result = app.AsyncResult(record.id)
    if wait > 0:
        with contextlib.suppress(ResultTimeout):
            result.get(timeout=wait, propagate=False)
    return result.state, result.result


def _outcome(
    record: jobs.JobRecord, shared_task: SharedTask, sight: GuidanceSight, *, wait: float
) -> JobOutcome:
    state, payload = _state(record, wait)
    timeout = settings.GUIDANCE_SUGGEST_TIMEOUT
    if state not in ("SUCCESS", "FAILURE", "REVOKED"):
        if time.time() < jobs.in_flight_deadline(record.created):
            return JobOutcome(record, "waiting")
        state = "REVOKED"  # no worker took it before it expired
    jobs.release(record)
    if state == "REVOKED":
        detail = (
            f"No model worker took the job within {timeout} seconds; they may be busy. "
            "Try again in a moment."
        )
    elif state == "FAILURE":
        logger.error("gpu.guidance_suggest %s failed: %r", record.id, payload)
        detail = (
            f"The model work failed ({payload.__class__.__name__}); the operators have the details."
        )
    elif "error" in payload:
        detail = f"A system could not run: {payload['error']}"
    else:
        return JobOutcome(record, "done", answer=_answer(record, shared_task, sight, payload))
    return JobOutcome(record, "failed", detail=detail)


def _answer(
    record: jobs.JobRecord, shared_task: SharedTask, sight: GuidanceSight, payload: dict[str, Any]
) -> dict[str, Any]:
    """The worker's payload (keyed by version id) named and judged for the viewer."""
    example = task_selectors.example_get(
        shared_task=shared_task, split=Dataset.Split.STARTER, external_id=record.original_id
    )
    if example is None:
        raise JobNotFound("The original of this job is no longer in the starter set.")
    systems = System.objects.filter(id__in=record.system_ids).select_related("team")
    by_id = {system.id: system for system in systems}
    by_version = {
        str(version_id): by_id[system_id]
        for system_id, version_id in zip(record.system_ids, record.version_ids, strict=True)
        if system_id in by_id
    }
    answer = GUIDANCE_KINDS.of(shared_task.kind).answer
    return answer(record, shared_task, sight, payload, example, by_version)


def _guide_first(systems: list[System], example: Example) -> list[System]:
    """The systems in ``guide_order`` for the original (one without its λmax last)."""
    percentiles = starter_percentiles(systems)
    percentile = {system.id: percentiles[system.id].get(example.id, -1.0) for system in systems}
    by_id = {system.id: system for system in systems}
    return [by_id[system_id] for system_id in guide_order(percentile)]
