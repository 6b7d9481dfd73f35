"""``/healthz``: is this deployment able to do its job right now?

Three checks, each reported with ``ok`` and a human-readable ``detail``: the database answers
a query, the broker answers a ping, and at least one Celery worker answers a ping. On the
embedded default there is no broker and tasks run in the web process, so both count as up.
"""

from __future__ import annotations

from typing import Any

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from bibi.celery import app as celery_app

Check = dict[str, Any]

PING_TIMEOUT_SECONDS = 1.0


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
    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL,
        socket_connect_timeout=PING_TIMEOUT_SECONDS,
        socket_timeout=PING_TIMEOUT_SECONDS,
    )
    try:
        client.ping()
    except redis.RedisError as exc:
        return {"ok": False, "detail": f"broker unreachable: {exc}"}
    finally:
        client.close()
    return {"ok": True, "detail": "redis answered"}


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


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    database = database_check()
    broker = broker_check()
    worker = worker_check(broker_ok=broker["ok"])
    healthy = database["ok"] and broker["ok"] and worker["ok"]
    body = {
        "status": "ok" if healthy else "unhealthy",
        "database": database,
        "broker": broker,
        "worker": worker,
    }
    return JsonResponse(body, status=200 if healthy else 503)
