from __future__ import annotations

import time
from datetime import timedelta

import pytest
import redis
from django.conf import settings
from django.test import override_settings
from django.utils import timezone

from bibi.health import BEAT_TICK_KEY

from ..conftest import PROCESS_BOUND_SECONDS, start_beat


@pytest.mark.embedded
@pytest.mark.django_db
def test_it_is_healthy_on_the_embedded_default_with_no_broker(client):
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True, CELERY_BROKER_URL="memory://"):
        response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"]["ok"] is True
    assert body["broker"]["detail"].startswith("embedded")
    assert body["beat"] == {"ok": True, "detail": "embedded: no beat, housekeeping does not run"}


def forget_beat() -> None:
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.delete(BEAT_TICK_KEY)
    client.close()


@pytest.mark.slow
@pytest.mark.django_db
def test_it_is_healthy_with_the_database_broker_a_worker_and_beat_ticking(
    client, celery_worker_process, tmp_path
):
    forget_beat()
    assert client.get("/healthz").json()["beat"]["ok"] is False
    # With the default interval of a minute: beat housekeeps once as it starts.
    beat = start_beat(tmp_path, broker_url=settings.CELERY_BROKER_URL)
    try:
        deadline = time.monotonic() + PROCESS_BOUND_SECONDS
        while not (body := client.get("/healthz").json())["beat"]["ok"]:
            assert time.monotonic() < deadline, (body, beat.log()[-2000:])
            time.sleep(0.5)
    finally:
        beat.stop()
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["database"]["detail"] == "postgresql answered"
    assert body["broker"] == {"ok": True, "detail": "redis answered"}
    assert celery_worker_process.hostname in body["worker"]["workers"]
    assert body["beat"]["detail"].startswith("beat ticked")
    assert body["stuck"] == {
        "ok": True,
        "detail": "no hosted version stuck",
        "queued": 0,
        "running": 0,
    }


@pytest.mark.django_db
def test_it_is_unhealthy_when_no_tick_of_beat_is_recorded(client):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("needs a real broker")
    forget_beat()
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["beat"] == {
        "ok": False,
        "detail": "no tick of beat recorded (it ticks when it starts, then every 60 s): run "
        "`celery -A bibi beat`, housekeeping needs it",
    }


@pytest.mark.django_db
def test_it_is_unhealthy_when_beat_has_gone_quiet(client):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("needs a real broker")
    forget_beat()
    redis_client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    redis_client.set(BEAT_TICK_KEY, repr(time.time() - 1000))
    redis_client.close()
    response = client.get("/healthz")
    assert response.status_code == 503
    beat = response.json()["beat"]
    assert beat["ok"] is False
    assert 1000 <= beat["last_tick_seconds_ago"] < 1100
    assert beat["detail"].startswith(f"beat last ticked {beat['last_tick_seconds_ago']} s ago")
    assert "(every 60 s expected)" in beat["detail"]


@pytest.mark.embedded
@pytest.mark.django_db
def test_it_is_unhealthy_when_versions_are_stuck_past_their_time_outs(client, cast):
    from bibi.systems import services
    from bibi.systems.models import SystemVersion

    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="stuck", kind="hosted"
    )
    long_ago = timezone.now() - timedelta(days=1)
    for number, status in enumerate(["queued", "running", "running", "queued"], start=1):
        SystemVersion.objects.create(
            system=system, number=number, status=status, queued_at=long_ago, started_at=long_ago
        )
    # A version queued a moment ago is not stuck.
    SystemVersion.objects.filter(number=4).update(queued_at=timezone.now())
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        response = client.get("/healthz")
    assert response.status_code == 503
    stuck = response.json()["stuck"]
    assert (stuck["ok"], stuck["queued"], stuck["running"]) == (False, 1, 2)
    assert stuck["detail"].startswith("1 version(s) queued and 2 running past their time-outs")


@pytest.mark.django_db
def test_it_is_unhealthy_when_no_worker_answers(client, settings):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("needs a real broker")
    # The same Redis, but a database index no worker listens on (not the suite's own).
    suite_index = int(settings.CELERY_BROKER_URL.rsplit("/", 1)[1] or 0)
    unread = f"redis://127.0.0.1:6379/{(suite_index + 1) % 16}"
    with override_settings(CELERY_BROKER_URL=unread):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unhealthy"
    assert body["broker"]["ok"] is True
    assert body["worker"] == {
        "ok": False,
        "detail": "no Celery worker answered a ping",
        "workers": [],
    }


@pytest.mark.django_db
def test_it_is_unhealthy_when_the_broker_is_down(client, settings):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("needs a real broker")
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["broker"]["ok"] is False
    assert body["broker"]["detail"].startswith("broker unreachable")
    assert body["worker"]["ok"] is False


@pytest.mark.django_db
def test_it_is_unhealthy_when_the_database_is_down(client, monkeypatch):
    from django.db import connection

    def refuse(*args, **kwargs):
        raise connection.Database.OperationalError("connection refused")

    monkeypatch.setattr(connection, "cursor", refuse)
    with override_settings(CELERY_TASK_ALWAYS_EAGER=True):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert (
        response.json()["database"]["detail"]
        == "database unreachable: OperationalError: connection refused"
    )


@pytest.mark.embedded
def test_it_answers_get_only(client):
    assert client.post("/healthz").status_code == 405
