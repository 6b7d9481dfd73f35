"""End to end on the real stack: PostgreSQL, Redis, a gpu worker and a default worker (with
beat), as separate processes; then the same run with a gpu worker killed, and with the
broker gone, mid-run."""

from __future__ import annotations

import math
import time

import pytest

from bibi.evaluation import compute, services
from bibi.evaluation.models import CellChunk, ScoringRun, Snapshot
from bibi.systems.models import Prediction

from .conftest import (
    assert_leaderboards_match,
    build_scored_task,
    direct_report,
    relabel,
    resubmit_osu,
    upload_self_reported_pairs,
)

pytestmark = pytest.mark.slow

BASE = "/api/v1/shared-tasks/sst/"
# Fast housekeeping, so that a lost message is sent again within seconds.
FAULT_SETTINGS = {
    "EVALUATION_CHUNK_SIZE": 1,
    "EVALUATION_STALL_TIMEOUT": 3,
    "HOUSEKEEPING_INTERVAL": 1,
}
WORDS = [
    "so", "very", "truly", "really", "deeply", "madly", "quite", "wholly", "fully", "just",
    "still", "always", "simply", "surely", "gladly",
]  # fmt: skip


def wait_for(condition, what: str, workers=(), timeout: float = 400):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            logs = "\n".join(f"--- {w.name}\n{w.log()[-2500:]}" for w in workers)
            raise AssertionError(f"timed out waiting for {what}\n{logs}")
        time.sleep(0.1)


def done_run(trigger: str | None = None, after: int = 0):
    runs = ScoringRun.objects.filter(status__in=["done", "failed"], id__gt=after)
    if trigger:
        runs = runs.filter(trigger=trigger)
    return runs.order_by("id").last()


def run_scoring(system_id: int):
    """A condition: the latest finished run whose snapshot scored ``system_id``."""

    def found() -> ScoringRun | None:
        runs = ScoringRun.objects.filter(status="done").select_related("snapshot").order_by("-id")
        return next(
            (r for r in runs if any(e["system_id"] == system_id for e in r.snapshot.systems)),
            None,
        )

    return found


def test_hosted_and_self_reported_systems_are_scored_by_real_workers(stack_factory):
    stack = stack_factory()
    task = build_scored_task()
    gpu = stack.start("gpu", "gpu")
    default = stack.start("default", "default", beat=True)
    workers = (gpu, default)

    # The pair predictions ask for a run (a version brought cells after the break phase). Beat
    # may have asked for one already (the break phase is closed): the run to check is the one
    # that scored the self-reported system's pair predictions, whichever finished first.
    upload_self_reported_pairs(task)
    run = wait_for(run_scoring(task.by_hand.id), "the run scoring the pair predictions", workers)

    assert run.status == "done", run.failure_reason
    # Computed: the distinct (hosted version, text) not known from validation, once each.
    assert sum(CellChunk.objects.values_list("computed", flat=True)) == 14
    assert (
        Prediction.objects.filter(source="pairs", system_version__system__kind="hosted").count()
        == 14
    )
    assert gpu.received("gpu.cells_compute") >= 1
    assert gpu.received("default.") == 0 and default.received("gpu.") == 0

    organizer = task.cast.client("organizer")
    assert organizer.post(f"{BASE}snapshots/{run.snapshot.id}/publish/").status_code == 200
    public = task.cast.client("anonymous")
    published = {
        "builders": public.get(f"{BASE}leaderboard/builders/").json()["rows"],
        "breakers": public.get(f"{BASE}leaderboard/breakers/").json()["rows"],
    }
    assert_leaderboards_match(published, direct_report(task))


def test_a_relabel_from_adjudication_scores_again_without_any_gpu_task(stack_factory):
    stack = stack_factory()
    task = build_scored_task()
    gpu = stack.start("gpu", "gpu")
    default = stack.start("default", "default", beat=True)
    upload_self_reported_pairs(task)
    first = wait_for(done_run, "the first run", (gpu, default))
    sent = gpu.received("gpu.cells_compute")
    chunks = list(CellChunk.objects.values_list("id", "sends"))

    pair = relabel(task, "I loved this movie!", "negative")

    rerun = wait_for(
        lambda: done_run("adjudication", after=first.id), "the re-score", (gpu, default)
    )
    assert rerun.status == "done", rerun.failure_reason
    assert rerun.snapshot.items.get(pair_id=pair.id).variant_label == "negative"
    assert list(CellChunk.objects.values_list("id", "sends")) == chunks
    assert gpu.received("gpu.cells_compute") == sent
    assert_leaderboards_match(rerun.snapshot.tables, direct_report(task))


def big_task():
    """The scored task with many more variants: a run of 74 one-cell chunks."""
    task = build_scored_task()
    more = [
        {"original_id": "s1", "variant_text": f"I love this movie {word}!", "variant_label": "positive"}
        for word in WORDS
    ] + [
        {"original_id": "s4", "variant_text": f"Russell is {word} terrific as coach Herb Brooks.",
         "variant_label": "positive"}
        for word in WORDS
    ]  # fmt: skip
    resubmit_osu(task, more)
    return task


