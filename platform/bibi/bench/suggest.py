"""``bench_guidance --part suggest``: ``POST .../guidance/suggest/`` through a real ``gpu``
worker, one original at a time, beside ``fim_engine.suggest`` on the same model in this
process. The task is committed (the worker reads it) and deleted afterwards."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.test import Client
from django.test.utils import override_settings
from rest_framework.authtoken.models import Token

from bibi.bench.support import (
    bench_task,
    bench_task_delete,
    hosted_minilm,
    phases_around_now,
    start_worker,
)
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Example, SharedTask
from bibi.systems.models import SystemVersion


def bench_suggest(*, rows: list[tuple[str, str]], out) -> None:
    """``rows`` (text, gold label) are the starter originals, asked for one at a time."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        raise CommandError("the suggestion benchmark needs a broker and a worker: set REDIS_URL")
    suffix, (_, builder, breaker), shared_task = bench_task("Suggestion", "bench-suggest")
    scratch = Path(tempfile.mkdtemp(prefix="bibi-bench-"))
    worker = None
    try:
        version = _task_with_minilm(shared_task, rows, builder, breaker, suffix, scratch)
        worker = start_worker(scratch / "worker.log")
        client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=breaker).key}")
        url = f"/api/v1/shared-tasks/{shared_task.slug}/guidance/suggest/"
        with override_settings(ALLOWED_HOSTS=["testserver"]):
            figures = _alternated(client, url, version, rows)
        out.write(
            f"Suggestions for one original on MiniLM-L6 ({len(figures['worker'])} SST-2 test "
            f"originals, {statistics.mean(figures['counts']):.1f} verified suggestions each):\n"
            f"  POST guidance/suggest/ through a gpu worker: {spread(figures['worker'])} "
            f"(the first, warming the worker: {figures['warm']:.1f} s)\n"
            f"  fim_engine.suggest in this process: {spread(figures['in_process'])}\n"
            f"  a draft variant checked (POST with variant_text): {spread(figures['drafts'])}\n"
        )
    finally:
        bench_task_delete(shared_task, suffix=suffix, scratch=scratch, worker=worker)


def _task_with_minilm(
    shared_task: SharedTask,
    rows: list[tuple[str, str]],
    builder: Any,
    breaker: Any,
    suffix: str,
    scratch: Path,
) -> SystemVersion:
    phases_around_now(shared_task, "build")
    starter = task_services.dataset_get_or_create(shared_task=shared_task, split="starter")
    Example.objects.bulk_create(
        Example(dataset=starter, external_id=f"t{i}", text=text, label=label, position=i)
        for i, (text, label) in enumerate(rows)
    )
    version, _ = hosted_minilm(shared_task, builder, suffix, scratch)
    phases_around_now(shared_task, "break")
    task_services.team_create(
        shared_task=shared_task, owner=breaker, kind="breaker", name=f"Breakers {suffix}"
    )
    return version


def _ask(client: Client, url: str, body: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    response = client.post(url, body, content_type="application/json", secure=True)
    elapsed = time.perf_counter() - started
    if response.status_code != 200:
        raise CommandError(
            f"POST {url} answered {response.status_code}: {response.content[:300]!r}"
        )
    return elapsed, response.json()


def _alternated(
    client: Client, url: str, version: SystemVersion, rows: list[tuple[str, str]]
) -> dict[str, Any]:
    """Through the worker and in this process, alternated original by original, so that other
    jobs on the machine weigh on both alike."""
    import fim_engine

    loaded = fim_engine.load_system(
        Path(settings.MODEL_STORE) / version.model_dir,
        batch_size=settings.SYSTEM_BATCH_SIZE,
        max_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
    )
    figures: dict[str, Any] = {"worker": [], "in_process": [], "counts": [], "drafts": []}
    # Warm both: imports, the model, WordNet and the neighbour table.
    started = time.perf_counter()
    _ask(client, url, {"original_id": "t0"})
    figures["warm"] = time.perf_counter() - started
    fim_engine.suggest(rows[0][0], {"minilm": loaded})
    for i, (text, _) in enumerate(rows[1:], start=1):
        elapsed, body = _ask(client, url, {"original_id": f"t{i}"})
        figures["worker"].append(elapsed)
        figures["counts"].append(len(body["suggestions"]))
        started = time.perf_counter()
        fim_engine.suggest(text, {"minilm": loaded})
        figures["in_process"].append(time.perf_counter() - started)
        if i <= 10:
            draft = {"original_id": f"t{i}", "variant_text": f"{text} indeed"}
            figures["drafts"].append(_ask(client, url, draft)[0])
    return figures


def spread(values: list[float]) -> str:
    """The median and the 90th percentile, in milliseconds."""
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    return f"median {1000 * statistics.median(ordered):.0f} ms, p90 {1000 * p90:.0f} ms"
