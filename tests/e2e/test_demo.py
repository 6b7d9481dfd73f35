"""The demo path: the site on the embedded default, with no PostgreSQL or Redis."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.embedded


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_the_embedded_site_migrates_and_serves_healthz(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(DEBUG="1", VAR_DIR=str(tmp_path / "var"))
    manage = [sys.executable, str(REPO_ROOT / "manage.py")]
    migrate = subprocess.run(
        [*manage, "migrate", "--noinput"], env=env, capture_output=True, text=True, timeout=120
    )
    assert migrate.returncode == 0, migrate.stderr
    assert (tmp_path / "var" / "bibi.sqlite3").exists()

    port = _free_port()
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/healthz", timeout=2
                ) as response:
                    status, body = response.status, json.load(response)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert status == 200
    assert body["status"] == "ok"
    assert body["database"]["detail"] == "sqlite answered"
