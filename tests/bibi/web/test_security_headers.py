"""Every page answers with a Content-Security-Policy that allows only this site's own scripts
and styles, and a Permissions-Policy; and no page holds what that policy would refuse (an
inline script, an inline style attribute, an ``on…=`` handler)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from .conftest import Scene, page_client
from .test_page_permissions import PAGES


@pytest.fixture
def scene(shared_scene: Scene) -> Scene:
    """One scene for every page's check (``kept_rows``): the tests only read it."""
    return shared_scene


class Refused(HTMLParser):
    """What a ``script-src 'self'; style-src 'self'`` policy refuses in a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_inline_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self._in_inline_script = True
        if tag == "style":
            self.found.append("<style> element")
        self.found += [f"{name}= on <{tag}>" for name in names if name == "style"]
        self.found += [f"{name}= on <{tag}>" for name in names if name.startswith("on")]

    def handle_endtag(self, tag: str) -> None:
        self._in_inline_script = False

    def handle_data(self, data: str) -> None:
        if self._in_inline_script and data.strip():
            self.found.append(f"inline script {data.strip()[:40]!r}")


def refused_in(body: str) -> list[str]:
    parser = Refused()
    parser.feed(body)
    return parser.found


def assert_policies(response) -> None:
    policy = response.headers.get("Content-Security-Policy", "")
    directives = dict(
        (part.split(" ", 1) + [""])[:2] for part in policy.split("; ") if part.strip()
    )
    assert directives.get("script-src") == "'self'", policy
    assert directives.get("style-src") == "'self'", policy
    assert directives.get("default-src") == "'self'", policy
    assert "camera=()" in response.headers.get("Permissions-Policy", "")


def opened_by(page) -> str:
    return next(role for role, code in page.expected.items() if code == 200)


@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_every_page_has_both_policies_and_nothing_they_refuse(scene, page):
    role = opened_by(page)
    response = page_client(scene.cast, role).get(page.url(scene))
    assert response.status_code == 200, (role, response.status_code)
    assert_policies(response)
    assert refused_in(response.content.decode()) == []


@pytest.mark.parametrize("path", ["/healthz", "/api/v1/shared-tasks/", "/no-such-page/"])
def test_answers_that_are_not_pages_carry_them_too(db, client, path):
    assert_policies(client.get(path))


def test_the_api_docs_load_their_set_up_script_from_a_file(db, client):
    response = client.get("/api/v1/docs/")
    assert response.status_code == 200
    policy = response.headers["Content-Security-Policy"]
    # Directives in any order: the header's order follows a set.
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    assert directives["script-src"] == "'self'"
    body = response.content.decode()
    assert [f for f in refused_in(body) if f != "<style> element"] == []
    script = client.get("/api/v1/docs/?script=")
    assert script.status_code == 200
    assert "SwaggerUIBundle" in script.content.decode()


def test_the_check_finds_what_the_policy_refuses():
    page = (
        '<p style="color: red" onclick="go()">x</p><script>alert(1)</script>'
        '<script src="/static/a.js"></script>'
    )
    assert refused_in(page) == [
        "style= on <p>",
        "onclick= on <p>",
        "inline script 'alert(1)'",
    ]
