"""The OpenAPI schema validates, and fuzzing the whole API from it finds no server error."""

from __future__ import annotations

import pytest
import schemathesis
from django.core.management import call_command
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error

from bibi.wsgi import application

# Bounded: every operation gets this many generated requests per caller.
EXAMPLES_PER_OPERATION = 12


def test_the_schema_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/v1/shared-tasks/{slug}/datasets/{split}/examples/" in out.read_text()


def _operations():
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", application)
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ["organizer", "breaker", "anonymous"])
def test_fuzzing_the_api_from_its_schema_finds_no_server_error(cast, role):
    token = cast.client(role)._credentials.get("HTTP_AUTHORIZATION")
    headers = {"Authorization": token} if token else {}
    # Like Django's test client: the test's transaction must outlive each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        _fuzz(headers)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def _fuzz(headers: dict[str, str]) -> None:
    operations = _operations()
    assert len(operations) > 20
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            database=None,
            derandomize=True,
            suppress_health_check=list(HealthCheck),
        )
        def exercise(case):
            # Point the requests at the cast's task so they reach real rows, not only 404s.
            if "slug" in (case.path_parameters or {}):
                case.path_parameters["slug"] = "sst"
            response = case.call(headers=headers)
            case.validate_response(response, checks=[not_a_server_error])

        exercise()
