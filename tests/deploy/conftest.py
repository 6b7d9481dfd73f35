"""The deployment as files: compose.yaml and its overrides, read the way Docker Compose reads them.

There is no Docker engine on most machines that run this suite, so the files are parsed here:
YAML (with compose's ``!reset`` tag), then compose's variable interpolation, from a settings
file like the one an operator writes from ``deploy/env.example``. Fixtures only: tests import
no helpers.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
DEPLOY = REPO_ROOT / "deploy"

# What an operator puts in deploy/.env: every variable compose.yaml and its overrides require.
OPERATOR_ENV = {
    "POSTGRES_PASSWORD": "pg-secret-0123",
    "REDIS_PASSWORD": "redis-secret-4567",
    "BIBI_PRIMARY_ADDRESS": "10.0.0.5",
    "BIBI_NFS_SERVER": "10.0.0.9",
    "BIBI_NFS_EXPORT": "/export/bibi",
    "WORKER_TOKEN": "worker-secret-89ab-of-at-least-32-characters",
    "WORKER_PLATFORM_URL": "https://bibi.example.org",
}


class Reset:
    """Compose's ``!reset``: drop what the files before this one said here."""

    def __init__(self, value: Any) -> None:
        self.value = value


class _ComposeLoader(yaml.SafeLoader):
    pass


def _reset(loader: yaml.SafeLoader, node: yaml.Node) -> Reset:
    if isinstance(node, yaml.SequenceNode):
        return Reset(loader.construct_sequence(node))
    if isinstance(node, yaml.MappingNode):
        return Reset(loader.construct_mapping(node))
    return Reset(loader.construct_scalar(node))


_ComposeLoader.add_constructor("!reset", _reset)

_VARIABLE = re.compile(
    r"\$(?:(?P<escaped>\$)|(?P<bare>[A-Za-z_][A-Za-z0-9_]*)"
    r"|\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-?])(?P<arg>[^}]*))?\})"
)


class MissingVariable(Exception):
    pass


def interpolate(value: Any, env: Mapping[str, str]) -> Any:
    """Compose's substitution of ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``${VAR:?error}``
    (and the forms without the colon) in every string; ``$$`` is a literal ``$``."""
    if isinstance(value, dict):
        return {key: interpolate(item, env) for key, item in value.items()}
    if isinstance(value, list):
        return [interpolate(item, env) for item in value]
    if isinstance(value, Reset):
        return Reset(interpolate(value.value, env))
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match["escaped"]:
            return "$"
        name = match["bare"] or match["braced"]
        op, arg = match["op"], match["arg"]
        current = env.get(name)
        unset = current is None or (current == "" and op is not None and op.startswith(":"))
        if op and op.endswith("-"):
            return interpolate(arg, env) if unset else current
        if op and op.endswith("?"):
            if unset:
                raise MissingVariable(f"required variable {name} is missing a value: {arg}")
            return current
        return current or ""

    return _VARIABLE.sub(substitute, value)


class DeployFiles:
    """deploy/ as Docker Compose reads it, with a filled-in deploy/.env (``env``)."""

    Reset = Reset
    MissingVariable = MissingVariable
    root = DEPLOY

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = dict(env)

    def load(self, name: str, env: Mapping[str, str] | None = None) -> dict[str, Any]:
        text = (DEPLOY / name).read_text()
        return interpolate(yaml.load(text, Loader=_ComposeLoader), self.env if env is None else env)

    @staticmethod
    def words(command: str | list[str]) -> list[str]:
        """A service's command as the words compose runs (a string is split as a shell would)."""
        return shlex.split(command) if isinstance(command, str) else list(command)

    @staticmethod
    def health_words(healthcheck: Mapping[str, Any]) -> list[str]:
        """The words of a health check: ``CMD`` runs them, ``CMD-SHELL`` hands them to sh."""
        test = healthcheck["test"]
        if isinstance(test, str):
            return shlex.split(test)
        kind, *rest = test
        if kind == "CMD":
            return rest
        if kind == "CMD-SHELL":
            return shlex.split(rest[0])
        raise AssertionError(f"a health check test of an unknown kind: {test!r}")


@pytest.fixture(scope="session")
def deploy() -> DeployFiles:
    return DeployFiles(OPERATOR_ENV)


@pytest.fixture(scope="session")
def compose(deploy: DeployFiles) -> dict[str, Any]:
    """compose.yaml as Docker Compose sees it with a filled-in deploy/.env."""
    return deploy.load("compose.yaml")


@pytest.fixture
def production_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a deployment with DEBUG off, on this machine's PostgreSQL and Redis
    (the test database server and this suite's Redis database)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DEBUG", "DJANGO_SETTINGS_MODULE"} and not key.startswith("SECURE_")
    }
    env.update(
        DEBUG="0",
        SECRET_KEY="a-production-like-secret-key-" + "k8Qz3" * 10,
        ALLOWED_HOSTS="bibi.example.org",
        DATABASE_URL=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test"),
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"),
        VAR_DIR=str(tmp_path / "var"),
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return env


@pytest.fixture
def settings_with(tmp_path: Path) -> Callable[[dict[str, str], str], subprocess.CompletedProcess]:
    """Evaluate an expression over ``bibi.settings`` in a fresh process with the given env."""

    def run(env: dict[str, str], expression: str) -> subprocess.CompletedProcess:
        clean = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DEBUG", "SECRET_KEY", "DATABASE_URL", "REDIS_URL"}
            and not key.startswith("SECURE_")
        }
        clean.update({"VAR_DIR": str(tmp_path / "var"), **env})
        code = f"import bibi.settings as s; print(({expression}))"
        return subprocess.run(
            [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=60
        )

    return run


def _stop_group(process: subprocess.Popen) -> None:
    """Stop a process started with ``start_new_session`` and all it started: a Celery worker
    left behind would take other tests' tasks from the same queues."""
    os.killpg(process.pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while True:
        process.poll()  # reap the leader, or the group never empties
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            break
        if time.monotonic() > deadline:
            os.killpg(process.pid, signal.SIGKILL)
        time.sleep(0.2)
    process.wait()


@pytest.fixture(scope="session")
def stop_group() -> Callable[[subprocess.Popen], None]:
    return _stop_group


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    return _free_port
