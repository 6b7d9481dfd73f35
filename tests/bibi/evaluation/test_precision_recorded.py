"""Each cell records the numeric precision its worker ran the model in (SYSTEM_PRECISION), and a
snapshot says how many of its cells came from each, next to the results."""

from __future__ import annotations

import pytest

from bibi.systems import runner
from bibi.systems.models import Prediction

from ..web.conftest import page_client
from .conftest import build_scored_task, score_now


@pytest.fixture(autouse=True)
def nothing_loaded(monkeypatch):
    monkeypatch.setattr(runner, "_LOADED", type(runner._LOADED)())


def test_cells_record_their_precision_and_the_snapshot_counts_them(db, settings):
    task = build_scored_task()  # validated in fp32, the default
    starter = Prediction.objects.filter(source="starter", system_version__system=task.cnn)
    assert set(starter.values_list("precision", flat=True)) == {"fp32"}

    settings.SYSTEM_PRECISION = "bf16"
    assert runner.version_system(task.cnn.active_version).precision == "bf16"
    run = score_now(task)
    assert run.status == "done", run.failure_reason

    hosted_pairs = Prediction.objects.filter(source="pairs", system_version__system__kind="hosted")
    assert set(hosted_pairs.values_list("precision", flat=True)) == {"bf16"}
    self_reported = Prediction.objects.filter(system_version__system=task.by_hand)
    assert set(self_reported.values_list("precision", flat=True)) == {""}
    precisions = run.snapshot.settings_used["precisions"]
    assert set(precisions) == {"fp32", "bf16"}  # originals from validation, variants from the run
    assert precisions["bf16"] == hosted_pairs.count()


def test_the_results_page_shows_the_precisions(db, settings):
    task = build_scored_task()
    run = score_now(task)
    page = page_client(task.cast, "organizer").get(
        f"/tasks/{task.shared_task.slug}/results/", {"snapshot": run.snapshot.id}
    )
    assert page.status_code == 200
    fp32 = run.snapshot.settings_used["precisions"]["fp32"]
    assert f"fp32 ({fp32} cells)" in page.content.decode()


def test_a_chunk_whose_archive_cannot_be_fetched_is_retried_not_failed(db, settings, tmp_path):
    """A worker that cannot get a model's archive (the platform away) blames no model: the
    task raises a transient error (Celery retries it) and the chunk stays owed."""
    from bibi.evaluation import compute, services, tasks
    from bibi.evaluation.models import CellChunk, CellFailure
    from bibi.systems.model_store import ArchiveUnavailable

    task = build_scored_task()
    settings.MODEL_STORE = tmp_path / "models"  # a worker elsewhere, with no model yet
    settings.UPLOAD_ROOT = tmp_path / "uploads"
    settings.WORKER_PLATFORM_URL = "http://127.0.0.1:9"  # nothing listens there
    run = services.scoring_run_request(
        shared_task=task.shared_task, trigger="organizer", send=False
    )
    run = services.scoring_run_advance(run_id=run.id, send=False)
    chunk = CellChunk.objects.filter(run=run).first()

    with pytest.raises(ArchiveUnavailable, match="platform: <urlopen error"):
        compute.cell_chunk_compute(chunk_id=chunk.id)
    assert ArchiveUnavailable in tasks.cells_compute_task.autoretry_for
    chunk.refresh_from_db()
    assert chunk.done_at is None and not CellFailure.objects.exists()
