"""The results pages as each role sees them: the leaderboards (sortable), the heat map, the
item explorer (filters, pages, word diffs), the λmax evidence, the downloads; and the
organizers' scoring page, where runs are asked for and snapshots published."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile

import pytest

from bibi.evaluation import services as results_services
from bibi.evaluation.models import ScoringRun, Snapshot
from bibi.sharedtasks import services as task_services

from ..conftest import ROLES
from ..evaluation.conftest import OSU_PAIRS, build_scored_task, score_now
from ..pairs.conftest import GOOD_PAIRS, start_phase_now
from .conftest import TASK, page_client

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES
RESULTS = f"{TASK}results/"
PAGES = ["", "matrix/", "items/", "lambda/"]


@pytest.fixture
def scored(db):
    """The evaluation's scored task (two hosted tiny models and a self-reported system, the
    Utrecht and OSU pairs), scored once: its snapshot is not published."""
    task = build_scored_task()
    run = score_now(task)
    assert run.status == "done", run.failure_reason
    return task


def publish(task) -> Snapshot:
    snapshot = Snapshot.objects.get()
    return results_services.snapshot_publish(snapshot=snapshot, actor=task.cast.organizer)


def text_of(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def test_smoke(scored):
    publish(scored)
    start_phase_now(scored.shared_task, "results")
    client = page_client(scored.cast, "anonymous")
    for page in PAGES:
        response = client.get(RESULTS + page)
        assert response.status_code == 200, page
        open(f"/tmp/webres/{page.strip('/') or 'board'}.html", "w").write(response.content.decode())
