"""Every page x every role: who gets the page, who is refused, and that no page shows a
blind-dev label or another team's private records to anyone who may not see them.

Statuses: 200 the page; 302 an anonymous visitor sent to log in (or a form done); 403 a
signed-in user whose role does not open the page (it says what would); 404 something the
visitor may not even know exists (another team's system or pair set, a private task).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass
from html.parser import HTMLParser

import pytest

from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services

from ..conftest import BLIND_DEV, ROLES
from ..pairs.conftest import GOOD_PAIRS
from .conftest import (
    SECRET_DRAFT_VARIANT,
    SECRET_FAILURE,
    SECRET_SYSTEM,
    TASK,
    Scene,
    page_client,
)

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES


@pytest.fixture
def scene(shared_scene: Scene) -> Scene:
    """One scene for the whole matrix: each test reads it, or changes it and the change is
    undone after the test (``kept_rows``)."""
    return shared_scene


@dataclass
class Page:
    name: str
    url: Callable[[Scene], str]
    expected: dict[str, int]


def everyone(code: int) -> dict[str, int]:
    return dict.fromkeys(ROLES, code)


def signed_in(code: int) -> dict[str, int]:
    return {**everyone(code), ANON: 302}


def only(code: int, *roles: str, others: int = 403) -> dict[str, int]:
    return {**everyone(others), **dict.fromkeys(roles, code), ANON: 302}


ORGANIZERS = only(200, ORG)
PAGES = [
    Page("home", lambda s: "/", everyone(200)),
    Page("task", lambda s: TASK, everyone(200)),
    Page("starter set", lambda s: f"{TASK}data/starter/", everyone(200)),
    Page("training set", lambda s: f"{TASK}data/train/", everyone(200)),
    Page(
        "blind dev texts",
        lambda s: f"{TASK}data/blind_dev/",
        {ORG: 200, OTHER: 403, BUILDER: 200, BREAKER: 200, OUTSIDER: 403, ANON: 403},
    ),
    Page("log in", lambda s: "/accounts/login/", everyone(200)),
    Page("sign up", lambda s: "/accounts/signup/", {**everyone(302), ANON: 200}),
    Page("password reset", lambda s: "/accounts/password-reset/", everyone(200)),
    Page("API token", lambda s: "/accounts/token/", signed_in(200)),
    Page("new task", lambda s: "/tasks/new/", signed_in(200)),
    Page("team", lambda s: f"{TASK}team/", {**signed_in(200), ORG: 403}),
    Page("invitation", lambda s: f"/invitations/{s.invitation.token}/", everyone(200)),
    Page("task link", lambda s: f"/task-invitations/{s.task_invitation.token}/", everyone(200)),
    Page("systems", lambda s: f"{TASK}systems/", only(200, BUILDER)),
    Page(
        "a system",
        lambda s: f"{TASK}systems/{s.system.id}/",
        only(200, ORG, BUILDER, others=404),
    ),
    Page("pairs", lambda s: f"{TASK}pairs/", only(200, BREAKER)),
    Page("guidance", lambda s: f"{TASK}guidance/", only(200, ORG, BREAKER)),
    Page("pair editor", lambda s: f"{TASK}guidance/s1/edit/", only(200, BREAKER)),
    Page(
        "a pair set",
        lambda s: f"{TASK}pair-sets/{s.pair_set.id}/",
        only(200, ORG, BREAKER, others=404),
    ),
    Page(
        "the draft as a set",
        lambda s: f"{TASK}pair-sets/{s.draft.id}/",
        only(200, ORG, BREAKER, others=404),
    ),
    Page("contests", lambda s: f"{TASK}contests/", only(200, BUILDER, BREAKER)),
    Page("contestable pairs", lambda s: f"{TASK}contests/pairs/", only(200, BUILDER, BREAKER)),
    Page("dashboard", lambda s: f"{TASK}organize/", ORGANIZERS),
    Page("phases", lambda s: f"{TASK}organize/phases/", ORGANIZERS),
    Page("settings", lambda s: f"{TASK}organize/settings/", ORGANIZERS),
    Page("schedule", lambda s: f"{TASK}organize/schedule/", ORGANIZERS),
    Page("datasets", lambda s: f"{TASK}organize/datasets/", ORGANIZERS),
    Page("teams", lambda s: f"{TASK}organize/teams/", ORGANIZERS),
    Page("all systems", lambda s: f"{TASK}organize/systems/", ORGANIZERS),
    Page("adjudication", lambda s: f"{TASK}organize/contests/", ORGANIZERS),
    # The validator's queue: test_validation_pages (validation is off in this scene).
    Page("label validation", lambda s: f"{TASK}organize/validation/", ORGANIZERS),
    Page("scoring", lambda s: f"{TASK}organize/scoring/", ORGANIZERS),
    # Before anything is published: the results pages say so (test_result_pages: after).
    Page("leaderboards", lambda s: f"{TASK}results/", everyone(200)),
    Page("heat map", lambda s: f"{TASK}results/matrix/", everyone(200)),
    Page("item explorer", lambda s: f"{TASK}results/items/", everyone(200)),
    Page("λmax evidence", lambda s: f"{TASK}results/lambda/", everyone(200)),
]

# Private records, and who may read them: the organizers and the team they belong to.
PRIVATE = {
    SECRET_SYSTEM: {ORG, BUILDER},
    SECRET_FAILURE: {ORG, BUILDER},
    SECRET_DRAFT_VARIANT: {ORG, BREAKER},
    GOOD_PAIRS[0]["variant_text"]: {ORG, BREAKER},
    "brian": {ORG, BREAKER},  # the breaker team's member
    "bea": {ORG, BUILDER},  # the builder team's member
    "a friend": {ORG},  # the organizers' note on a link into the task
}


class RowTexts(HTMLParser):
    """The text of every table row and list item of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str] = []
        self._open: list[list[str]] = []

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag in ("tr", "li"):
            self._open.append([])

    def handle_endtag(self, tag: str) -> None:
        if tag in ("tr", "li") and self._open:
            self.rows.append(" ".join(self._open.pop()))

    def handle_data(self, data: str) -> None:
        for row in self._open:
            row.append(data)


