"""``/healthz``: is this deployment able to do its job right now?

Six checks, each reported with ``ok`` and a human-readable ``detail``: the database answers
a query, the broker answers a ping, the cache (the API's throttle counts) answers a read, at least one Celery worker answers a ping, beat has sent
the housekeeping task recently (the task records each tick), and no hosted version is stuck
past the time-outs housekeeping applies. On the embedded default there is no broker and no
beat, and tasks run in the web process, so those count as up.
"""

from __future__ import annotations

import time
from typing import Any

import redis
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from bibi.celery import app as celery_app
from bibi.queue import BEAT_TICK_KEY, beat_late_after, beat_tick_age

Check = dict[str, Any]

PING_TIMEOUT_SECONDS = 1.0
CACHE_PROBE_KEY = "bibi:healthz:probe"


def _redis() -> redis.Redis:
    return redis.Redis.from_url(
        settings.CELERY_BROKER_URL,
        socket_connect_timeout=PING_TIMEOUT_SECONDS,
        socket_timeout=PING_TIMEOUT_SECONDS,
    )


def beat_tick_record() -> None:
    """Note that beat's housekeeping task ran now (in Redis, next to the queues it needs)."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return
    client = _redis()
    try:
        client.set(BEAT_TICK_KEY, repr(time.time()), ex=7 * 24 * 3600)
    finally:
        client.close()


def database_check() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # every failure here means the same thing: unhealthy
        return {"ok": False, "detail": f"database unreachable: {exc.__class__.__name__}: {exc}"}
    return {"ok": True, "detail": f"{connection.vendor} answered"}


def broker_check() -> Check:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "detail": "embedded: tasks run in-process, no broker"}
    client = _redis()
    try:
        client.ping()
    except redis.RedisError as exc:
        return {"ok": False, "detail": f"broker unreachable: {exc}"}
    finally:
        client.close()
    return {"ok": True, "detail": "redis answered"}


def cache_check() -> Check:
    """The cache keeps the API's throttle counts: when it is down the API still answers, but
    lets every request through uncounted (``bibi.throttling``)."""
    try:
        cache.get(CACHE_PROBE_KEY)
    except Exception as exc:  # whatever the backend raises, the counts are not kept
        return {
            "ok": False,
            "detail": f"cache unreachable: {exc.__class__.__name__}: {exc}; the API lets "
            "requests through without counting them",
        }
    backend = settings.CACHES["default"]["BACKEND"].rsplit(".", 1)[-1]
    return {"ok": True, "detail": f"{backend} answered"}


def worker_check(*, broker_ok: bool) -> Check:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "detail": "embedded: tasks run in the web process", "workers": []}
    if not broker_ok:
        return {"ok": False, "detail": "no broker, so no worker can be reached", "workers": []}
    try:
        with celery_app.connection_for_write(settings.CELERY_BROKER_URL) as conn:
            replies = celery_app.control.ping(timeout=PING_TIMEOUT_SECONDS, connection=conn) or []
    except Exception as exc:  # the control channel failing is a failed check, not a 500
        return {"ok": False, "detail": f"worker ping failed: {exc}", "workers": []}
    workers = sorted(name for reply in replies for name in reply)
    if not workers:
        return {"ok": False, "detail": "no Celery worker answered a ping", "workers": []}
    return {"ok": True, "detail": f"{len(workers)} worker(s) answered", "workers": workers}


def beat_check(*, broker_ok: bool) -> Check:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return {"ok": True, "detail": "embedded: no beat, housekeeping does not run"}
    if not broker_ok:
        return {"ok": False, "detail": "no broker, so beat cannot be heard"}
    try:
        age = beat_tick_age()
    except redis.RedisError as exc:
        return {"ok": False, "detail": f"beat's last tick unreadable: {exc}"}
    if age is None:
        return {
            "ok": False,
            "detail": "no tick of beat recorded (it ticks when it starts, then every "
            f"{settings.HOUSEKEEPING_INTERVAL} s): run `celery -A bibi beat`, housekeeping needs it",
        }
    if age > beat_late_after():
        return {
            "ok": False,
            "detail": f"beat last ticked {age:.0f} s ago (every {settings.HOUSEKEEPING_INTERVAL} s "
            "expected): is beat running, and a worker on the default queue?",
            "last_tick_seconds_ago": round(age),
        }
    return {
        "ok": True,
        "detail": f"beat ticked {age:.0f} s ago",
        "last_tick_seconds_ago": round(age),
    }


def stuck_check() -> Check:
    from bibi.systems.selectors import versions_stuck

    try:
        stuck = versions_stuck()
    except Exception as exc:  # the database check reports the cause
        return {"ok": False, "detail": f"could not look for stuck versions: {exc}"}
    if not any(stuck.values()):
        return {"ok": True, "detail": "no hosted version stuck", **stuck}
    return {
        "ok": False,
        "detail": f"{stuck['queued']} version(s) queued and {stuck['running']} running past "
        "their time-outs: is a worker consuming the gpu queue, and beat running?",
        **stuck,
    }


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database = database_check()
    broker = broker_check()
    checks = {
        "database": database,
        "broker": broker,
        "cache": cache_check(),
        "worker": worker_check(broker_ok=broker["ok"]),
        "beat": beat_check(broker_ok=broker["ok"]),
        "stuck": stuck_check()
        if database["ok"]
        else {"ok": False, "detail": "no database, so no versions to look at"},
    }
    healthy = all(check["ok"] for check in checks.values())
    body = {"status": "ok" if healthy else "unhealthy", **checks}
    return JsonResponse(body, status=200 if healthy else 503)
