"""Fixtures every part of the suite may use: a real Celery worker process among them."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"
SST2_DIR = SHARED_DIR / "data" / "sst2"
# How long a wait for a process (a worker, a server) may last before the test gives up. Every
# such wait follows state (a ping, a port, a log line): this is a safety net only, wide enough
# for a two-core machine that runs several suites at once.
PROCESS_BOUND_SECONDS = 300


def _database_url(settings_dict: dict) -> str:
    user = settings_dict.get("USER") or ""
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = settings_dict.get("PORT") or 5432
    return f"postgres://{auth}{host}:{port}/{settings_dict['NAME']}"


class CeleryProcess:
    """A `celery worker` or `celery beat` in its own process, logging to a file."""

    def __init__(self, process: subprocess.Popen, hostname: str, log_path: Path) -> None:
        self.process = process
        self.hostname = hostname
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, text: str, timeout: float = PROCESS_BOUND_SECONDS) -> str:
        """The log once it holds ``text``: a result can arrive before the worker logs it."""
        deadline = time.monotonic() + timeout
        while text not in (log := self.log()):
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.hostname} never logged {text!r}:\n{log[-3000:]}")
            time.sleep(0.1)
        return log

    def children(self) -> list[int]:
        """The pool's child processes (a prefork worker runs tasks in them)."""
        try:
            raw = Path(f"/proc/{self.pid}/task/{self.pid}/children").read_text()
        except FileNotFoundError:
            return []
        return [int(pid) for pid in raw.split()]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def celery_env(broker_url: str, **overrides: str) -> dict[str, str]:
    """The environment of a Celery process on the test database, var/ and ``broker_url``."""
    from django.conf import settings
    from django.db import connection

    env = dict(os.environ)
    env.update(
        DJANGO_SETTINGS_MODULE="bibi.settings_test",
        BIBI_TEST_BACKEND="services",
        DATABASE_URL=_database_url(connection.settings_dict),
        REDIS_URL=broker_url,
        VAR_DIR=str(settings.VAR_DIR),
    )
    env.update(overrides)
    return env


def start_worker(
    log_dir: Path,
    *,
    broker_url: str | None = None,
    env: dict[str, str] | None = None,
) -> CeleryProcess:
    """Start a prefork worker (one child) on both queues and wait until it answers a ping."""
    from django.conf import settings

    from bibi.celery import app

    broker_url = broker_url or settings.CELERY_BROKER_URL
    hostname = f"test-{uuid.uuid4().hex[:8]}@localhost"
    arguments = [
        "worker", "-Q", "interactive,default,gpu", "--concurrency", "1", "--pool", "prefork",
        "--hostname", hostname, "--without-gossip", "--without-mingle",
    ]  # fmt: skip
    worker = _spawn(arguments, hostname, log_dir, celery_env(broker_url, **(env or {})))
    process = worker.process
    deadline = time.monotonic() + PROCESS_BOUND_SECONDS
    with app.connection_for_write(broker_url) as connection:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"the Celery worker exited with {process.returncode}:\n{worker.log()}")
            if app.control.ping(destination=[hostname], timeout=0.5, connection=connection):
                return worker
    worker.stop()
    pytest.fail(
        f"the Celery worker did not answer within {PROCESS_BOUND_SECONDS} s:\n{worker.log()}"
    )


def start_beat(
    log_dir: Path, *, broker_url: str, env: dict[str, str] | None = None
) -> CeleryProcess:
    """Start `celery beat`, which sends the housekeeping task on its schedule."""
    name = f"beat-{uuid.uuid4().hex[:8]}"
    arguments = ["beat", "--schedule", str(log_dir / f"{name}-schedule")]
    return _spawn(arguments, name, log_dir, celery_env(broker_url, **(env or {})))


