"""``bench_evaluation --part worker``: MiniLM cells per second end to end through a real
``gpu`` worker process, next to ``fim_engine``'s bare batched ``System.fisher``."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError
from django.db import connection
from django.db.models import Max, Min, Sum

from bibi.bench.support import (
    bench_task,
    bench_task_delete,
    cpu_seconds,
    hosted_minilm,
    phases_around_now,
    sst_sentences,
    start_worker,
    wait_for_chunks,
)
from bibi.evaluation import services
from bibi.evaluation.models import CellChunk
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Example, SharedTask
from bibi.systems.models import Prediction, SystemVersion


def bench_worker(*, texts: int, repeats: int, out) -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        raise CommandError("the worker benchmark needs a broker: set REDIS_URL")
    sentences = sst_sentences(texts)
    suffix, (organizer, builder, breaker), shared_task = bench_task("Evaluation", "bench-eval")
    scratch = Path(tempfile.mkdtemp(prefix="bibi-bench-"))
    worker = None
    try:
        version, validated = _task_with_minilm(shared_task, sentences, builder, suffix, scratch)
        worker = start_worker(scratch / "worker.log")
        _warm_worker(shared_task, organizer)
        variants = _pairs_submitted(shared_task, sentences, breaker, suffix)
        figures = _alternated(shared_task, version, variants, worker.pid, repeats)
        figures["validation_seconds"] = validated
        _report(figures, repeats, out)
        return figures
    finally:
        bench_task_delete(shared_task, suffix=suffix, scratch=scratch, worker=worker)


def _task_with_minilm(
    shared_task: SharedTask, sentences: list[str], builder: Any, suffix: str, scratch: Path
) -> tuple[SystemVersion, float]:
    """The starter set of ``sentences``, a one-sentence blind dev set and a ready MiniLM."""
    phases_around_now(shared_task, "build")
    starter = task_services.dataset_get_or_create(shared_task=shared_task, split="starter")
    Example.objects.bulk_create(
        Example(dataset=starter, external_id=f"s{i}", text=text, label="positive", position=i)
        for i, text in enumerate(sentences)
    )
    dev = task_services.dataset_get_or_create(shared_task=shared_task, split="blind_dev")
    Example.objects.create(
        dataset=dev, external_id="d0", text="a fine film .", label="positive", position=0
    )
    return hosted_minilm(shared_task, builder, suffix, scratch)


def _warm_worker(shared_task: SharedTask, organizer: Any) -> None:
    """Warm the worker (imports, model load) on one starter cell, outside the timing."""
    from bibi.sharedtasks.importing import examples_import

    examples_import(
        shared_task=shared_task,
        split="starter",
        actor=organizer,
        data=b"id,text,label\nwarm,a warm-up sentence .,positive\n",
        filename="warm.csv",
    )
    wait_for_chunks(shared_task)


def _pairs_submitted(
    shared_task: SharedTask, sentences: list[str], breaker: Any, suffix: str
) -> list[str]:
    """One pair per sentence (a word added), submitted in the break phase; the variants."""
    from bibi.pairs import services as pair_services
    from bibi.tasktypes.rules import PairInput

    phases_around_now(shared_task, "break")
    breakers = task_services.team_create(
        shared_task=shared_task, owner=breaker, kind="breaker", name=f"Breakers {suffix}"
    )
    variants = [f"{text} indeed" for text in sentences]
    pair_services.pair_set_submit(
        team=breakers,
        user=breaker,
        pairs=[
            PairInput(
                row=i + 1, original_id=f"s{i}", variant_text=variant, variant_label="positive"
            )
            for i, variant in enumerate(variants)
        ],
    )
    phases_around_now(shared_task, "contest")
    return variants


def _bare_pass(loaded: Any, variants: list[str]) -> tuple[float, float]:
    started, cpu = time.perf_counter(), time.process_time()
    loaded.fisher(variants, hints=True)
    return time.perf_counter() - started, time.process_time() - cpu


def _worker_pass(
    shared_task: SharedTask, version: SystemVersion, pid: int
) -> tuple[float, int, float]:
    # Every pair cell is computed again: the model stays loaded in the worker.
    Prediction.objects.filter(system_version=version, source="pairs").delete()
    cpu = cpu_seconds(pid)
    run = services.scoring_run_request(shared_task=shared_task, trigger="command", send=False)
    services.scoring_run_advance(run_id=run.id)
    wait_for_chunks(shared_task)
    chunks = CellChunk.objects.filter(run=run).aggregate(
        first=Min("sent_at"), last=Max("done_at"), cells=Sum("computed")
    )
    used = cpu_seconds(pid) - cpu
    # The run goes on to its scores here (no default worker), so the next pass is a run of
    # its own.
    services.scoring_run_advance(run_id=run.id, send=False)
    services.scoring_run_score(run_id=run.id, send=False)
    seconds = (chunks["last"] - chunks["first"]).total_seconds()
    return seconds, chunks["cells"], used


def _alternated(
    shared_task: SharedTask, version: SystemVersion, variants: list[str], pid: int, repeats: int
) -> dict[str, Any]:
    """Bare and through-the-worker passes alternated, best of each: other work on the machine
    slows either one at times. CPU seconds (every thread, the worker's processes included)
    are less at its mercy."""
    import fim_engine

    loaded = fim_engine.load_system(
        Path(settings.MODEL_STORE) / version.model_dir,
        batch_size=settings.SYSTEM_BATCH_SIZE,
        max_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
    )
    loaded.fisher(variants[:64], hints=True)
    bare, through_worker = [], []
    for _ in range(repeats):
        bare.append(_bare_pass(loaded, variants))
        through_worker.append(_worker_pass(shared_task, version, pid))
    elapsed, cells, _ = min(through_worker)
    worker_cpu = min(cpu for _, _, cpu in through_worker)
    bare_seconds = min(seconds for seconds, _ in bare)
    bare_cpu = min(cpu for _, cpu in bare)
    figures: dict[str, Any] = {
        "texts": len(variants),
        "cells": cells,
        "written": Prediction.objects.filter(system_version=version, source="pairs").count(),
        "worker_seconds": elapsed,
        "worker_cells_per_second": cells / elapsed,
        "bare_seconds": bare_seconds,
        "bare_cells_per_second": len(variants) / bare_seconds,
        "cpu_ratio": (cells / worker_cpu) / (len(variants) / bare_cpu),
        "passes": {"worker": through_worker, "bare": bare},
        "worker_cpu": worker_cpu,
        "bare_cpu": bare_cpu,
    }
    figures["ratio"] = figures["worker_cells_per_second"] / figures["bare_cells_per_second"]
    return figures


def _report(figures: dict[str, Any], repeats: int, out) -> None:
    through_worker, bare = figures["passes"]["worker"], figures["passes"]["bare"]
    out.write(
        f"MiniLM, {figures['texts']} SST-2 dev sentences (+1 word), batch "
        f"{settings.SYSTEM_BATCH_SIZE}, chunks of {settings.EVALUATION_CHUNK_SIZE}:\n"
        f"  through a real gpu worker, written to {connection.vendor}: {figures['cells']} cells "
        f"in {figures['worker_seconds']:.2f} s = {figures['worker_cells_per_second']:.1f} cells/s "
        f"(best of {repeats}: {', '.join(f'{t:.1f}' for t, _, _ in through_worker)} s), "
        f"{figures['worker_cpu']:.1f} CPU s "
        f"(best of {', '.join(f'{c:.1f}' for _, _, c in through_worker)})\n"
        f"  fim_engine System.fisher(hints=True), bare: {figures['bare_seconds']:.2f} s = "
        f"{figures['bare_cells_per_second']:.1f} texts/s "
        f"(best of {repeats}: {', '.join(f'{t:.1f}' for t, _ in bare)} s), "
        f"{figures['bare_cpu']:.1f} CPU s (best of {', '.join(f'{c:.1f}' for _, c in bare)})\n"
        f"  end to end / bare = {figures['ratio']:.0%} by the clock, "
        f"{figures['cpu_ratio']:.0%} by CPU time (target: at least 75%)\n"
    )
