"""The whole stack under Docker: build the image, bring compose.yaml up, ask /healthz.

Runs only where a Docker engine (and the compose plugin) answers; elsewhere it skips and says
why. It builds the image from scratch the first time, which downloads torch: allow 20 minutes.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


def _docker_compose_or_skip() -> None:
    if shutil.which("docker") is None:
        pytest.skip("no docker command on this machine: the stack is checked file by file only")
    engine = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=60)
    if engine.returncode != 0:
        reason = (engine.stderr.strip().splitlines() or ["docker info failed"])[-1]
        pytest.skip(f"no Docker engine answers here ({reason}): the stack is not brought up")
    plugin = subprocess.run(
        ["docker", "compose", "version"], capture_output=True, text=True, timeout=60
    )
    if plugin.returncode != 0:
        pytest.skip("Docker answers but has no compose plugin: the stack is not brought up")


@pytest.fixture
def stack_up(free_port, tmp_path) -> Iterator[int]:
    _docker_compose_or_skip()
    port = free_port()
    env_file = tmp_path / "bibi.env"
    env_file.write_text(
        "\n".join(
            [
                f"SECRET_KEY={secrets.token_hex(32)}",
                f"POSTGRES_PASSWORD={secrets.token_hex(16)}",
                f"REDIS_PASSWORD={secrets.token_hex(16)}",
                "ALLOWED_HOSTS=localhost,127.0.0.1",
                f"BIBI_WEB_PORT=127.0.0.1:{port}",
                f"BIBI_ENV_FILE={env_file}",
                "WEB_CONCURRENCY=1",
            ]
        )
        + "\n"
    )
    compose = [
        "docker", "compose", "--project-name", f"bibi-test-{uuid.uuid4().hex[:8]}",
        "--env-file", str(env_file),
        "-f", str(DEPLOY / "compose.yaml"), "-f", str(DEPLOY / "compose.cpu.yaml"),
    ]  # fmt: skip
    try:
        up = subprocess.run(
            [*compose, "up", "--detach", "--build", "--wait", "--wait-timeout", "600"],
            capture_output=True, text=True, timeout=1500,
        )  # fmt: skip
        if up.returncode != 0:
            logs = subprocess.run([*compose, "logs"], capture_output=True, text=True)
            pytest.fail(f"docker compose up failed:\n{up.stderr[-4000:]}\n{logs.stdout[-4000:]}")
        yield port
    finally:
        subprocess.run([*compose, "down", "--volumes"], capture_output=True, timeout=300)


def test_the_stack_comes_up_healthy_and_serves_healthz(stack_up):
    with urllib.request.urlopen(f"http://127.0.0.1:{stack_up}/healthz", timeout=10) as answer:
        status, body = answer.status, json.load(answer)
    assert status == 200, body
    assert body["database"]["detail"] == "postgresql answered"
    workers = body["worker"]["workers"]
    assert any(name.startswith("gpu@") for name in workers), workers
    assert any(name.startswith("default@") for name in workers), workers
