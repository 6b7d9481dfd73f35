"""`make worker` is a whole worker for one machine: both queues, and beat for the housekeeping."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def test_make_worker_runs_beat_as_well(production_env, stop_group, tmp_path):
    from bibi.celery import app

    log_path = tmp_path / "worker.log"
    with log_path.open("w") as log:
        make = subprocess.Popen(
            ["make", "--no-print-directory", "worker"], cwd=REPO_ROOT, env=production_env,
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    node = f"celery@{socket.gethostname()}"
    try:
        deadline = time.monotonic() + 120
        while not app.control.ping(destination=[node], timeout=0.5):
            assert make.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
        while "beat: Starting..." not in (log := log_path.read_text()):
            assert time.monotonic() < deadline, log
            time.sleep(0.2)
    finally:
        stop_group(make)
    assert "-B --schedule-filename var/celerybeat-schedule" in log
    assert ".> default" in log and ".> gpu" in log
