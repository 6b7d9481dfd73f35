"""compose.yaml's commands and health checks, run here as the containers would run them.

No Docker engine is needed: each service's command runs as a process of this machine, with the
environment compose gives it (DEBUG off, a real SECRET_KEY, ALLOWED_HOSTS, PostgreSQL and Redis)
and the image's paths mapped onto this checkout (``/app`` is the checkout, as the image's
WORKDIR is). Each health check must pass while its service runs and fail once it stops.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


@pytest.fixture
def fresh_database(production_env) -> Iterator[str]:
    """A database of its own on the test server, empty, as PostgreSQL creates it for compose."""
    server = urlsplit(production_env["DATABASE_URL"])
    name = f"{os.environ.get('BIBI_TEST_DATABASE', 'test_bibi')}_compose_{uuid.uuid4().hex[:6]}"
    admin_url = urlunsplit(server._replace(path="/postgres"))
    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(server._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(admin_url, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


READY_IN_LOG = {
    "worker-gpu": " ready.",
    "worker-default": " ready.",
    "beat": "beat pidbox: Connected",
}
CELERY_SERVICES = ("worker-gpu", "worker-default", "beat")


class Stack:
    """The app services of compose.yaml as processes here, with their health checks."""

    def __init__(self, compose: dict, deploy, env: dict[str, str], home: Path, stop_group) -> None:
        self.services = compose["services"]
        self.stop_group = stop_group
        self.deploy = deploy
        self.env = env
        self.home = home
        self.processes: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}

    def here(self, word: str) -> str:
        """A word of a command with the image's paths put onto this machine."""
        return word.replace("/app/", f"{REPO_ROOT}/").replace("/home/bibi/", f"{self.home}/")

    def command(self, name: str) -> list[str]:
        return [self.here(word) for word in self.deploy.words(self.services[name]["command"])]

    def run(self, name: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            self.command(name), cwd=REPO_ROOT, env=self.env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip

    def start(self, name: str) -> None:
        self.logs[name] = self.home / f"{name}.log"
        with self.logs[name].open("w") as log:
            self.processes[name] = subprocess.Popen(
                self.command(name), cwd=REPO_ROOT, env=self.env, stdout=log,
                stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

    def stop(self, name: str) -> None:
        self.stop_group(self.processes.pop(name))

    def health(self, name: str) -> subprocess.CompletedProcess:
        """The service's health check, run the way Docker runs it."""
        test = self.services[name]["healthcheck"]["test"]
        kind, *rest = test
        if kind == "CMD-SHELL":
            argv = ["/bin/sh", "-c", self.here(rest[0])]
        else:
            argv = [self.here(word) for word in rest]
        return subprocess.run(
            argv, cwd=REPO_ROOT, env=self.env, capture_output=True, text=True, timeout=60
        )

    def wait_healthy(self, name: str, timeout: float = 120) -> subprocess.CompletedProcess:
        deadline = time.monotonic() + timeout
        # A ping nobody answers waits out its whole timeout: ask once the node says it is up.
        ready = READY_IN_LOG.get(name)
        while ready and ready not in self.logs[name].read_text(errors="replace"):
            if self.processes[name].poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        while True:
            result = self.health(name)
            if result.returncode == 0:
                return result
            process = self.processes[name]
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"{name} never became healthy: {result.stdout}{result.stderr}\n"
                    f"{self.logs[name].read_text(errors='replace')[-3000:]}"
                )
            time.sleep(1)

    def stop_all(self) -> None:
        for name in list(self.processes):
            self.stop(name)


@pytest.fixture
def stack(compose, deploy, production_env, stop_group, free_port, tmp_path) -> Iterator[Stack]:
    env = dict(production_env)
    var = tmp_path / "var"
    env.update(
        UPLOAD_ROOT=str(var / "uploads"),
        MODEL_STORE=str(var / "models"),
        STATIC_ROOT=str(tmp_path / "static"),
        PORT=str(free_port()),
        SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
        WEB_CONCURRENCY="1",
        # What Docker sets in every container: %h in the node names expands to it.
        HOSTNAME=socket.gethostname(),
        # The image's virtualenv is first on its PATH: gunicorn, celery and python are its own.
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    home = tmp_path / "home"
    home.mkdir()
    stack = Stack(compose, deploy, env, home, stop_group)
    try:
        yield stack
    finally:
        stack.stop_all()


def test_the_compose_services_start_here_and_pass_their_health_checks(stack, fresh_database):
    stack.env["DATABASE_URL"] = fresh_database
    # The image's build step: static files, collected with the settings of a deployment.
    collect = subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=REPO_ROOT, env={**stack.env, "SECRET_KEY": "collectstatic-at-build-time"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert collect.returncode == 0, collect.stderr
    assert (Path(stack.env["STATIC_ROOT"]) / "admin" / "css" / "base.css").is_file()

    migrate = stack.run("migrate")
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    assert "Applying sharedtasks.0001_initial... OK" in migrate.stdout

    for name in ("web", "worker-gpu", "worker-default", "beat"):
        stack.start(name)
    for name in ("web", "worker-gpu", "worker-default", "beat"):
        stack.wait_healthy(name)

    port = stack.env["PORT"]
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/healthz", headers={"Host": "bibi.example.org"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "ok", body
    expected = {f"{queue}@{stack.env['HOSTNAME']}" for queue in ("gpu", "default")}
    assert expected <= set(body["worker"]["workers"])
    # Behind the TLS proxy, static files come from gunicorn itself (WhiteNoise), DEBUG off.
    opener = urllib.request.build_opener(_NoRedirects)
    through_proxy = {"Host": "bibi.example.org", "X-Forwarded-Proto": "https"}
    static = f"http://127.0.0.1:{port}/static/admin/css/base.css"
    with opener.open(urllib.request.Request(static, headers=through_proxy), timeout=10) as answer:
        assert answer.status == 200
    # Around the proxy, plain http is sent to https: every page but /healthz.
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(urllib.request.Request(static, headers={"Host": "bibi.example.org"}))
    assert redirect.value.code == 301
    assert (
        redirect.value.headers["Location"] == "https://bibi.example.org/static/admin/css/base.css"
    )

    # Each check fails once its service is gone, and beat's once beat hangs. (Together: a ping
    # that no node answers takes the check's whole timeout.)
    stack.stop("worker-gpu")
    stack.stop("worker-default")
    beat = stack.processes["beat"]
    os.killpg(beat.pid, signal.SIGSTOP)
    try:
        with ThreadPoolExecutor() as pool:
            checks = dict(
                zip(CELERY_SERVICES, pool.map(stack.health, CELERY_SERVICES), strict=True)
            )
    finally:
        os.killpg(beat.pid, signal.SIGCONT)
    for name, check in checks.items():
        assert check.returncode != 0, name
        assert "No nodes replied" in check.stdout + check.stderr, name
    stack.stop("web")
    gone = stack.health("web")
    assert gone.returncode == 1
    assert gone.stderr.startswith(f"/healthz did not answer on port {port}")


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_the_web_health_check_says_when_the_database_is_gone(stack):
    stack.env["DATABASE_URL"] = "postgres://postgres@127.0.0.1:1/nothing"
    stack.start("web")
    deadline = time.monotonic() + 60
    while "the site is up but its database is not" not in (result := stack.health("web")).stderr:
        assert time.monotonic() < deadline, result.stderr
        time.sleep(0.5)
    assert result.returncode == 1
