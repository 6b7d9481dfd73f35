"""Jobs: model work a person waits for (suggestions, draft checks) that never holds a web worker.

A checked request (``suggest.py``) becomes a **job**: admitted under the in-flight caps, sent as
``gpu.guidance_suggest`` to the ``interactive`` queue with the job id as its task id, and waited
for at most ``GUIDANCE_SUGGEST_WAIT`` seconds. Then the caller has the answer, or the job id to
poll. A job's record (who asked, for which task, what) is kept ``GUIDANCE_JOB_TTL`` seconds in
the cache; its result in the Celery result backend. On the embedded default the task runs
in-process, so the job is done when it is sent.

**In flight** is from admission until the worker has finished (success or failure: the worker
releases it, ``task_postrun`` in ``tasks.py``), or until ``in_flight_deadline`` for a message no
worker took before it expired. Counts are kept per user, per team and overall in Redis sorted
sets (one atomic script checks the three caps and admits), in this process's memory on the
embedded default.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.cache import cache

RECORD_KEY = "guidance:job:{}"
SET_KEY = "guidance:inflight:{}"
SCOPES = ("user", "team", "total")


@dataclass(frozen=True)
class JobRecord:
    """What a job was asked for, by whom: enough to name and judge its result for the asker.
    ``variant`` is the draft's first text (None: suggestions); ``variant_texts`` the whole
    draft item, one text per segment of the task's type in order (a sentence pair's premise
    and hypothesis)."""

    id: str
    user_id: int
    team_id: int | None
    shared_task_id: int
    original_id: str
    variant: str | None
    variant_label: str
    system_ids: tuple[int, ...]  # in guide order
    version_ids: tuple[int, ...]  # the systems' active versions when asked, same order
    created: float
    variant_texts: tuple[str, ...] | None = None

    @property
    def kind(self) -> str:
        """``check`` for a draft variant, ``suggestions`` for suggested edits."""
        return "suggestions" if self.variant is None else "check"

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.__dict__,
            "system_ids": list(self.system_ids),
            "version_ids": list(self.version_ids),
            "variant_texts": None if self.variant_texts is None else list(self.variant_texts),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JobRecord:
        return cls(
            **{
                **data,
                "system_ids": tuple(data["system_ids"]),
                "version_ids": tuple(data["version_ids"]),
                "variant_texts": None
                if data.get("variant_texts") is None
                else tuple(data["variant_texts"]),
            }
        )


class CapReached(Exception):
    """Too many jobs in flight: ``message`` names the cap, ``retry_after`` is in seconds."""

    def __init__(self, message: str, retry_after: int = 5) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def new_job_id() -> str:
    return uuid.uuid4().hex


def in_flight_deadline(now: float) -> float:
    """The latest a job can still be in flight: its message expires unstarted after
    ``GUIDANCE_SUGGEST_TIMEOUT`` seconds, and a started task is stopped 15 s past as long."""
    return now + 2 * settings.GUIDANCE_SUGGEST_TIMEOUT + 15


def record_save(record: JobRecord) -> None:
    cache.set(RECORD_KEY.format(record.id), record.to_dict(), timeout=settings.GUIDANCE_JOB_TTL)


def record_get(job_id: str) -> JobRecord | None:
    data = cache.get(RECORD_KEY.format(job_id))
    return JobRecord.from_dict(data) if data else None


def _keys(record: JobRecord) -> list[str]:
    team = "none" if record.team_id is None else str(record.team_id)
    return [
        SET_KEY.format(f"user:{record.user_id}"),
        SET_KEY.format(f"team:{team}"),
        SET_KEY.format("total"),
    ]


def _caps(record: JobRecord) -> list[int]:
    # A caller without a team (an organizer) is counted per user and overall only.
    team_cap = settings.GUIDANCE_INFLIGHT_PER_TEAM if record.team_id is not None else 10**9
    return [settings.GUIDANCE_INFLIGHT_PER_USER, team_cap, settings.GUIDANCE_INFLIGHT_TOTAL]


def _refusal(scope: str, cap: int) -> CapReached:
    jobs = f"{cap} suggestion or draft-check job{'s' if cap != 1 else ''}"
    if scope == "user":
        return CapReached(
            f"You already have {jobs} waiting for the models, the most one person may have at "
            "once (GUIDANCE_INFLIGHT_PER_USER): wait for one to finish, then ask again."
        )
    if scope == "team":
        return CapReached(
            f"Your team already has {jobs} waiting for the models, the most one team may have "
            "at once (GUIDANCE_INFLIGHT_PER_TEAM): wait for one to finish, then ask again."
        )
    return CapReached(
        f"The site already has {jobs} waiting for the models, the most it takes at once "
        "(GUIDANCE_INFLIGHT_TOTAL): try again in a moment.",
        retry_after=10,
    )


def admit(record: JobRecord) -> None:
    """Count the job in flight, or raise ``CapReached`` naming the first cap it would pass."""
    now = time.time()
    full = _registry().admit(
        _keys(record), _caps(record), record.id, now=now, deadline=in_flight_deadline(now)
    )
    if full is not None:
        raise _refusal(SCOPES[full], _caps(record)[full])


def release(record: JobRecord) -> None:
    """The job is no longer in flight (safe to call more than once)."""
    _registry().release(_keys(record), record.id)


def release_job(job_id: str) -> None:
    """``release`` by id, for the worker once the task has run (no record: nothing to do)."""
    record = record_get(job_id)
    if record is not None:
        release(record)


def in_flight(key: str) -> int:
    """How many jobs are in flight under ``user:ID``, ``team:ID`` or ``total`` (expired ones not
    counted)."""
    return _registry().count(SET_KEY.format(key), now=time.time())


# --- Where the counts live ---------------------------------------------------------------------

# KEYS: the user's, the team's and the overall set. ARGV: now, deadline, job id, the three caps,
# the sets' time to live. Answers 0 when admitted, else the 1-based index of the full set.
_ADMIT = """
for i, key in ipairs(KEYS) do
  redis.call('ZREMRANGEBYSCORE', key, '-inf', ARGV[1])
