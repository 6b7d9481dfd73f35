"""What the benchmarks share: phases laid around now, SST-2 sentences, a task with its users,
a hosted MiniLM validated in this process, a real Celery worker process started and stopped,
CPU time of a process tree, and waiting for a task's chunks.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import CommandError
from django.utils import timezone

from bibi.evaluation.models import CellChunk
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.systems.models import SystemVersion

SST2_DEV = Path(settings.BASE_DIR).parent / "shared" / "data" / "sst2" / "stsa.binary.dev"


def phases_around_now(shared_task: SharedTask, current: str) -> None:
    """Lay the four phases out around now, ``current`` running."""
    order = [kind.value for kind in Phase.Kind]
    now = timezone.now()
    Phase.objects.filter(shared_task=shared_task).delete()
    for index, kind in enumerate(order):
        starts_at = now + timedelta(days=10 * (index - order.index(current)))
        Phase.objects.create(
            shared_task=shared_task,
            kind=kind,
            starts_at=starts_at,
            ends_at=starts_at + timedelta(days=10),
        )


def sst_sentences(limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for line in SST2_DEV.read_text(encoding="utf-8").splitlines():
        _, _, text = line.partition(" ")
        if text.strip():
            seen.setdefault(text.strip())
    return list(seen)[:limit]


def minilm_archive(directory: Path) -> Path:
    """MiniLM-L6 with a fresh two-label head (timings do not depend on training), zipped."""
    from fim_engine.training import minilm_classifier

    model, tokenizer = minilm_classifier(["negative", "positive"])
    model_dir = directory / "minilm"
    model.save_pretrained(model_dir, safe_serialization=True)
    tokenizer.save_pretrained(model_dir)
    return Path(shutil.make_archive(str(directory / "minilm"), "zip", model_dir))


def bench_task(name: str, slug: str) -> tuple[str, tuple[Any, Any, Any], SharedTask]:
    """A task for a benchmark that needs workers (so committed): a random suffix, its organizer,
    a builder and a breaker (users named ``bench-...-{suffix}``), and the task."""
    suffix = secrets.token_hex(4)
    users = get_user_model().objects
    organizer, builder, breaker = (
        users.create_user(f"bench-{role}-{suffix}") for role in ("organizer", "builder", "breaker")
    )
    shared_task = task_services.shared_task_create(
        creator=organizer, name=f"{name} benchmark {suffix}", slug=f"{slug}-{suffix}"
    )
    return suffix, (organizer, builder, breaker), shared_task


def hosted_minilm(
    shared_task: SharedTask, builder: Any, suffix: str, scratch: Path
) -> tuple[SystemVersion, float]:
    """A builder team of ``builder`` with a hosted MiniLM-L6 (a fresh head), validated in this
    process; and the seconds validation took."""
    from bibi.systems import services as system_services
    from bibi.systems import validation

    team = task_services.team_create(
        shared_task=shared_task, owner=builder, kind="builder", name=f"Builders {suffix}"
    )
    system = system_services.system_create(team=team, actor=builder, name="minilm", kind="hosted")
    archive = minilm_archive(scratch)
    version = system_services.system_version_upload(
        system=system,
        actor=builder,
        archive=SimpleUploadedFile("minilm.zip", archive.read_bytes()),
    )
    started = time.perf_counter()
    version = validation.system_version_validate(version_id=version.id)
    validated = time.perf_counter() - started
    if version.status != SystemVersion.Status.READY:
        raise CommandError(f"validation failed: {version.failure_detail}")
    return version, validated


def bench_task_delete(
    shared_task: SharedTask, *, suffix: str, scratch: Path, worker: subprocess.Popen | None
) -> None:
    """Stop the benchmark's worker and remove what it made: the task, its models and uploads,
    its users (named ``...{suffix}``) and the scratch folder."""
    if worker is not None:
        os.killpg(worker.pid, 15)
        worker.wait(timeout=30)
    for version in SystemVersion.objects.filter(system__shared_task=shared_task):
        shutil.rmtree(Path(settings.MODEL_STORE) / str(version.uuid), ignore_errors=True)
        if version.archive_path:
            (Path(settings.UPLOAD_ROOT) / version.archive_path).unlink(missing_ok=True)
    shared_task.delete()
    get_user_model().objects.filter(username__endswith=suffix).delete()
    shutil.rmtree(scratch, ignore_errors=True)


def start_worker(log: Path, queues: str = "gpu") -> subprocess.Popen:
    from bibi.celery import app

    """A Celery worker process consuming ``queues`` (comma-separated), answering pings."""
    hostname = f"bench-{queues.replace(',', '-')}-{secrets.token_hex(3)}@localhost"
    env = dict(os.environ, DATABASE_URL=settings.DATABASE_URL, VAR_DIR=str(settings.VAR_DIR))
    command = [
        sys.executable, "-m", "celery", "-A", "bibi", "worker", "-Q", queues, "--concurrency",
        "1", "--hostname", hostname, "--without-gossip", "--without-mingle", "-l", "warning",
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + 120
    while not app.control.ping(destination=[hostname], timeout=0.5):
        if process.poll() is not None or time.monotonic() > deadline:
            raise CommandError(f"the {queues} worker did not start:\n{log.read_text()[-2000:]}")
    return process


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system, every thread) of a process and its children so far (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    pids = [pid]
    while pids:
        current = pids.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
        pids += [int(child) for child in children]
    return total


def wait_for_chunks(shared_task: SharedTask, patience: float = 300) -> None:
    """Until every chunk of the task is done; a worker that takes none for ``patience``
    seconds means another process is consuming this broker's gpu queue."""
    last_progress, done = time.monotonic(), -1
    while CellChunk.objects.filter(shared_task=shared_task, done_at__isnull=True).exists():
        now_done = CellChunk.objects.filter(shared_task=shared_task, done_at__isnull=False).count()
        if now_done != done:
            last_progress, done = time.monotonic(), now_done
        elif time.monotonic() - last_progress > patience:
            raise CommandError(
                "no chunk finished for a long time: is another worker consuming the gpu queue "
                f"of {settings.CELERY_BROKER_URL}? Give the benchmark a Redis database of its own."
            )
        time.sleep(0.2)