def blind_dev_labels_shown(page: str, labels: list[str]) -> list[str]:
    """Rows that hold a blind-dev text and a label: a label given away beside its text."""
    parser = RowTexts()
    parser.feed(page)
    texts = [text for _, text, _ in BLIND_DEV]
    return [
        row
        for row in parser.rows
        if any(text in row for text in texts) and any(label in row.split() for label in labels)
    ]


@pytest.mark.embedded
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("page", PAGES, ids=[page.name for page in PAGES])
def test_each_role_gets_the_pages_its_role_opens(scene, page, role):
    response = page_client(scene.cast, role).get(page.url(scene))
    assert response.status_code == page.expected[role], response.content.decode()[:300]
    if response.status_code == 302 and role == ANON:
        assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("role", ROLES)
def test_no_page_shows_a_private_record_to_anyone_outside_its_team(scene, role):
    client = page_client(scene.cast, role)
    for page in PAGES:
        text = html.unescape(client.get(page.url(scene)).content.decode())
        for secret, readers in PRIVATE.items():
            if role not in readers:
                shown = re.search(rf"(?<!\w){re.escape(secret)}(?!\w)", text)
                assert shown is None, f"{page.name} shows {secret!r} to the {role}"


@pytest.mark.parametrize("role", ROLES)
def test_no_page_shows_a_blind_dev_label_to_anyone_but_the_organizers(scene, role):
    client = page_client(scene.cast, role)
    labels = scene.cast.shared_task.labels
    for page in PAGES:
        shown = blind_dev_labels_shown(client.get(page.url(scene)).content.decode(), labels)
        if role == ORG and page.name == "blind dev texts":
            assert len(shown) == len(BLIND_DEV)
        else:
            assert shown == [], f"{page.name} shows blind-dev labels to the {role}"


@pytest.mark.parametrize("role", [OTHER, BUILDER, OUTSIDER, ANON])
def test_an_anonymous_team_is_named_by_its_alias_outside_it(scene, role):
    """Even to whoever holds one of its invitation links: the name comes with joining."""
    task_services.team_update(
        team=scene.cast.breaker_team, actor=scene.cast.breaker, is_anonymous=True
    )
    client = page_client(scene.cast, role)
    for page in PAGES:
        assert "Utrecht" not in client.get(page.url(scene)).content.decode(), page.name


