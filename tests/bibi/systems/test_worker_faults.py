"""Worker faults on the real stack: worker processes of their own, on a redis-server of their own.

Children killed by a memory limit or by ``kill -9``, time limits read on the worker, a broker
that goes away and comes back, a worker that vanishes mid-validation. Each test starts the
processes it needs with the settings it needs, and stops them.
"""

from __future__ import annotations

import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from bibi.systems import services
from bibi.systems.apis import QUEUE_UNREACHABLE_NOTE
from bibi.systems.models import SystemVersion

from ...conftest import CeleryProcess, start_beat, start_worker
from ..conftest import build_cast
from .conftest import TINY_MODELS, archive_upload, long_blind_dev, wide_cnn

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def upload(cast, model: Path) -> dict:
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name=f"s{time.monotonic_ns()}", kind="hosted"
    )
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(model)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    return {"id": SystemVersion.objects.get(system=system).id, **response.json()}


def wait_for(
    version_id: int,
    done: Callable[[SystemVersion], bool],
    *processes: CeleryProcess,
    timeout: float = 120,
) -> SystemVersion:
    deadline = time.monotonic() + timeout
    while not done(version := SystemVersion.objects.get(id=version_id)):
        if time.monotonic() > deadline:
            logs = "\n".join(process.log()[-3000:] for process in processes)
            raise AssertionError(f"still {version.status} ({version.attempts} attempts):\n{logs}")
        time.sleep(0.1)
    return version


def finished(version: SystemVersion) -> bool:
    return version.status in ("ready", "failed")


def child_pid(version: SystemVersion) -> int:
    return int(version.worker.rsplit(":", 1)[1])


def resident_bytes(pid: int) -> int:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE")


class MemoryLimit(threading.Thread):
    """Kill a worker's pool children with SIGKILL once their resident memory passes a limit.

    What the kernel's OOM killer does to a process in a container with a memory limit, set
    here on the worker child alone, so nothing else on the machine is at risk.
    """

    def __init__(self, worker: CeleryProcess, limit: int) -> None:
        super().__init__(daemon=True)
        self.worker = worker
        self.limit = limit
        self.kills: list[int] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.02):
            for pid in self.worker.children():
                try:
                    if resident_bytes(pid) > self.limit:
                        os.kill(pid, signal.SIGKILL)
                        self.kills.append(pid)
                except (FileNotFoundError, ProcessLookupError):
                    continue


@pytest.fixture
def cast(transactional_db):
    """The cast with the build phase running, committed where the workers can read it."""
    return build_cast(current_phase="build")


@pytest.fixture
def slow_model(tmp_path, cast) -> Path:
    """A model that takes a few seconds and 600 MB over its worker's baseline to validate."""
    long_blind_dev(cast, 64)
    return wide_cnn(tmp_path / "wide")


# On the worker: whole batches of long texts, so the model's memory shows at once.
BIG_BATCHES = {"SYSTEM_BATCH_SIZE": "64", "SYSTEM_MAX_SEQUENCE_LENGTH": "256"}


def test_a_model_the_childs_memory_limit_kills_fails_as_worker_crashed_after_the_capped_attempts(
    private_broker, tmp_path, cast, slow_model
):
    worker = start_worker(
        tmp_path,
        broker_url=private_broker.url,
        env={**BIG_BATCHES, "SYSTEM_VALIDATION_MAX_ATTEMPTS": "2"},
    )
    (child,) = worker.children()
    oom_killer = MemoryLimit(worker, resident_bytes(child) + 300 * 1024**2)
    oom_killer.start()
    try:
        queued = upload(cast, slow_model)
        version = wait_for(queued["id"], finished, worker)
    finally:
        oom_killer.stopped.set()
        worker.stop()
    assert (version.status, version.failure_reason) == ("failed", "worker_crashed")
    assert (version.attempts, version.crashes, len(oom_killer.kills)) == (2, 2, 2)
    assert version.failure_detail.startswith(
        "The model was killed while running, most likely for memory (Worker exited prematurely: "
        "signal 9 (SIGKILL)"
    )
    assert version.counts_against_quota is True
    assert not list(Path(settings.MODEL_STORE).glob(f"*{version.uuid}*"))


