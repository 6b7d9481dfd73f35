"""docs/api.md's curl session, run as written against a fresh site on the embedded default."""

from __future__ import annotations

import csv
import io
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from .conftest import REPO_ROOT, code_blocks

pytestmark = [pytest.mark.embedded, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _block(option: str) -> str:
    (block,) = [b for b in code_blocks("api.md") if b.options.get(option) == "session"]
    return block.text


@pytest.fixture
def site(tmp_path):
    """``manage.py runserver`` on the embedded default, on a free port, with its own var/."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(DEBUG="1", VAR_DIR=str(tmp_path / "var"))
    manage = [sys.executable, str(REPO_ROOT / "manage.py")]
    migrate = subprocess.run(
        [*manage, "migrate", "--noinput"], env=env, capture_output=True, text=True, timeout=180
    )
    assert migrate.returncode == 0, migrate.stderr
    port = _free_port()
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen(
        [*manage, "runserver", "--noreload", f"127.0.0.1:{port}"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/healthz", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        yield url, tmp_path / "server.log"
    finally:
        server.terminate()
        server.wait(timeout=20)
        log.close()


def _csv_rows(lines: list[str], header_start: str) -> list[dict[str, str]]:
    """The CSV table whose header line begins with ``header_start``, up to the next table."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("rank,")), len(lines)
    )
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:end]))))


@pytest.mark.skipif(
    not (shutil.which("curl") and shutil.which("jq")), reason="the session needs curl and jq"
)
def test_the_api_session_runs_a_task_to_a_published_leaderboard(site):
    url, server_log = site
    result = subprocess.run(
        ["bash", "-c", _block("run")],
        cwd=REPO_ROOT,
        env={**os.environ, "BIBI": url, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"{result.stdout}\n{result.stderr}\n{server_log.read_text()[-3000:]}"
    )
    printed = result.stdout.splitlines()
    shown = _block("output").splitlines()

    # Every step's answer is as the page shows it; the hosted model's figures depend on its
    # training, so its rows are compared on their names and counts only.
    steps = [line for line in shown if not line.startswith(("1,", "2,"))]
    assert [line for line in printed if not line.startswith(("1,", "2,"))] == steps

    builders = _csv_rows(printed, "rank,system,")
    assert sorted((r["system"], r["kind"], r["pairs"]) for r in builders) == [
        ("Lexicon Lab / bow", "hosted", "5"),
        ("Lexicon Lab / lexicon", "self_reported", "5"),
    ]
    lexicon = next(r for r in builders if r["system"] == "Lexicon Lab / lexicon")
    shown_lexicon = next(
        r for r in _csv_rows(shown, "rank,system,") if r["system"] == "Lexicon Lab / lexicon"
    )
    assert {k: v for k, v in lexicon.items() if k != "rank"} == {
        k: v for k, v in shown_lexicon.items() if k != "rank"
    }
    # The word list knows no negation: two of the five pairs break it, one it gets wrong twice.
    assert (lexicon["breaks"], lexicon["both_wrong"], lexicon["weight_source"]) == (
        "2",
        "1",
        "blind_dev",
    )
    (breakers,) = _csv_rows(printed, "rank,team,")
    assert (breakers["rank"], breakers["team"], breakers["pairs"]) == ("1", "Negators", "5")
