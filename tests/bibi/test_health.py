from __future__ import annotations

import pytest
from django.test import override_settings


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


@pytest.mark.django_db
def test_it_is_healthy_with_the_database_broker_and_a_worker(client, celery_worker_process):
    response = client.get("/healthz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["database"]["detail"] == "postgresql answered"
    assert body["broker"] == {"ok": True, "detail": "redis answered"}
    assert celery_worker_process.hostname in body["worker"]["workers"]


@pytest.mark.django_db
def test_it_is_unhealthy_when_no_worker_answers(client, settings):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("needs a real broker")
    # The same Redis, but a database index no worker listens on.
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:6379/13"):
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
