"""``manage.py bench_evaluation``: the figures of the evaluation app.

- ``--part worker``: MiniLM cells per second end to end through a real ``gpu`` worker
  process (prediction, λmax and word hints of every pair text, written to the database),
  next to ``fim_engine``'s bare batched ``System.fisher`` on the same texts. Needs
  ``REDIS_URL``; the task it builds is deleted afterwards.
- ``--part rescore``: a re-score of 20 systems × 10,000 pairs whose cells are all known
  (no ``gpu`` task), phase by phase, then the SQL queries and time of every leaderboard
  endpoint on that snapshot. Everything lives in one transaction rolled back at the end.

    $ DATABASE_URL=postgres://... REDIS_URL=redis://... python manage.py bench_evaluation
"""

from __future__ import annotations

import os
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.db.models import Max, Min, Sum
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import get_resolver
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bibi.evaluation import services
from bibi.evaluation.models import CellChunk
from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Dataset, Example, Phase, SharedTask, Team
from bibi.systems.models import Prediction, System, SystemVersion, text_digest

SST2_DEV = Path(settings.BASE_DIR).parent / "shared" / "data" / "sst2" / "stsa.binary.dev"
LEADERBOARD = [
    "leaderboard/",
    "leaderboard/builders/",
    "leaderboard/breakers/",
    "leaderboard/breaker_systems/",
    "leaderboard/matrix/",
    "leaderboard/tags/",
    "leaderboard/flips/",
    "leaderboard/both_wrong/",
    "leaderboard/lambda_delta/",
    "leaderboard/lambda_correlation/",
    "leaderboard/lambda_auc/",
    "leaderboard/lambda_quartiles/",
    "leaderboard/items/",
    "leaderboard/items/?format=csv",
    "leaderboard/builders/?format=csv",
    "leaderboard/export/",
]


def _phases(shared_task: SharedTask, current: str) -> None:
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


# --- MiniLM through a real worker -------------------------------------------------------------


