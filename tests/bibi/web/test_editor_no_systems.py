"""The pair editor's "Suggest verified edits" before any hosted system is ready: the page says
so where its answers go, with the editor as it was (never a 500)."""

from __future__ import annotations

import html

import pytest

from ..conftest import build_cast
from ..spancast import build_span_cast
from .conftest import page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

NO_SYSTEM = "This task has no ready hosted system to run the text through yet."


@pytest.mark.parametrize(
    ("build", "editor"),
    [
        (build_span_cast, "/tasks/qasrl/guidance/s1/edit/"),
        (lambda: build_cast(current_phase="break"), "/tasks/sst/guidance/s1/edit/"),
    ],
    ids=["span", "sentence"],
)
def test_suggest_with_no_ready_hosted_system_says_so_on_the_page(build, editor):
    cast = build()
    response = page_client(cast, "breaker").post(editor, {"action": "suggest"})

    assert response.status_code == 200
    page = html.unescape(response.content.decode())
    assert NO_SYSTEM in page
    assert response.context["suggestions"] is None
