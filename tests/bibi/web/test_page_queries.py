"""Following every link from the home page, as every role, on a crowded task: every page is
reachable, no link is dead, and no page costs more than 15 SQL queries, the same number
whatever the size of the task."""

from __future__ import annotations

from collections import defaultdict
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext
from django.urls import resolve

from bibi.web import urls as web_urls

from ..conftest import ROLES, build_cast
from .conftest import build_crowd, page_client

MAX_QUERIES = 15
# Pages reached by submitting a form or from an e-mail, not by a link (tested in
# test_account_pages): the password-reset steps.
REACHED_BY_FORM_OR_EMAIL = {
    "password-reset-done",
    "password-reset-confirm",
    "password-reset-complete",
}
# Where forms post; each redirects to a page, or shows its page again with the errors.
ACTIONS = {
    "logout", "api-token-rotate", "team-create", "team-update", "invitation-create",
    "invitation-revoke", "system-create", "system-version-upload", "system-predictions-upload",
    "system-version-activate", "pair-set-upload", "pair-add", "pair-remove", "draft-submit",
    "pair-set-final", "phase-create", "phase-update", "phase-extend", "phase-close-now",
    "examples-import", "contest-decide", "task-invitation-create", "task-invitation-revoke",
    "scoring-run-create", "snapshot-publish", "validate-next", "validate-vote", "validate-skip",
}  # fmt: skip
# Linked only while label validation is on (the crowd has it off): test_validation_queries.py.
VALIDATION_ON_ONLY = {"validate", "organize-validation-votes"}
# Linked only from the page of a set uploaded partially, which the crowd has none of
# (tested in tests/bibi/web/test_upload_pages.py).
PARTIAL_UPLOADS_ONLY = {"pair-set-refused"}
# Linked only from a span task's guidance ranking; the crowd's task is a label task (its cost
# is bounded in tests/bibi/guidance/test_span_suggest.py).
SPAN_TASKS_ONLY = {"guidance-span-suggestions"}
# Pages of one kind (e.g. one per system) looked at, per role: enough to see each page's cost.
VISITS_PER_PAGE = 3


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href:
            self.hrefs.append(href)


def site_links(page: str) -> list[str]:
    parser = Links()
    parser.feed(page)
    links = []
    for href in parser.hrefs:
        href = urldefrag(href).url
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not parts.path.startswith("/"):
            continue
        if parts.path.startswith(("/api/", "/admin/", "/static/")):
            continue
        links.append(href)
    return links


def crawl(cast, role: str) -> dict[str, list[tuple[str, int]]]:
    """Every page ``role`` reaches by links from /, by name: [(url, SQL queries)]."""
    client = page_client(cast, role)
    seen: dict[str, list[tuple[str, int]]] = defaultdict(list)
    queue, visited = ["/"], set()
    while queue:
        url = queue.pop(0)
        if url in visited:
            continue
        visited.add(url)
        name = resolve(urlsplit(url).path).url_name
        if len(seen[name]) >= VISITS_PER_PAGE:
            continue
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200, f"the {role} follows a dead link to {url}"
        seen[name].append((url, len(queries.captured_queries)))
        # Downloads (CSV, JSON, zip) are pages too, with no links to follow.
        if response["Content-Type"].startswith("text/html"):
            queue.extend(site_links(response.content.decode()))
    return seen


def crawl_everyone(cast) -> dict[tuple[str, str], int]:
    """The most SQL queries each page costs each role, by (role, page name)."""
    return {
        (role, name): max(count for _, count in visits)
        for role in ROLES
        for name, visits in crawl(cast, role).items()
    }


class _Discard(Exception):
    pass


def at_two_sizes(measure, *, small_pairs: int) -> tuple[dict, dict]:
    """``measure(cast)`` on a small crowd (2 systems, 2 breaker teams, ``small_pairs`` pairs;
    rolled back) and on the full one (20 systems, 10 breaker teams, 2,000 pairs)."""
    with pytest.raises(_Discard), transaction.atomic():
        small = build_cast()
        build_crowd(small, systems=2, breaker_teams=2, pairs=small_pairs, starter=10, contests=2)
        sparse_counts = measure(small)
        raise _Discard
    crowded = build_cast()
    build_crowd(crowded)
    return sparse_counts, measure(crowded)


@pytest.mark.slow
@pytest.mark.django_db
def test_every_page_is_linked_from_home_and_costs_at_most_15_queries_at_any_size():
    sparse_counts, counts = at_two_sizes(crawl_everyone, small_pairs=20)

    over = {page: count for page, count in counts.items() if count > MAX_QUERIES}
    assert over == {}
    grew = {
        page: (sparse_counts.get(page), count)
        for page, count in counts.items()
        if sparse_counts.get(page) != count
    }
    assert grew == {}

    pages = (
        {pattern.name for pattern in web_urls.urlpatterns}
        - ACTIONS
        - REACHED_BY_FORM_OR_EMAIL
        - VALIDATION_ON_ONLY
        - PARTIAL_UPLOADS_ONLY
        - SPAN_TASKS_ONLY
    )
    reached = {name for _, name in counts}
    assert pages - reached == set()


# Results pages with their filters, a second page and a sort, once the results phase has
# started (the item table is then everyone's): what a crawl of the contest phase misses.
RESULTS_URLS = [
    "results/?builders=-f1&breakers=team",
    "results/items/",
    "results/items/?page=2",
    "results/items/?label=changed&broken=yes&tag=semantics",
    "results/items/?team={team}&system={system}&broken=no",
    "results/lambda/?system={system}",
    "results/matrix/",
    "results/download/items.csv",
    "results/download/results.zip",
]


def results_counts(cast) -> dict[tuple[str, str], int]:
    from bibi.evaluation.models import Snapshot

    from ..pairs.conftest import start_phase_now

    start_phase_now(cast.shared_task, "results")
    snapshot = Snapshot.objects.get(shared_task=cast.shared_task)
    ids = {"team": cast.breaker_team.id, "system": snapshot.systems[0]["system_id"]}
    counts = {}
    for role in ROLES:
        client = page_client(cast, role)
        for url in RESULTS_URLS:
            path = f"/tasks/{cast.shared_task.slug}/{url.format(**ids)}"
            with CaptureQueriesContext(connection) as queries:
                response = client.get(path)
            assert response.status_code == 200, (role, path)
            counts[(role, url)] = len(queries.captured_queries)
    return counts


@pytest.mark.slow
@pytest.mark.django_db
def test_the_results_pages_cost_at_most_15_queries_at_any_size():
    # 60 small pairs: 30 a team, so the pairs have a second page at both sizes.
    sparse_counts, counts = at_two_sizes(results_counts, small_pairs=60)
    assert {url: n for url, n in counts.items() if n > MAX_QUERIES} == {}
    assert counts == sparse_counts
