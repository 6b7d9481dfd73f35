"""The gpu workers' archive endpoint is throttled per address (credential or not), and the
worker credential is refused when it is short enough to guess."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from bibi.systems.worker_apis import WorkerArchiveThrottle

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

TOKEN = "w" * 40
UNKNOWN = "/api/v1/worker/archives/" + "ab" * 32 + "/"


def address() -> str:
    return f"192.0.2.{uuid.uuid4().hex}"


def test_the_archive_endpoint_is_throttled_per_address(settings, monkeypatch):
    settings.WORKER_TOKEN = TOKEN
    monkeypatch.setattr(WorkerArchiveThrottle, "rate", "3/minute", raising=False)
    worker, guesser = Client(REMOTE_ADDR=address()), Client(REMOTE_ADDR=address())

    answers = [
        worker.get(UNKNOWN, HTTP_AUTHORIZATION=f"Worker {TOKEN}").status_code for _ in range(4)
    ]
    guesses = [
        guesser.get(UNKNOWN, HTTP_AUTHORIZATION=f"Worker guess-{n}").status_code for n in range(4)
    ]

    assert answers == [404, 404, 404, 429]
    # Wrong credentials are counted too: guessing the credential is as slow.
    assert guesses == [403, 403, 403, 429]
    refused = guesser.get(UNKNOWN, HTTP_AUTHORIZATION=f"Worker {TOKEN}")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert "Too many archive requests from this address" in refused.json()["detail"]
    # Another address is counted apart.
    other = Client(REMOTE_ADDR=address()).get(UNKNOWN, HTTP_AUTHORIZATION=f"Worker {TOKEN}")
    assert other.status_code == 404