end
for i, key in ipairs(KEYS) do
  if redis.call('ZCARD', key) >= tonumber(ARGV[3 + i]) then
    return i
  end
end
for i, key in ipairs(KEYS) do
  redis.call('ZADD', key, ARGV[2], ARGV[3])
  redis.call('EXPIRE', key, ARGV[7])
end
return 0
"""


class _RedisRegistry:
    def __init__(self, url: str) -> None:
        import redis

        self.client = redis.Redis.from_url(url)
        self.script = self.client.register_script(_ADMIT)

    def admit(
        self, keys: list[str], caps: list[int], job_id: str, *, now: float, deadline: float
    ) -> int | None:
        ttl = int(deadline - now) + 60
        full = int(self.script(keys=keys, args=[now, deadline, job_id, *caps, ttl]))
        return full - 1 if full else None

    def release(self, keys: list[str], job_id: str) -> None:
        with self.client.pipeline() as pipe:
            for key in keys:
                pipe.zrem(key, job_id)
            pipe.execute()

    def count(self, key: str, *, now: float) -> int:
        return int(self.client.zcount(key, now, "+inf"))


class _MemoryRegistry:
    """The embedded default's (one process, tasks in-process): the same rule under a lock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sets: dict[str, dict[str, float]] = {}

    def admit(
        self, keys: list[str], caps: list[int], job_id: str, *, now: float, deadline: float
    ) -> int | None:
        with self.lock:
            live = [self._live(key, now) for key in keys]
            for index, (members, cap) in enumerate(zip(live, caps, strict=True)):
                if len(members) >= cap:
                    return index
            for members in live:
                members[job_id] = deadline
            return None

    def release(self, keys: list[str], job_id: str) -> None:
        with self.lock:
            for key in keys:
                self.sets.get(key, {}).pop(job_id, None)

    def count(self, key: str, *, now: float) -> int:
        with self.lock:
            return len(self._live(key, now))

    def _live(self, key: str, now: float) -> dict[str, float]:
        members = self.sets.setdefault(key, {})
        for job_id in [job for job, deadline in members.items() if deadline <= now]:
            del members[job_id]
        return members


_registries: dict[str, Any] = {}


def _registry() -> Any:
    url = settings.REDIS_URL or ""
    if url not in _registries:
        _registries[url] = _RedisRegistry(url) if url else _MemoryRegistry()
    return _registries[url]
