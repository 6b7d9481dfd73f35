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
from rest_framework.test import APIRequestFactory
from rest_framework.throttling import AnonRateThrottle

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