def assert_complete_and_equal_to_an_undisturbed_run(
    task, snapshot: Snapshot, settings, chunk_size: int
) -> None:
    """Every cell once, then the same snapshot as a run computed here without disturbance."""
    from bibi.pairs.selectors import pairs_effective

    variants = {pair["variant_text"] for pair in pairs_effective(shared_task=task.shared_task)}
    for version in task.hosted_versions:
        cells = list(version.predictions.filter(source="pairs").values_list("text", flat=True))
        assert len(cells) == len(set(cells)), "a cell was written twice"
        assert set(cells) == variants, "a cell is missing"
    assert not CellChunk.objects.filter(done_at__isnull=True).exists()

    # The undisturbed run: every pair cell computed again, here, in one go.
    Prediction.objects.filter(source="pairs", system_version__system__kind="hosted").delete()
    CellChunk.objects.all().delete()
    settings.EVALUATION_CHUNK_SIZE = chunk_size
    run = services.scoring_run_request(
        shared_task=task.shared_task, trigger="organizer", send=False
    )
    calm = compute.scoring_run_complete(run_id=run.id).snapshot
    assert_same(snapshot.tables, calm.tables)
    mine = list(snapshot.items.order_by("position").values())
    theirs = list(calm.items.order_by("position").values())
    for row in (*mine, *theirs):
        row.pop("id"), row.pop("snapshot_id")
    assert mine == theirs


def assert_same(first, second, path: str = "") -> None:
    """Equal, numbers to 1e-6 relative: λmax is float32 arithmetic, and a batch of other
    texts (padded to another length) rounds it differently."""
    if isinstance(first, dict):
        assert first.keys() == second.keys(), path
        for key in first:
            assert_same(first[key], second[key], f"{path}.{key}")
    elif isinstance(first, list):
        assert len(first) == len(second), path
        for index, (a, b) in enumerate(zip(first, second, strict=True)):
            assert_same(a, b, f"{path}[{index}]")
    elif isinstance(first, float) and isinstance(second, float):
        assert math.isclose(first, second, rel_tol=1e-6, abs_tol=1e-9), (path, first, second)
    else:
        assert first == second, (path, first, second)


def test_a_gpu_worker_killed_mid_run_loses_nothing(stack_factory, settings):
    # Chunks of a few texts: long enough for the worker to be caught in the middle of one.
    stack = stack_factory(**(FAULT_SETTINGS | {"EVALUATION_CHUNK_SIZE": 4}))
    task = big_task()
    upload_self_reported_pairs(task)  # asks for the run: it waits for a worker
    default = stack.start("default", "default", beat=True)
    gpu = stack.start("gpu", "gpu")

    def at_work():
        done = CellChunk.objects.filter(done_at__isnull=False).count()
        return done >= 2 and CellChunk.objects.filter(
            started_at__isnull=False, done_at__isnull=True
        )

    wait_for(at_work, "a chunk at work", (gpu,))
    gpu.kill()
    # The chunks the worker was computing when it died (unless it finished one just then):
    # their messages died with it, unacknowledged.
    in_flight = list(
        CellChunk.objects.filter(started_at__isnull=False, done_at__isnull=True).values_list(
            "id", flat=True
        )
    )
    assert CellChunk.objects.filter(done_at__isnull=True).exists(), "the run ended first"
    survivor = stack.start("gpu-again", "gpu")

    run = wait_for(done_run, "the run", (gpu, survivor, default))
    assert run.status == "done", run.failure_reason
    assert survivor.received("gpu.cells_compute") >= 1
    # Housekeeping sent them again once the queue had drained.
    resent = dict(CellChunk.objects.filter(id__in=in_flight).values_list("id", "sends"))
    assert all(sends >= 2 for sends in resent.values()), resent
    stack.close()
    assert_complete_and_equal_to_an_undisturbed_run(task, run.snapshot, settings, chunk_size=4)


def test_a_broker_lost_mid_run_loses_nothing(stack_factory, settings):
    stack = stack_factory(**FAULT_SETTINGS)
    task = big_task()
    upload_self_reported_pairs(task)
    default = stack.start("default", "default", beat=True)
    gpu = stack.start("gpu", "gpu")

    wait_for(
        lambda: CellChunk.objects.filter(done_at__isnull=False).count() >= 5, "5 chunks", (gpu,)
    )
    stack.broker.stop()
    open_at_outage = CellChunk.objects.filter(done_at__isnull=True).count()
    assert open_at_outage > 0, "the run ended before the broker could be stopped"
    time.sleep(3)
    stack.broker.start()

    run = wait_for(done_run, "the run", (gpu, default))
    assert run.status == "done", run.failure_reason
    # The messages went with the broker: the chunks left open were sent again.
    assert CellChunk.objects.filter(sends__gt=1).exists()
    stack.close()
    assert_complete_and_equal_to_an_undisturbed_run(task, run.snapshot, settings, chunk_size=1)
