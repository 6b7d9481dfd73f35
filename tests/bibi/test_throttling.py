"""Anonymous callers are throttled across every web process, not per process.

Throttle counts live in Django's cache: Redis when ``REDIS_URL`` is set, so the workers of
one site (gunicorn's processes, several machines) count one caller's requests together.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid

import pytest
from django.conf import settings
from rest_framework.request import Request
from rest_framework.test import APIClient, APIRequestFactory
from rest_framework.throttling import AnonRateThrottle

from bibi import throttling

pytestmark = pytest.mark.embedded

CALLS_IN_ANOTHER_PROCESS = """
import sys

import django

django.setup()

from rest_framework.request import Request
from rest_framework.test import APIRequestFactory
from rest_framework.throttling import AnonRateThrottle


class ThreeAMinute(AnonRateThrottle):
    rate = "3/minute"


request = Request(APIRequestFactory().get("/", REMOTE_ADDR=sys.argv[1]))
print(",".join(str(ThreeAMinute().allow_request(request, None)) for _ in range(3)))
"""


class ThreeAMinute(AnonRateThrottle):
    rate = "3/minute"


def test_two_processes_share_the_anonymous_throttle_count():
    if not settings.REDIS_URL:
        pytest.skip("the embedded default has no shared cache: each process counts alone")
    address = f"192.0.2.{uuid.uuid4().hex}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "bibi.settings_test",
        "BIBI_TEST_BACKEND": "services",
        "REDIS_URL": settings.REDIS_URL,
    }
    other = subprocess.run(
        [sys.executable, "-c", CALLS_IN_ANOTHER_PROCESS, address],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert other.stdout.strip() == "True,True,True"
    request = Request(APIRequestFactory().get("/", REMOTE_ADDR=address))
    assert ThreeAMinute().allow_request(request, None) is False
    # Another caller is counted apart.
    stranger = Request(APIRequestFactory().get("/", REMOTE_ADDR=f"192.0.2.{uuid.uuid4().hex}"))
    assert ThreeAMinute().allow_request(stranger, None) is True


def test_the_cache_is_redis_with_a_broker_and_the_process_memory_without():
    backend = settings.CACHES["default"]["BACKEND"]
    if settings.REDIS_URL:
        assert backend == "django.core.cache.backends.redis.RedisCache"
        assert settings.CACHES["default"]["KEY_PREFIX"] == "bibi-cache"
    else:
        assert backend == "django.core.cache.backends.locmem.LocMemCache"


def cache_on(url: str) -> dict:
    return {
        "default": {
            **settings.CACHES["default"],
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }


@pytest.mark.django_db
def test_with_redis_down_the_api_answers_and_the_health_check_says_so(
    cast, private_broker, settings, caplog, monkeypatch
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default keeps its counts in memory: there is no Redis to stop")
    # The throttle counts and the health check on a Redis of this test's own.
    settings.CACHES = cache_on(private_broker.url)
    settings.CELERY_BROKER_URL = private_broker.url
    # The rates are read once, at import: this test's own rate for anonymous callers.
    monkeypatch.setattr(throttling.AnonRateThrottle, "rate", "2/minute", raising=False)

    anonymous = APIClient(REMOTE_ADDR=f"192.0.2.{uuid.uuid4().hex}")
    assert [anonymous.get("/api/v1/shared-tasks/").status_code for _ in range(3)] == [
        200,
        200,
        429,
    ]

    private_broker.stop()
    with caplog.at_level("WARNING", logger="bibi.throttling"):
        answers = [
            anonymous.get("/api/v1/shared-tasks/"),
            anonymous.get("/api/v1/shared-tasks/sst/"),
            cast.client("builder").get("/api/v1/shared-tasks/sst/teams/"),
        ]
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert "sst" in [task["slug"] for task in answers[0].json()["results"]]
    assert "throttle cache unreachable: GET /api/v1/shared-tasks/ let through" in caplog.text
    health = APIClient().get("/healthz")
    assert health.status_code == 503
    body = health.json()
    assert body["cache"]["ok"] is False
    assert body["cache"]["detail"].startswith("cache unreachable: ConnectionError")
    assert body["broker"]["ok"] is False

    # Back up: counted (and throttled) again, and healthy as far as the cache goes.
    private_broker.start()
    assert anonymous.get("/api/v1/shared-tasks/").status_code == 200
    assert anonymous.get("/api/v1/shared-tasks/").status_code == 200
    assert anonymous.get("/api/v1/shared-tasks/").status_code == 429
    assert APIClient().get("/healthz").json()["cache"] == {
        "ok": True,
        "detail": "RedisCache answered",
    }
