"""``manage.py bench_interactive``: anonymous page latency while a scoring run keeps the ``gpu``
queue busy and breakers ask for suggestions.

A committed task (deleted afterwards) with a hosted MiniLM-L6 (a fresh two-label head), a
starter set of SST-2 sentences and ``--pairs`` pairs whose cells are all missing; a real worker
``-Q interactive,gpu`` (as ``deploy/compose.yaml``'s ``worker-gpu``) and a real gunicorn on
loopback. Then, for ``--seconds``: the run's chunks on the ``gpu`` queue, ``--breakers``
breakers each asking for suggestions (``POST guidance/suggest/``, following a 202 to its
answer) one after the other, and ``--visitors`` anonymous visitors reading the task's pages.
Every loop stops by itself at the end of the window (or after ``MAX_REQUESTS``).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bibi.bench.support import (
    bench_task,
    bench_task_delete,
    hosted_minilm,
    phases_around_now,
    sst_sentences,
    start_worker,
)
from bibi.evaluation import services
from bibi.evaluation.models import CellChunk, ScoringRun
from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Example, SharedTask, Team

MAX_REQUESTS = 10_000  # per loop: a bound besides the clock
# Pages (not /healthz: it waits out a broadcast ping to the workers by design).
ANONYMOUS_PAGES = ["/", "/tasks/{slug}/", "/tasks/{slug}/results/"]


@dataclass
class Figures:
    """What the loops saw: latencies in seconds, answers by status."""

    pages: list[float] = field(default_factory=list)
    page_errors: int = 0
    suggestions: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def count(self, status: int) -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1


def bench_interactive(
    *,
    breakers: int,
    visitors: int,
    seconds: int,
    pairs: int,
    web_workers: int,
    web_threads: int,
    wait: int,
    out,
) -> dict[str, Any]:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        raise CommandError("this benchmark needs a broker and workers: set REDIS_URL")
    suffix, (_, builder, _), shared_task = bench_task("Interactive", "bench-interactive")
    scratch = Path(tempfile.mkdtemp(prefix="bibi-bench-"))
    worker = web = None
    try:
        texts = _task(shared_task, builder, suffix, scratch, pairs=pairs)
        tokens = _breakers(shared_task, breakers, suffix)
        worker = start_worker(scratch / "worker.log", queues="interactive,gpu")
        web, base = _gunicorn(scratch / "web.log", web_workers, web_threads, wait)
        run = services.scoring_run_request(shared_task=shared_task, trigger="command")
        services.scoring_run_advance(run_id=run.id)
        figures = _window(base, shared_task, tokens, texts, visitors=visitors, seconds=seconds)
        result = _summary(figures, shared_task, run, seconds=seconds)
        result.update(wait=wait, web_workers=web_workers, web_threads=web_threads)
        result["load"] = os.getloadavg()
        _report(result, out, breakers=breakers, visitors=visitors)
        return result
    finally:
        if web is not None:
            web.terminate()
            web.wait(timeout=30)
        bench_task_delete(shared_task, suffix=suffix, scratch=scratch, worker=worker)


def _task(shared_task: SharedTask, builder: Any, suffix: str, scratch: Path, *, pairs: int):
    """The starter set, the hosted MiniLM (validated here) and ``pairs`` pairs, their cells
    missing; the starter texts."""
    texts = sst_sentences(60)
    phases_around_now(shared_task, "build")
    starter = task_services.dataset_get_or_create(shared_task=shared_task, split="starter")
    examples = Example.objects.bulk_create(
        Example(dataset=starter, external_id=f"s{i}", text=text, label="positive", position=i)
        for i, text in enumerate(texts)
    )
    dev = task_services.dataset_get_or_create(shared_task=shared_task, split="blind_dev")
    Example.objects.create(
        dataset=dev, external_id="d0", text="a fine film .", label="positive", position=0
    )
    hosted_minilm(shared_task, builder, suffix, scratch)
    phases_around_now(shared_task, "contest")
    team = Team.objects.create(shared_task=shared_task, kind="breaker", name=f"Pairs {suffix}")
    pair_set = PairSet.objects.create(
        shared_task=shared_task,
        team=team,
        source="api",
        submitted_at=timezone.now() - timedelta(days=15),
    )
    Pair.objects.bulk_create(
        Pair(
            pair_set=pair_set, row=n + 2, original=examples[n % len(examples)],
            original_text=examples[n % len(examples)].text, original_label="positive",
            variant_text=f"{examples[n % len(examples)].text} take {n}",
            variant_label="positive", effective_label="positive", edit_distance=1,
        )
        for n in range(pairs)
    )  # fmt: skip
    return texts


def _breakers(shared_task: SharedTask, count: int, suffix: str) -> list[str]:
    """``count`` breakers, each in a breaker team of their own; their API tokens."""
    tokens = []
    for n in range(count):
        user = get_user_model().objects.create_user(f"bench-breaker{n}-{suffix}")
        task_services.team_create(
            shared_task=shared_task, owner=user, kind="breaker", name=f"Breakers {n} {suffix}"
        )
        tokens.append(Token.objects.create(user=user).key)
    return tokens


def _gunicorn(log: Path, workers: int, threads: int, wait: int) -> tuple[subprocess.Popen, str]:
    """gunicorn on a free loopback port with the deployment's settings (``deploy/gunicorn.conf.py``)
    and ``workers`` processes of ``threads`` threads, answering /healthz (asked until it does); a
    suggestion request waits ``wait`` seconds for its job (``GUIDANCE_SUGGEST_WAIT``)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(
        os.environ,
        DATABASE_URL=settings.DATABASE_URL,
        REDIS_URL=settings.REDIS_URL,
        VAR_DIR=str(settings.VAR_DIR),
        SECRET_KEY=settings.SECRET_KEY,
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        ALLOWED_HOSTS="127.0.0.1",
        # The breakers' own rate is not what is measured here.
        GUIDANCE_SUGGEST_THROTTLE="100000/minute",
        GUIDANCE_SUGGEST_WAIT=str(wait),
        API_THROTTLE_ANON="100000/minute",
        API_THROTTLE_USER="100000/minute",
        WEB_CONCURRENCY=str(workers),
        WEB_THREADS=str(threads),
    )
    command = [
        sys.executable, "-m", "gunicorn", "bibi.wsgi", "--bind", f"127.0.0.1:{port}",
        "--config", str(settings.BASE_DIR / "deploy" / "gunicorn.conf.py"),
    ]  # fmt: skip
    with log.open("w") as handle:
        process = subprocess.Popen(command, env=env, stdout=handle, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise CommandError(f"gunicorn exited:\n{log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(f"{base}/healthz", timeout=5).read()
            return process, base
        except urllib.error.HTTPError:
            return process, base  # it answers (503 without beat: up all the same)
        except (urllib.error.URLError, OSError):
            time.sleep(0.5)
    process.terminate()
    raise CommandError(f"gunicorn did not answer in 120 s:\n{log.read_text()[-2000:]}")


def _call(url: str, *, token: str | None = None, body: dict | None = None) -> tuple[int, Any]:
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _breaker_loop(base, slug, token, texts, figures: Figures, stop_at: float, seed: int) -> None:
    """Suggestions for one original after the other, each followed to its answer."""
    url = f"{base}/api/v1/shared-tasks/{slug}/guidance/suggest/"
    for n in range(MAX_REQUESTS):
        if time.monotonic() >= stop_at:
            return
        started = time.monotonic()
        status, body = _call(url, token=token, body={"original_id": f"s{(seed + n) % len(texts)}"})
        while status == 202 and time.monotonic() < stop_at + 120:
            time.sleep(0.5)
            status, body = _call(json.loads(body)["location"], token=token)
        figures.count(status)
        if status == 200:
            with figures.lock:
                figures.suggestions.append(time.monotonic() - started)
        elif status == 429:
            time.sleep(1)


def _visitor_loop(base, slug, figures: Figures, stop_at: float) -> None:
    """Anonymous page reads, one after the other."""
    for n in range(MAX_REQUESTS):
        if time.monotonic() >= stop_at:
            return
        path = ANONYMOUS_PAGES[n % len(ANONYMOUS_PAGES)].format(slug=slug)
        started = time.monotonic()
        try:
            with urllib.request.urlopen(base + path, timeout=60) as response:
                response.read()
                ok = response.status == 200
        except (urllib.error.URLError, OSError):
            ok = False
        with figures.lock:
            figures.pages.append(time.monotonic() - started)
            figures.page_errors += 0 if ok else 1


def _window(base, shared_task, tokens, texts, *, visitors: int, seconds: int) -> Figures:
    figures = Figures()
    stop_at = time.monotonic() + seconds
    threads = [
        threading.Thread(
            target=_breaker_loop,
            args=(base, shared_task.slug, token, texts, figures, stop_at, 7 * n),
        )
        for n, token in enumerate(tokens)
    ] + [
        threading.Thread(target=_visitor_loop, args=(base, shared_task.slug, figures, stop_at))
        for _ in range(visitors)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return figures


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def _summary(figures: Figures, shared_task: SharedTask, run: ScoringRun, *, seconds: int):
    chunks = CellChunk.objects.filter(shared_task=shared_task)
    run.refresh_from_db()
    return {
        "pages": len(figures.pages),
        "page_errors": figures.page_errors,
        "page_p50": statistics.median(figures.pages) if figures.pages else float("nan"),
        "page_p99": _percentile(figures.pages, 0.99),
        "page_max": max(figures.pages, default=float("nan")),
        "suggestions": len(figures.suggestions),
        "suggestion_p50": statistics.median(figures.suggestions)
        if figures.suggestions
        else float("nan"),
        "suggestion_p99": _percentile(figures.suggestions, 0.99),
        "statuses": dict(sorted(figures.statuses.items())),
        "chunks_done": chunks.filter(done_at__isnull=False).count(),
        "chunks": chunks.count(),
        "run_status": run.status,
        "seconds": seconds,
    }


def _report(result: dict[str, Any], out, *, breakers: int, visitors: int):
    load = ", ".join(f"{value:.1f}" for value in result["load"])
    out.write(
        f"{result['seconds']} s (load average at the end {load}), gunicorn with "
        f"{result['web_workers']} workers x {result['web_threads']} threads "
        f"(GUIDANCE_SUGGEST_WAIT={result['wait']}), one worker "
        f"-Q interactive,gpu, a scoring run of {result['chunks']} chunks "
        f"({result['chunks_done']} done by the end; the run {result['run_status']}), "
        f"{breakers} breakers asking for suggestions, {visitors} anonymous visitors:\n"
        f"  anonymous pages: {result['pages']} requests, p50 {1000 * result['page_p50']:.0f} ms, "
        f"p99 {1000 * result['page_p99']:.0f} ms, max {1000 * result['page_max']:.0f} ms, "
        f"{result['page_errors']} errors (target: p99 under 1 s)\n"
        f"  suggestions answered: {result['suggestions']}, end to end p50 "
        f"{result['suggestion_p50']:.1f} s, p99 {result['suggestion_p99']:.1f} s; "
        f"final answers by status {result['statuses']}\n"
    )
