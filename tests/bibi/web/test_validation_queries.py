"""The label-validation pages cost at most 15 SQL queries, the same on a task of 20 pairs as
on one of 2,000, with validation on (test_page_queries crawls the site with it off)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from bibi.pairs.models import LabelValidation
from bibi.sharedtasks.models import SharedTask

from .conftest import page_client
from .test_page_queries import MAX_QUERIES, at_two_sizes

PAGES = ["/tasks/sst/", "/tasks/sst/validate/", "/tasks/sst/organize/validation/"]


def validation_counts(cast) -> dict[tuple[str, str], int]:
    """With every pair validated: each page for the organizer and the breaker, before and
    after a pair is handed to them and labelled."""
    SharedTask.objects.filter(pk=cast.shared_task.pk).update(
        validation_mode="all", validations_per_pair=3
    )
    counts = {}
    for role in ("organizer", "breaker"):
        client = page_client(cast, role)
        for step in ("before", "handed", "labelled"):
            if step == "handed":
                assert client.post("/tasks/sst/validate/next/").status_code == 302
            if step == "labelled":
                handed = LabelValidation.objects.get(
                    validator=getattr(cast, role), status=LabelValidation.Status.ASSIGNED
                )
                response = client.post(f"/tasks/sst/validate/{handed.id}/", {"label": "positive"})
                assert response.status_code == 302
            for path in PAGES:
                if role == "breaker" and "organize" in path:
                    continue
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(path)
                assert response.status_code == 200, (role, path, response.status_code)
                counts[(role, step, path)] = len(queries.captured_queries)
    return counts


@pytest.mark.slow
@pytest.mark.django_db
def test_the_validation_pages_cost_at_most_15_queries_at_any_size():
    sparse_counts, counts = at_two_sizes(validation_counts, small_pairs=20)
    assert {page: n for page, n in counts.items() if n > MAX_QUERIES} == {}
    assert counts == sparse_counts
