"""The API's rate limits, which fail open when the cache that counts requests is away.

Throttle counts live in Django's cache, which is Redis when ``REDIS_URL`` is set (so every
web process counts one caller's requests together). Redis is also the Celery broker; when
it is down, work that needs a worker waits, but reading the API needs neither: a request is
then let through, with a warning in the log, rather than answered 500. ``/healthz`` reports
the cache as down meanwhile.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from rest_framework import throttling
from rest_framework.request import Request

logger = logging.getLogger(__name__)


class FailOpenThrottle(throttling.SimpleRateThrottle):
    """A rate throttle that allows the request when its cache cannot be reached."""

    def allow_request(self, request: Request, view: Any) -> bool:
        try:
            return super().allow_request(request, view)
        except redis.RedisError as error:
            logger.warning(
                "throttle cache unreachable: %s %s let through without a count (%s: %s)",
                request.method,
                request.path,
                error.__class__.__name__,
                error,
            )
            return True


class AnonRateThrottle(FailOpenThrottle, throttling.AnonRateThrottle):
    """Anonymous callers, by address (``API_THROTTLE_ANON``)."""


class UserRateThrottle(FailOpenThrottle, throttling.UserRateThrottle):
    """Signed-in callers, by user (``API_THROTTLE_USER``)."""