def _spawn(arguments: list[str], name: str, log_dir: Path, env: dict[str, str]) -> CeleryProcess:
    log_path = log_dir / f"{name}.log"
    command = [sys.executable, "-m", "celery", "-A", "bibi", *arguments, "-l", "info"]
    with log_path.open("w") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    return CeleryProcess(process, name, log_path)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A redis-server of the test's own on a free port, to stop and start again.

    It keeps nothing on disk: a restart loses every queued message, as a Redis without a
    volume does.
    """

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = [
            "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
            "--save", "", "--appendonly", "no", "--dir", str(self.directory),
        ]  # fmt: skip
        with (self.directory / "redis.log").open("a") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + PROCESS_BOUND_SECONDS
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        pytest.fail(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)
        self.process = None

    def take_messages(self, queue: str) -> list[tuple[str, tuple]]:
        """Remove and return the (task name, args) of every message waiting in ``queue``."""
        import base64
        import json

        import redis

        client = redis.Redis.from_url(self.url)
        try:
            raw = client.lrange(queue, 0, -1)
            client.delete(queue)
        finally:
            client.close()
        messages = []
        for item in reversed(raw):  # kombu pushes to the left: the oldest is last
            message = json.loads(item)
            args, _, _ = json.loads(base64.b64decode(message["body"]))
            messages.append((message["headers"]["task"], tuple(args)))
        return messages


@pytest.fixture
def private_broker(tmp_path_factory) -> Iterator[RedisServer]:
    """A redis-server of this test's own, and this process's Celery app sending to it.

    Workers started on it never meet the suite's shared worker, and the test may stop it.
    (``settings.CELERY_BROKER_URL`` is left alone: ``/healthz`` still looks at the shared one.)
    """
    from bibi.celery import app

    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    saved = app.conf.broker_url

    def point_at(url: str) -> None:
        app.conf.broker_url = url
        # Connection and producer pools are built for the URL configured at first use, and
        # cached; drop them as Celery itself does after a fork.
        app._pool = None
        app.amqp._producer_pool = None
        app.control.mailbox.__dict__.pop("producer_pool", None)

    point_at(server.url)
    try:
        yield server
    finally:
        point_at(saved)
        server.stop()


@contextmanager
def routed_to_own_queues(route: Callable[[str], str], queues: Iterable[str]) -> Iterator[None]:
    """Send every task named inside the block to the queue ``route(task name)`` gives, then
    drop ``queues``.

    Only a worker the test starts on those queues takes what is sent there: never the
    session's worker (``celery_worker_process``), whatever queues it reads.
    """
    from bibi.celery import app

    def own(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any):
        return {"queue": route(name)}

    # The router keeps this very list: an entry at its front wins over the settings' routes.
    routes = app.amqp.routes
    routes.insert(0, own)
    try:
        yield
    finally:
        routes.remove(own)
        if not app.conf.task_always_eager:
            with app.connection_for_write() as connection:
                for queue in queues:
                    connection.default_channel.queue_delete(queue)


@contextmanager
def sent_to_a_queue_of_its_own(prefix: str = "test-own") -> Iterator[str]:
    """Route every task sent inside the block to a fresh queue, yielded, then drop that queue."""
    queue = f"{prefix}-{uuid.uuid4().hex[:8]}"
    with routed_to_own_queues(lambda name: queue, [queue]):
        yield queue


@contextmanager
def sent_where_no_worker_reads() -> Iterator[str]:
    """Route every task sent inside the block to a queue of its own, then drop that queue.

    A fixture that uploads a version and validates it in-process sends a validation message
    on commit; the session's worker (``celery_worker_process``) would take it and race the
    fixture ("already running in test-…@localhost"). Inside this block nothing sent reaches a
    worker. (On the embedded default tasks run in-process as they are sent, as ever.)
    """
    with sent_to_a_queue_of_its_own("test-unread") as queue:
        yield queue


@pytest.fixture(scope="session")
def celery_worker_process(
    django_db_setup, django_db_blocker, tmp_path_factory
) -> Iterator[CeleryProcess]:
    """Start a real worker on the test broker and database; stop it after the session.

    Tests that make the worker read or write rows must use ``transactional_db`` so their
    rows are committed where the worker's own connection can see them.
    """
    from django.conf import settings

    from bibi.celery import app

    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there is no worker to start")

    # Messages left over from an earlier, interrupted run would be consumed first.
    with django_db_blocker.unblock():
        app.control.purge()
    worker = start_worker(tmp_path_factory.mktemp("worker"))
    try:
        yield worker
    finally:
        worker.stop()


class EmbeddedSite:
    """``manage.py runserver`` on the embedded default: SQLite under ``var_dir``, tasks in-process."""

    def __init__(self, url: str, var_dir: Path, log_path: Path) -> None:
        self.url = url
        self.var_dir = var_dir
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@pytest.fixture
def embedded_site(tmp_path) -> Iterator[EmbeddedSite]:
    """A fresh site as `make demo` serves it, migrated, on a free port, with its own var/."""
    import urllib.request

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    var_dir = tmp_path / "var"
    env.update(DEBUG="1", VAR_DIR=str(var_dir))
    manage = [sys.executable, str(REPO_ROOT / "manage.py")]
    migrate = subprocess.run(
        [*manage, "migrate", "--noinput"],
        env=env,
        capture_output=True,
        text=True,
        timeout=PROCESS_BOUND_SECONDS,
    )
    assert migrate.returncode == 0, migrate.stderr
    site = EmbeddedSite(f"http://127.0.0.1:{free_port()}", var_dir, tmp_path / "runserver.log")
    with site.log_path.open("w") as log:
        server = subprocess.Popen(
            [*manage, "runserver", "--noreload", site.url.removeprefix("http://")],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + PROCESS_BOUND_SECONDS
        while True:
            try:
                with urllib.request.urlopen(f"{site.url}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    pytest.fail(f"runserver never answered:\n{site.log()[-3000:]}")
                time.sleep(0.2)
        yield site
    finally:
        server.terminate()
        server.wait(timeout=20)
