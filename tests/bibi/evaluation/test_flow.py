"""A scoring run from request to snapshot, in-process: the services the workers run."""

from __future__ import annotations

import pytest

from bibi.evaluation import compute, services
from bibi.evaluation.models import CellChunk

from .conftest import upload_self_reported_pairs

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_a_run_computes_the_missing_cells_and_stores_a_snapshot(scored_task):
    upload_self_reported_pairs(scored_task)
    run = services.scoring_run_request(
        shared_task=scored_task.shared_task, trigger="organizer", send=False
    )

    run = compute.scoring_run_complete(run_id=run.id)

    assert run.status == "done", run.failure_reason
    snapshot = run.snapshot
    assert snapshot.counts["pairs"] == 7
    assert snapshot.counts["systems"] == 3
    # 7 variants per hosted system; the 4 originals were known from validation.
    assert snapshot.counts["cells_computed"] == 14
    assert sum(chunk.computed for chunk in CellChunk.objects.all()) == 14
    assert snapshot.items.count() == 7
