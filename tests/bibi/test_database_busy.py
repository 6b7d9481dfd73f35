"""A write that waited in vain for SQLite's lock answers 503 with Retry-After, on pages as on
the API (the API's case, on a real lock: tests/e2e/test_embedded_writers.py)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import OperationalError
from django.http import HttpResponse

from bibi.middleware import DatabaseBusyMiddleware

pytestmark = pytest.mark.embedded


def _middleware() -> DatabaseBusyMiddleware:
    return DatabaseBusyMiddleware(lambda request: HttpResponse())


def test_a_page_whose_write_timed_out_answers_a_503_page(rf, db):
    request = rf.post("/tasks/sst/organize/schedule/")
    request.user = AnonymousUser()
    response = _middleware().process_exception(request, OperationalError("database is locked"))
    assert response is not None
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    page = response.content.decode()
    assert "<h1>The site is busy</h1>" in page and "nothing was saved" in page


def test_any_other_database_error_is_left_alone(rf):
    request = rf.post("/api/v1/shared-tasks/")
    assert _middleware().process_exception(request, OperationalError("no such table")) is None
    assert _middleware().process_exception(request, ValueError("database is locked")) is None