@pytest.mark.parametrize("role", ROLES)
def test_a_private_task_has_no_page_for_outsiders(scene, role):
    scene.cast.shared_task.is_public = False
    scene.cast.shared_task.save()
    sees = role in {ORG, BUILDER, BREAKER}
    for path in ("", "data/starter/", "organize/", "pairs/", "systems/"):
        status = page_client(scene.cast, role).get(f"{TASK}{path}").status_code
        if sees:
            assert status != 404
        elif role == ANON and path in ("organize/", "pairs/", "systems/"):
            assert status == 302
        else:
            assert status == 404, path


@dataclass
class Action:
    name: str
    url: Callable[[Scene], str]
    expected: dict[str, int]
    data: dict[str, str] | None = None


ACTIONS = [
    Action(
        "activate a version",
        lambda s: f"{TASK}systems/{s.system.id}/versions/1/activate/",
        {ORG: 403, OTHER: 404, BUILDER: 302, BREAKER: 404, OUTSIDER: 404, ANON: 302},
    ),
    Action(
        "mark a set final",
        lambda s: f"{TASK}pair-sets/{s.pair_set.id}/final/",
        {ORG: 403, OTHER: 404, BUILDER: 404, BREAKER: 302, OUTSIDER: 404, ANON: 302},
        {"is_final": "1"},
    ),
    Action(
        "remove a draft pair",
        lambda s: f"{TASK}pairs/draft/{s.draft.pairs.get().id}/remove/",
        only(302, BREAKER),
    ),
    Action(
        "extend a deadline",
        lambda s: f"{TASK}organize/phases/results/extend/",
        {**only(400, ORG), ANON: 302},
        {"results-extend-ends_at": "2000-01-01T00:00"},
    ),
    Action(
        "close a phase now",
        lambda s: f"{TASK}organize/phases/break/close-now/",
        {**only(302, ORG), ANON: 302},
        {"confirm": "on"},
    ),
    Action(
        "make a link into the task",
        lambda s: f"{TASK}organize/task-invitations/",
        {**only(302, ORG), ANON: 302},
        {"note": "a friend"},
    ),
    Action(
        "import examples",
        lambda s: f"{TASK}organize/datasets/import/",
        {**only(400, ORG), ANON: 302},
        {},
    ),
    Action("run scoring", lambda s: f"{TASK}organize/scoring/run/", {**only(302, ORG), ANON: 302}),
    Action(
        "revoke an invitation",
        lambda s: f"/invitations/{s.invitation.token}/revoke/",
        {ORG: 403, OTHER: 404, BUILDER: 404, BREAKER: 302, OUTSIDER: 404, ANON: 302},
        {"confirm": "yes"},
    ),
]


@pytest.mark.embedded
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", ACTIONS, ids=[action.name for action in ACTIONS])
def test_each_role_may_do_what_its_role_allows(scene, action, role):
    response = page_client(scene.cast, role).post(action.url(scene), action.data or {})
    assert response.status_code == action.expected[role], response.content.decode()[:300]
    if role == ANON:
        assert response["Location"].startswith("/accounts/login/?next=")


@pytest.mark.parametrize("method", ["get", "put", "delete"])
def test_actions_take_posts_only(scene, method):
    client = page_client(scene.cast, "breaker")
    response = getattr(client, method)(f"{TASK}pair-sets/{scene.pair_set.id}/final/")
    assert response.status_code == 405


@pytest.mark.embedded
@pytest.mark.parametrize("role", ROLES)
def test_the_viewer_answers_as_the_selectors_do(scene, role):
    """Pages ask a ``Viewer`` (no query per row); the selectors are the rule it must follow."""
    cast = scene.cast
    user = getattr(cast, role) if role != ANON else cast.anonymous
    viewer = task_selectors.viewer_get(user=user, shared_task=cast.shared_task)
    for dataset in (cast.starter, cast.train, cast.blind_dev):
        assert viewer.datasets.examples(dataset.split) == task_selectors.can_view_examples(
            user=user, dataset=dataset
        )
        assert viewer.datasets.labels(dataset.split) == task_selectors.can_view_labels(
            user=user, dataset=dataset
        )
    for team in (cast.builder_team, cast.breaker_team):
        assert viewer.sees_team_private(team) == task_selectors.can_view_team_private(
            user=user, team=team
        )
