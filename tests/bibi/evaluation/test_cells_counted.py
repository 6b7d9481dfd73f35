"""A snapshot counts the distinct cells its run computed: a cell two chunks both wrote (two
workers at once on one text: each found it missing, the upsert kept one) counts once."""

from __future__ import annotations

import pytest

from bibi.evaluation import compute, services
from bibi.evaluation.models import CellChunk

from .conftest import upload_self_reported_pairs

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_a_cell_computed_by_two_chunks_of_the_run_counts_once(scored_task, monkeypatch):
    upload_self_reported_pairs(scored_task)
    run = services.scoring_run_request(
        shared_task=scored_task.shared_task, trigger="organizer", send=False
    )
    services.scoring_run_advance(run_id=run.id, send=False)  # the run's chunks, unsent
    first = CellChunk.objects.filter(run=run, source="pairs").order_by("id").first()
    assert first is not None
    # A second chunk of the run over the same cells, and workers that each find them missing
    # (both read before either wrote).
    twin = CellChunk.objects.create(
        shared_task=first.shared_task,
        system_version=first.system_version,
        run=run,
        source=first.source,
        items=first.items,
        size=first.size,
    )
    monkeypatch.setattr(compute, "_already_there", lambda version, source, digests: set())

    run = compute.scoring_run_complete(run_id=run.id)

    assert run.status == "done", run.failure_reason
    twin.refresh_from_db()
    assert twin.computed == first.size > 0
    written = sum(CellChunk.objects.filter(run=run).values_list("computed", flat=True))
    assert written == 14 + twin.computed
    # 7 variants per hosted system, each once.
    assert run.snapshot.counts["cells_computed"] == 14
    assert run.snapshot.counts["cells_computed"] <= run.snapshot.counts["cells"]