def _sst_sentences(limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for line in SST2_DEV.read_text(encoding="utf-8").splitlines():
        _, _, text = line.partition(" ")
        if text.strip():
            seen.setdefault(text.strip())
    return list(seen)[:limit]


def _minilm_archive(directory: Path) -> Path:
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
    archive = _minilm_archive(scratch)
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


def _start_gpu_worker(log: Path) -> subprocess.Popen:
    from bibi.celery import app

    hostname = f"bench-gpu-{secrets.token_hex(3)}@localhost"
    env = dict(os.environ, DATABASE_URL=settings.DATABASE_URL, VAR_DIR=str(settings.VAR_DIR))
    command = [
        sys.executable, "-m", "celery", "-A", "bibi", "worker", "-Q", "gpu", "--concurrency",
        "1", "--hostname", hostname, "--without-gossip", "--without-mingle", "-l", "warning",
    ]  # fmt: skip
    with log.open("w") as out:
        process = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    deadline = time.monotonic() + 120
    while not app.control.ping(destination=[hostname], timeout=0.5):
        if process.poll() is not None or time.monotonic() > deadline:
            raise CommandError(f"the gpu worker did not start:\n{log.read_text()[-2000:]}")
    return process


def _cpu_seconds(pid: int) -> float:
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


def _wait_for_chunks(shared_task: SharedTask, patience: float = 300) -> None:
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


def bench_worker(*, texts: int, repeats: int, out) -> dict[str, Any]:
    import fim_engine
    from bibi.pairs import services as pair_services
    from bibi.pairs.checks import PairInput

    if settings.CELERY_TASK_ALWAYS_EAGER:
        raise CommandError("the worker benchmark needs a broker: set REDIS_URL")
    sentences = _sst_sentences(texts)
    suffix, (organizer, builder, breaker), shared_task = bench_task("Evaluation", "bench-eval")
    scratch = Path(tempfile.mkdtemp(prefix="bibi-bench-"))
    worker = None
    try:
        _phases(shared_task, "build")
        starter = task_services.dataset_get_or_create(shared_task=shared_task, split="starter")
        Example.objects.bulk_create(
            Example(dataset=starter, external_id=f"s{i}", text=text, label="positive", position=i)
            for i, text in enumerate(sentences)
        )
        dev = task_services.dataset_get_or_create(shared_task=shared_task, split="blind_dev")
        Example.objects.create(
            dataset=dev, external_id="d0", text="a fine film .", label="positive", position=0
        )
        version, validated = hosted_minilm(shared_task, builder, suffix, scratch)

        worker = _start_gpu_worker(scratch / "worker.log")
        # Warm the worker (imports, model load) on one starter cell, outside the timing.
        from bibi.sharedtasks.importing import examples_import

        examples_import(
            shared_task=shared_task,
            split="starter",
            actor=organizer,
            data=b"id,text,label\nwarm,a warm-up sentence .,positive\n",
            filename="warm.csv",
        )
        _wait_for_chunks(shared_task)

        _phases(shared_task, "break")
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
        _phases(shared_task, "contest")

        loaded = fim_engine.load_system(
            Path(settings.MODEL_STORE) / version.model_dir,
            batch_size=settings.SYSTEM_BATCH_SIZE,
            max_length=settings.SYSTEM_MAX_SEQUENCE_LENGTH,
        )
        loaded.fisher(variants[:64], hints=True)

        def bare_pass() -> tuple[float, float]:
            started, cpu = time.perf_counter(), time.process_time()
            loaded.fisher(variants, hints=True)
            return time.perf_counter() - started, time.process_time() - cpu

        def worker_pass() -> tuple[float, int, float]:
            # Every pair cell is computed again: the model stays loaded in the worker.
            Prediction.objects.filter(system_version=version, source="pairs").delete()
            cpu = _cpu_seconds(worker.pid)
            run = services.scoring_run_request(
                shared_task=shared_task, trigger="command", send=False
            )
            services.scoring_run_advance(run_id=run.id)
            _wait_for_chunks(shared_task)
            chunks = CellChunk.objects.filter(run=run).aggregate(
                first=Min("sent_at"), last=Max("done_at"), cells=Sum("computed")
            )
            used = _cpu_seconds(worker.pid) - cpu
            # The run goes on to its scores here (no default worker), so the next pass is a
            # run of its own.
            services.scoring_run_advance(run_id=run.id, send=False)
            services.scoring_run_score(run_id=run.id, send=False)
            seconds = (chunks["last"] - chunks["first"]).total_seconds()
            return seconds, chunks["cells"], used

        # Alternated and best of each: other work on the machine slows either one at times.
        # CPU seconds (every thread, the worker's processes included) are less at its mercy.
        bare, through_worker = [], []
        for _ in range(repeats):
            bare.append(bare_pass())
            through_worker.append(worker_pass())
        elapsed, cells, _ = min(through_worker)
        worker_cpu = min(cpu for _, _, cpu in through_worker)
        bare_seconds = min(seconds for seconds, _ in bare)
        bare_cpu = min(cpu for _, cpu in bare)
        written = Prediction.objects.filter(system_version=version, source="pairs").count()
        figures = {
            "texts": len(variants),
            "cells": cells,
            "written": written,
            "worker_seconds": elapsed,
            "worker_cells_per_second": cells / elapsed,
            "bare_seconds": bare_seconds,
            "bare_cells_per_second": len(variants) / bare_seconds,
            "cpu_ratio": (cells / worker_cpu) / (len(variants) / bare_cpu),
            "validation_seconds": validated,
        }
        figures["ratio"] = figures["worker_cells_per_second"] / figures["bare_cells_per_second"]
        out.write(
            f"MiniLM, {figures['texts']} SST-2 dev sentences (+1 word), batch "
            f"{settings.SYSTEM_BATCH_SIZE}, chunks of {settings.EVALUATION_CHUNK_SIZE}:\n"
            f"  through a real gpu worker, written to {connection.vendor}: {figures['cells']} cells "
            f"in {elapsed:.2f} s = {figures['worker_cells_per_second']:.1f} cells/s "
            f"(best of {repeats}: {', '.join(f'{t:.1f}' for t, _, _ in through_worker)} s), "
            f"{worker_cpu:.1f} CPU s (best of {', '.join(f'{c:.1f}' for _, _, c in through_worker)})\n"
            f"  fim_engine System.fisher(hints=True), bare: {bare_seconds:.2f} s = "
            f"{figures['bare_cells_per_second']:.1f} texts/s "
            f"(best of {repeats}: {', '.join(f'{t:.1f}' for t, _ in bare)} s), {bare_cpu:.1f} CPU s "
            f"(best of {', '.join(f'{c:.1f}' for _, c in bare)})\n"
            f"  end to end / bare = {figures['ratio']:.0%} by the clock, "
            f"{figures['cpu_ratio']:.0%} by CPU time (target: at least 75%)\n"
        )
        return figures
    finally:
        bench_task_delete(shared_task, suffix=suffix, scratch=scratch, worker=worker)


# --- A re-score with every cell known -----------------------------------------------------------


def _synthetic_task(*, systems: int, pairs: int, teams: int, starter: int, seed: int = 3):
    """A task after its break phase with ``pairs`` pairs and every cell of ``systems`` known."""
    rng = random.Random(seed)
    suffix = secrets.token_hex(4)
    users = get_user_model().objects
    organizer = users.create_user(f"bench-organizer-{suffix}")
    shared_task = task_services.shared_task_create(
        creator=organizer,
        name=f"Re-score benchmark {suffix}",
        slug=f"bench-rescore-{suffix}",
        max_pairs_per_set=pairs,
    )
    _phases(shared_task, "results")
    dataset = task_services.dataset_get_or_create(
        shared_task=shared_task, split=Dataset.Split.STARTER
    )
    labels = ["negative", "positive"]
    examples = Example.objects.bulk_create(
        Example(
            dataset=dataset,
            external_id=f"s{i}",
            text=f"review {i} : a {rng.choice(['witty', 'bleak', 'lush'])} film about "
            f"{rng.choice(['grief', 'love', 'money'])} , and the cast is fine .",
            label=rng.choice(labels),
            position=i,
        )
        for i in range(starter)
    )
    breaker_teams = [
        Team.objects.create(
            shared_task=shared_task, kind="breaker", name=f"Breakers {t}", alias=f"B{t} {suffix}"
        )
        for t in range(teams)
    ]
    submitted = timezone.now() - timedelta(days=15)
    sets = [
        PairSet.objects.create(
            shared_task=shared_task, team=team, source="api", submitted_at=submitted
        )
        for team in breaker_teams
    ]
    tags = shared_task.strategy_tags
    pair_rows = []
    for n in range(pairs):
        example = examples[n % starter]
        label = rng.choice(labels)
        pair_rows.append(
            Pair(
                pair_set=sets[n % teams],
                row=n + 2,
                original=example,
                original_text=example.text,
                original_label=example.label,
                variant_text=example.text.replace("review", f"review v{n}", 1),
                variant_label=label,
                effective_label=label,
                edit_distance=1,
                tags=[rng.choice(tags)],
            )
        )
    Pair.objects.bulk_create(pair_rows, batch_size=5000)
    builder_teams = [
        Team.objects.create(
            shared_task=shared_task, kind="builder", name=f"Builders {b}", alias=f"A{b} {suffix}"
        )
        for b in range((systems + 3) // 4)
    ]
    cells = []
    for s in range(systems):
        hosted = s % 5 != 4
        system = System.objects.create(
            shared_task=shared_task,
            team=builder_teams[s // 4],
            name=f"system {s}",
            kind=System.Kind.HOSTED if hosted else System.Kind.SELF_REPORTED,
        )
        version = SystemVersion.objects.create(
            system=system,
            number=1,
            status="ready",
            dev_accuracy=rng.uniform(0.6, 0.9),
            dev_count=872,
        )
        System.objects.filter(id=system.id).update(active_version=version)
        skill = rng.uniform(0.6, 0.9)
        rows = [(example.text, example.label, example) for example in examples] + [
            (pair.variant_text, pair.variant_label, None) for pair in pair_rows
        ]
        for text, gold, example in rows:
            right = rng.random() < skill
            cells.append(
                Prediction(
                    system_version=version,
                    source="starter" if hosted and example is not None else "pairs",
                    example=example if hosted else None,
                    text=text,
                    text_sha256=text_digest(text),
                    label=gold if right else labels[1 - labels.index(gold)],
                    probabilities={"negative": 0.3, "positive": 0.7} if hosted else None,
                    lambda_max=rng.expovariate(1.0) if hosted else None,
                    input_sha256=secrets.token_hex(32) if hosted else "",
                )
            )
    Prediction.objects.bulk_create(cells, batch_size=10_000)
    return shared_task, organizer


def bench_rescore(*, systems: int, pairs: int, out) -> dict[str, Any]:
    with transaction.atomic():
        started = time.perf_counter()
        shared_task, organizer = _synthetic_task(
            systems=systems, pairs=pairs, teams=4, starter=2000
        )
        built = time.perf_counter() - started
        chunks = CellChunk.objects.count()

        started = time.perf_counter()
        run = services.scoring_run_request(shared_task=shared_task, trigger="organizer", send=False)
        run = services.scoring_run_advance(run_id=run.id, send=False)
        advanced = time.perf_counter() - started
        started = time.perf_counter()
        run = services.scoring_run_score(run_id=run.id, send=False)
        scored = time.perf_counter() - started
        if run.status != "done" or CellChunk.objects.count() != chunks:
            raise CommandError(
                f"the re-score did not finish without cells to compute: {run.status} {run.failure_reason}"
            )
        snapshot = run.snapshot
        services.snapshot_publish(snapshot=snapshot, actor=organizer)
        out.write(
            f"Re-score of {systems} systems x {pairs} pairs ({snapshot.counts['texts']} texts, "
            f"{snapshot.counts['cells']} cells, all known; no gpu task):\n"
            f"  request + read the matrix: {advanced:.2f} s; score + store the snapshot: "
            f"{scored:.2f} s; total {advanced + scored:.2f} s (building the data: {built:.0f} s)\n"
            f"Leaderboard endpoints on that snapshot ({connection.vendor}), queries and time:\n"
        )
        token = Token.objects.create(user=organizer)
        clients = {
            "anonymous": Client(),
            "organizer": Client(HTTP_AUTHORIZATION=f"Token {token.key}"),
        }
        get_resolver().url_patterns  # noqa: B018
        counts: dict[str, dict[str, int]] = {}
        with override_settings(ALLOWED_HOSTS=["testserver"]):
            for endpoint in LEADERBOARD:
                url = f"/api/v1/shared-tasks/{shared_task.slug}/{endpoint}"
                row = []
                for who, client in clients.items():
                    with CaptureQueriesContext(connection) as queries:
                        started = time.perf_counter()
                        response = client.get(url, secure=True)
                        seconds = time.perf_counter() - started
                    if response.status_code != 200:
                        raise CommandError(f"{url} answered {response.status_code} to {who}")
                    counts.setdefault(endpoint, {})[who] = len(queries)
                    row.append(f"{who} {len(queries)} queries {seconds:.2f} s")
                out.write(f"  {endpoint:<36} {'; '.join(row)}\n")
        transaction.set_rollback(True)
    return {"advance_seconds": advanced, "score_seconds": scored, "queries": counts}


class Command(BaseCommand):
    help = "Time the evaluation app: MiniLM cells through a real worker, a 20 x 10k re-score."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--part", choices=["all", "worker", "rescore"], default="all")
        parser.add_argument("--texts", type=int, default=400, help="SST-2 dev sentences (worker).")
        parser.add_argument("--repeat", type=int, default=2, help="Passes of each (worker).")
        parser.add_argument("--systems", type=int, default=20)
        parser.add_argument("--pairs", type=int, default=10_000)

    def handle(
        self, *args, part: str, texts: int, repeat: int, systems: int, pairs: int, **options
    ) -> None:
        if part in ("all", "worker"):
            bench_worker(texts=texts, repeats=repeat, out=self.stdout)
        if part in ("all", "rescore"):
            bench_rescore(systems=systems, pairs=pairs, out=self.stdout)