def test_a_model_over_the_childs_address_space_limit_fails_as_out_of_memory_once(
    private_broker, tmp_path, cast, slow_model
):
    worker = start_worker(
        tmp_path,
        broker_url=private_broker.url,
        env={**BIG_BATCHES, "MALLOC_ARENA_MAX": "2"},
    )
    try:
        (child,) = worker.children()
        size = int(Path(f"/proc/{child}/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        limit = size + 400 * 1024**2
        resource.prlimit(child, resource.RLIMIT_AS, (limit, limit))
        queued = upload(cast, slow_model)
        version = wait_for(queued["id"], finished, worker)
        assert worker.children() == [child]
    finally:
        worker.stop()
    assert (version.status, version.failure_reason) == ("failed", "out_of_memory"), (
        version.failure_detail
    )
    assert (version.attempts, version.crashes) == (1, 0)
    assert "can't allocate memory" in version.failure_detail


def test_a_child_killed_once_is_tried_again_and_the_version_ends_ready(
    private_broker, tmp_path, cast, slow_model
):
    worker = start_worker(tmp_path, broker_url=private_broker.url, env=BIG_BATCHES)
    try:
        queued = upload(cast, slow_model)
        running = wait_for(queued["id"], lambda v: v.status == "running", worker)
        os.kill(child_pid(running), signal.SIGKILL)
        version = wait_for(queued["id"], finished, worker)
    finally:
        worker.stop()
    assert version.status == "ready", version.failure_detail
    assert (version.attempts, version.crashes) == (2, 1)
    assert version.dev_count == 64


def test_the_worker_applies_its_own_soft_time_limit_not_the_senders(private_broker, tmp_path, cast):
    long_blind_dev(cast, 512)
    worker = start_worker(
        tmp_path,
        broker_url=private_broker.url,
        env={"SYSTEM_VALIDATION_SOFT_TIME_LIMIT": "2", "SYSTEM_VALIDATION_TIME_LIMIT": "60"},
    )
    try:
        # This process, which sends the task, has the default limit of half an hour.
        assert settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT == 1800
        queued = upload(cast, wide_cnn(tmp_path / "wide"))
        version = wait_for(queued["id"], finished, worker)
    finally:
        worker.stop()
    assert (version.status, version.failure_reason) == ("failed", "timeout")
    assert version.failure_detail == "Validation took longer than the limit of 2 seconds."


def test_a_child_killed_at_the_hard_limit_fails_as_a_time_out_and_leaves_no_partial_directory(
    private_broker, tmp_path, cast, slow_model
):
    worker = start_worker(
        tmp_path,
        broker_url=private_broker.url,
        env={
            **BIG_BATCHES,
            "SYSTEM_VALIDATION_SOFT_TIME_LIMIT": "4",
            "SYSTEM_VALIDATION_TIME_LIMIT": "5",
        },
    )
    try:
        queued = upload(cast, slow_model)
        running = wait_for(queued["id"], lambda v: v.status == "running", worker)
        partial = Path(settings.MODEL_STORE) / f".partial-{running.uuid}"
        while not partial.exists():
            time.sleep(0.01)
        # A child that cannot answer its soft limit (stuck in native code, in the kernel): only
        # the hard limit ends it, and it cannot clean up after itself.
        os.kill(child_pid(running), signal.SIGSTOP)
        version = wait_for(queued["id"], finished, worker)
        worker.wait_for_log("Hard time limit (5")
    finally:
        worker.stop()
    assert (version.status, version.failure_reason) == ("failed", "timeout")
    assert version.failure_detail == (
        "Validation took longer than the hard limit of 5 seconds and was stopped."
    )
    assert not partial.exists()


HOUSEKEEPING_EVERY_SECOND = {"HOUSEKEEPING_INTERVAL": "1", "SYSTEM_QUEUE_RESEND_AFTER": "2"}


def test_an_upload_while_the_broker_is_down_is_stored_and_runs_once_the_broker_is_back(
    private_broker, tmp_path, cast
):
    worker = start_worker(tmp_path, broker_url=private_broker.url, env=HOUSEKEEPING_EVERY_SECOND)
    beat = start_beat(tmp_path, broker_url=private_broker.url, env=HOUSEKEEPING_EVERY_SECOND)
    try:
        private_broker.stop()
        queued = upload(cast, TINY_MODELS / "tiny-cnn")
        assert (queued["status"], queued["note"]) == ("queued", QUEUE_UNREACHABLE_NOTE)
        time.sleep(3)
        assert SystemVersion.objects.get(id=queued["id"]).status == "queued"
        private_broker.start()
        restarted = timezone.now()
        started = wait_for(queued["id"], lambda v: v.started_at is not None, worker, beat)
        version = wait_for(queued["id"], finished, worker, beat)
    finally:
        beat.stop()
        worker.stop()
    assert version.status == "ready", version.failure_detail
    assert version.attempts == 1
    print(
        f"\nbroker restart → stranded version running again: "
        f"{(started.started_at - restarted).total_seconds():.1f} s"
    )


def test_running_work_whose_worker_vanished_is_taken_back_and_finished_by_another(
    private_broker, tmp_path, cast, slow_model
):
    env = {**BIG_BATCHES, **HOUSEKEEPING_EVERY_SECOND, "SYSTEM_WORKER_LOST_AFTER": "4"}
    lost = start_worker(tmp_path, broker_url=private_broker.url, env=env)
    beat = start_beat(tmp_path, broker_url=private_broker.url, env=env)
    other = None
    try:
        queued = upload(cast, slow_model)
        running = wait_for(queued["id"], lambda v: v.status == "running", lost)
        # The machine goes: the worker and its child, without a word.
        for pid in (lost.pid, child_pid(running)):
            os.kill(pid, signal.SIGKILL)
        lost.process.wait()
        other = start_worker(tmp_path, broker_url=private_broker.url, env=env)
        version = wait_for(queued["id"], finished, other, beat)
    finally:
        beat.stop()
        if other is not None:
            other.stop()
        lost.stop()
    assert version.status == "ready", version.failure_detail
    assert (version.attempts, version.crashes) == (2, 0)
    assert version.worker.startswith(other.hostname)
