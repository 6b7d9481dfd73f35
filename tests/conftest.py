"""Fixtures every part of the suite may use: a real Celery worker process among them."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"
SST2_DIR = SHARED_DIR / "data" / "sst2"


def _database_url(settings_dict: dict) -> str:
    user = settings_dict.get("USER") or ""
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


class WorkerProcess:
    """A `celery worker` in its own process, consuming both queues from the test Redis."""

    def __init__(self, process: subprocess.Popen, hostname: str, log_path: Path) -> None:
        self.process = process
        self.hostname = hostname
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, text: str, timeout: float = 15) -> str:
        """The log once it holds ``text``: a result can arrive before the worker logs it."""
        deadline = time.monotonic() + timeout
        while text not in (log := self.log()):
            if time.monotonic() > deadline:
                raise AssertionError(f"the worker never logged {text!r}:\n{log[-3000:]}")
            time.sleep(0.1)
        return log


@pytest.fixture(scope="session")
def celery_worker_process(
    django_db_setup, django_db_blocker, tmp_path_factory
) -> Iterator[WorkerProcess]:
    """Start a real worker on the test broker and database; stop it after the session.

    Tests that make the worker read or write rows must use ``transactional_db`` so their
    rows are committed where the worker's own connection can see them.
    """
    from django.conf import settings
    from django.db import connection

    from bibi.celery import app

    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there is no worker to start")

    hostname = f"test-{uuid.uuid4().hex[:8]}@localhost"
    log_path = tmp_path_factory.mktemp("worker") / "worker.log"
    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="bibi.settings_test",
        BIBI_TEST_BACKEND="services",
        DATABASE_URL=_database_url(connection.settings_dict),
        REDIS_URL=settings.CELERY_BROKER_URL,
        VAR_DIR=str(settings.VAR_DIR),
    )
    # Messages left over from an earlier, interrupted run would be consumed first.
    with django_db_blocker.unblock():
        app.control.purge()
    command = [
        sys.executable, "-m", "celery", "-A", "bibi", "worker",
        "-Q", "default,gpu", "--concurrency", "1", "--pool", "prefork",
        "--hostname", hostname, "--without-gossip", "--without-mingle", "-l", "info",
    ]  # fmt: skip
    with log_path.open("w") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    worker = WorkerProcess(process, hostname, log_path)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"the Celery worker exited with {process.returncode}:\n{worker.log()}")
            if app.control.ping(destination=[hostname], timeout=0.5):
                break
        else:
            pytest.fail(f"the Celery worker did not answer within 60 s:\n{worker.log()}")
        yield worker
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
