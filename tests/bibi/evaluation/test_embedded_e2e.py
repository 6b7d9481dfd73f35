"""The whole flow on the embedded default: SQLite, tasks run in-process, through the API."""

from __future__ import annotations

import pytest
from django.conf import settings

from bibi.evaluation.models import CellChunk, ScoringRun

from .conftest import (
    assert_leaderboards_match,
    build_scored_task,
    direct_report,
    relabel,
    upload_self_reported_pairs,
)

pytestmark = [pytest.mark.embedded]

BASE = "/api/v1/shared-tasks/sst/"


@pytest.fixture
def in_process(transactional_db):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("with a broker the workers run the tasks: see test_workers_e2e")


def test_request_score_publish_relabel_and_score_again_in_process(in_process):
    task = build_scored_task()
    upload_self_reported_pairs(task)
    organizer = task.cast.client("organizer")

    # The pair predictions already asked for a run and it ran in-process; the organizer's
    # finds every cell known.
    asked = organizer.post(f"{BASE}scoring-runs/")
    assert asked.status_code == 202
    assert asked.json()["status"] == "done"  # the answer tells the run as it stands
    run = ScoringRun.objects.get(id=asked.json()["id"])
    assert run.status == "done", run.failure_reason
    assert sum(chunk.computed for chunk in CellChunk.objects.all()) == 14

    snapshot_id = organizer.get(f"{BASE}scoring-runs/{run.id}/").json()["snapshot"]
    assert organizer.post(f"{BASE}snapshots/{snapshot_id}/publish/").status_code == 200
    public = task.cast.client("anonymous")
    published = {
        "builders": public.get(f"{BASE}leaderboard/builders/").json()["rows"],
        "breakers": public.get(f"{BASE}leaderboard/breakers/").json()["rows"],
    }
    assert_leaderboards_match(published, direct_report(task))

    # A relabel scores again, with every cell known: nothing goes to compute.
    chunks = CellChunk.objects.count()
    relabel(task, "I loved this movie!", "negative")
    rerun = ScoringRun.objects.get(trigger="adjudication")
    assert rerun.status == "done"
    assert CellChunk.objects.count() == chunks
    assert_leaderboards_match(rerun.snapshot.tables, direct_report(task))
    # The published leaderboard stays what was published until the next publication.
    assert public.get(f"{BASE}leaderboard/").json()["id"] == snapshot_id
