"""Two gpu workers as if on two machines of their own: each has its own VAR_DIR (model store
and uploads), and neither shares a path with the platform. They validate the hosted systems
and fill a run's cells with models fetched from the platform by digest; one is killed mid-run
and the other finishes it, with no cell lost or written twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from bibi.evaluation.models import CellChunk
from bibi.systems import services as system_services
from bibi.systems.models import SystemVersion

from ..systems.conftest import TINY_MODELS, archive_upload
from .conftest import build_scored_task, resubmit_osu, upload_self_reported_pairs
from .test_workers_e2e import (
    FAULT_SETTINGS,
    WORDS,
    assert_complete_and_equal_to_an_undisturbed_run,
    done_run,
    wait_for,
)

pytestmark = pytest.mark.slow

TOKEN = "the-worker-credential-of-this-test"
FETCHED = "fetched from the platform"


def validated_by_the_workers(workers):
    """``build_scored_task``'s ``validate``: upload through the service, and wait until a gpu
    worker has validated the version (its message goes to the test's broker)."""

    def validate(cast, team, user, name, model):
        system = system_services.system_create(team=team, actor=user, name=name, kind="hosted")
        version = system_services.system_version_upload(
            system=system, actor=user, archive=archive_upload(TINY_MODELS / model)
        )
        finished = wait_for(
            lambda: (
                SystemVersion.objects.filter(id=version.id, status__in=["ready", "failed"])
                .values_list("status", "failure_detail")
                .first()
            ),
            f"the validation of {name}",
            workers,
        )
        assert finished[0] == "ready", finished[1]
        system.refresh_from_db()
        return system

    return validate


def test_two_gpu_workers_without_a_shared_path_finish_a_run_one_of_them_killed(
    stack_factory, live_server, settings, tmp_path
):
    settings.WORKER_TOKEN = TOKEN
    stack = stack_factory(**(FAULT_SETTINGS | {"EVALUATION_CHUNK_SIZE": 4}))
    machines = {name: tmp_path / name for name in ("gpu-a", "gpu-b")}
    gpus = [
        stack.start(
            name,
            "gpu",
            own={
                "VAR_DIR": str(var_dir),
                "WORKER_PLATFORM_URL": live_server.url,
                "WORKER_TOKEN": TOKEN,
            },
        )
        for name, var_dir in machines.items()
    ]
    default = stack.start("default", "default", beat=True)
    workers = (*gpus, default)

    task = build_scored_task(validate=validated_by_the_workers(workers))
    resubmit_osu(
        task,
        [
            {"original_id": "s1", "variant_text": f"I love this movie {word}!",
             "variant_label": "positive"}
            for word in WORDS
        ] + [
            {"original_id": "s4", "variant_text": f"Russell is {word} terrific as coach Herb Brooks.",
             "variant_label": "positive"}
            for word in WORDS
        ],
    )  # fmt: skip
    # The gpu workers validated both hosted versions, from archives that came over the
    # platform's endpoint, checked by digest.
    assert sum(worker.received("gpu.system_validate") for worker in gpus) >= 2
    assert sum(worker.log().count(FETCHED) for worker in gpus) >= 2
    upload_self_reported_pairs(task)  # asks for the run

    def both_at_work():
        done = CellChunk.objects.filter(done_at__isnull=False).count()
        started = all(worker.received("gpu.cells_compute") for worker in gpus)
        return started and done >= 2 and CellChunk.objects.filter(done_at__isnull=True).exists()

    wait_for(both_at_work, "both gpu workers computing cells", workers)
    killed, survivor = gpus
    killed.kill()
    assert CellChunk.objects.filter(done_at__isnull=True).exists(), "the run ended first"
    run = wait_for(done_run, "the run", workers)
    assert run.status == "done", run.failure_reason
    assert set(run.snapshot.settings_used["precisions"]) == {"fp32"}

    # Neither worker read the platform's disk: each has the models it ran, none an upload.
    for name, var_dir in machines.items():
        models = [entry.name for entry in (var_dir / "models").iterdir()]
        assert any(not entry.startswith(".") for entry in models), name
        assert not list(Path(var_dir).glob("uploads/systems/**/*.archive")), name
    stack.close()
    assert_complete_and_equal_to_an_undisturbed_run(task, run.snapshot, settings, chunk_size=4)
