"""Every shared-task endpoint x every role: what is allowed, what is refused.

Each case names the status each role gets. 401 is the anonymous visitor asked to log in,
403 a signed-in user whose role does not allow the action, 404 a task they may not see.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Invitation

from ..conftest import BLIND_DEV, ROLES, Cast

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES


@pytest.fixture
def cast(shared_cast: Cast) -> Cast:
    """One cast for the module: each test reads it, or changes it and the change is undone
    after the test (``kept_rows``)."""
    return shared_cast


@dataclass
class Case:
    name: str
    method: str
    url: Callable[[Cast], str]
    expected: dict[str, int]
    body: Callable[[Cast, str], Any] | None = None
    multipart: bool = False


def everyone(code: int) -> dict[str, int]:
    return dict.fromkeys(ROLES, code)


def organizers_only(ok: int) -> dict[str, int]:
    return {ORG: ok, OTHER: 403, BUILDER: 403, BREAKER: 403, OUTSIDER: 403, ANON: 401}


def breaker_owner_only(ok: int) -> dict[str, int]:
    return {ORG: 403, OTHER: 403, BUILDER: 403, BREAKER: ok, OUTSIDER: 403, ANON: 401}


def later(cast: Cast, kind: str, days: int) -> str:
    return (cast.shared_task.phases.get(kind=kind).ends_at + timedelta(days=days)).isoformat()


def fresh_invitation(cast: Cast) -> str:
    return services.invitation_create(team=cast.breaker_team, actor=cast.breaker).token


def fresh_task_invitation(cast: Cast) -> str:
    return services.task_invitation_create(shared_task=cast.shared_task, actor=cast.organizer).token


BASE = "/api/v1/shared-tasks/sst"
CASES = [
    Case("list tasks", "get", lambda c: "/api/v1/shared-tasks/", everyone(200)),
    Case(
        "create a task",
        "post",
        lambda c: "/api/v1/shared-tasks/",
        {ORG: 201, OTHER: 201, BUILDER: 201, BREAKER: 201, OUTSIDER: 201, ANON: 401},
        body=lambda c, role: {
            "name": f"Task of {role}",
            "slug": f"task-of-{role.replace('_', '-')}",
        },
    ),
    Case("read the task", "get", lambda c: f"{BASE}/", everyone(200)),
    Case(
        "change the task",
        "patch",
        lambda c: f"{BASE}/",
        organizers_only(200),
        body=lambda c, r: {"description": "new"},
    ),
    Case("list phases", "get", lambda c: f"{BASE}/phases/", everyone(200)),
    Case("read a phase", "get", lambda c: f"{BASE}/phases/break/", everyone(200)),
    Case(
        "move a phase",
        "patch",
        lambda c: f"{BASE}/phases/results/",
        organizers_only(200),
        body=lambda c, r: {
            "starts_at": c.shared_task.phases.get(kind="results").starts_at.isoformat(),
            "ends_at": later(c, "results", 5),
        },
    ),
    Case(
        "extend a deadline",
        "post",
        lambda c: f"{BASE}/phases/results/extend/",
        organizers_only(200),
        body=lambda c, r: {"ends_at": later(c, "results", 3), "reason": "late data"},
    ),
    Case(
        "close the running phase now",
        "post",
        lambda c: f"{BASE}/phases/break/close-now/",
        organizers_only(200),
    ),
    Case("list datasets", "get", lambda c: f"{BASE}/datasets/", everyone(200)),
    Case(
        "read training examples", "get", lambda c: f"{BASE}/datasets/train/examples/", everyone(200)
    ),
    Case(
        "read starter examples",
        "get",
        lambda c: f"{BASE}/datasets/starter/examples/",
        everyone(200),
    ),
    Case(
        "read blind-dev texts",
        "get",
        lambda c: f"{BASE}/datasets/blind_dev/examples/",
        {ORG: 200, OTHER: 403, BUILDER: 200, BREAKER: 200, OUTSIDER: 403, ANON: 403},
    ),
    Case(
        "filter blind-dev by label",
        "get",
        lambda c: f"{BASE}/datasets/blind_dev/examples/?label=positive",
        {ORG: 200, OTHER: 403, BUILDER: 403, BREAKER: 403, OUTSIDER: 403, ANON: 403},
    ),
    Case(
        "import examples",
        "post",
        lambda c: f"{BASE}/datasets/train/import/",
        organizers_only(201),
        body=lambda c, r: {
            "file": SimpleUploadedFile(
                "more.tsv", b"id\ttext\tlabel\nt9\ta fine film .\tpositive\n"
            ),
        },
        multipart=True,
    ),
    Case("list teams", "get", lambda c: f"{BASE}/teams/", everyone(200)),
    Case(
        "create a team",
        "post",
        lambda c: f"{BASE}/teams/",
        {ORG: 400, OTHER: 201, BUILDER: 400, BREAKER: 400, OUTSIDER: 201, ANON: 401},
        body=lambda c, role: {"kind": "breaker", "name": f"Team of {role}"},
    ),
    Case("read a team", "get", lambda c: f"{BASE}/teams/{c.breaker_team.id}/", everyone(200)),
    Case(
        "change a team",
        "patch",
        lambda c: f"{BASE}/teams/{c.breaker_team.id}/",
        breaker_owner_only(200),
        body=lambda c, r: {"is_anonymous": True},
    ),
    Case(
        "list invitations",
        "get",
        lambda c: f"{BASE}/teams/{c.breaker_team.id}/invitations/",
        breaker_owner_only(200),
    ),
    Case(
        "invite",
        "post",
        lambda c: f"{BASE}/teams/{c.breaker_team.id}/invitations/",
        breaker_owner_only(201),
    ),
    Case(
        "accept an invitation",
        "post",
        lambda c: f"/api/v1/invitations/{fresh_invitation(c)}/accept/",
        {ORG: 400, OTHER: 201, BUILDER: 400, BREAKER: 400, OUTSIDER: 201, ANON: 401},
    ),
    Case(
        "revoke an invitation",
        "post",
        lambda c: f"/api/v1/invitations/{fresh_invitation(c)}/revoke/",
        {ORG: 403, OTHER: 404, BUILDER: 404, BREAKER: 200, OUTSIDER: 404, ANON: 401},
    ),
    Case(
        "list task invitations", "get", lambda c: f"{BASE}/task-invitations/", organizers_only(200)
    ),
    Case(
        "create a task invitation",
        "post",
        lambda c: f"{BASE}/task-invitations/",
        organizers_only(201),
        body=lambda c, r: {"note": "the reading group", "max_uses": 5},
    ),
    Case(
        "accept a task invitation",
        "post",
        lambda c: f"/api/v1/task-invitations/{fresh_task_invitation(c)}/accept/",
        {ORG: 400, OTHER: 201, BUILDER: 201, BREAKER: 201, OUTSIDER: 201, ANON: 401},
    ),
    Case(
        "revoke a task invitation",
        "post",
        lambda c: f"/api/v1/task-invitations/{fresh_task_invitation(c)}/revoke/",
        organizers_only(200),
    ),
    Case("list organizers", "get", lambda c: f"{BASE}/organizers/", organizers_only(200)),
    Case(
        "add an organizer",
        "post",
        lambda c: f"{BASE}/organizers/",
        organizers_only(201),
        body=lambda c, r: {"username": "oscar"},
    ),
    Case("read the audit log", "get", lambda c: f"{BASE}/audit-log/", organizers_only(200)),
    Case(
        "my memberships", "get", lambda c: "/api/v1/me/memberships/", {**everyone(200), ANON: 401}
    ),
    Case("the schema", "get", lambda c: "/api/v1/schema/", everyone(200)),
]


def blind_dev_labels_leaked(payload: Any) -> list[Any]:
    """Every object in a response that pairs a blind-dev text with a label."""
    texts = {text for _, text, _ in BLIND_DEV}
    leaks = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("text") in texts and "label" in node:
                leaks.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(payload)
    return leaks


def call(cast: Cast, case: Case, role: str):
    client = cast.client(role)
    url = case.url(cast)
    body = case.body(cast, role) if case.body else None
    if case.multipart:
        return getattr(client, case.method)(url, body, format="multipart")
    return getattr(client, case.method)(url, body, format="json")


@pytest.mark.embedded
@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_role_gets_what_its_role_allows(cast, case, role):
    response = call(cast, case, role)
    assert response.status_code == case.expected[role], response.content[:500]
    if role != ORG and response.get("Content-Type", "").startswith("application/json"):
        assert blind_dev_labels_leaked(json.loads(response.content)) == []


@pytest.mark.parametrize("role", ROLES)
def test_a_private_task_is_invisible_to_everyone_outside_it(cast, role):
    cast.shared_task.is_public = False
    cast.shared_task.save()
    client = cast.client(role)
    visible = role in {ORG, BUILDER, BREAKER}
    detail = client.get(f"{BASE}/")
    assert detail.status_code == (200 if visible else 404)
    listed = [task["slug"] for task in client.get("/api/v1/shared-tasks/").json()["results"]]
    assert ("sst" in listed) is visible
    for path in ("phases/", "datasets/", "teams/", "datasets/starter/examples/"):
        assert client.get(f"{BASE}/{path}").status_code == (200 if visible else 404)


PRIVATE_READS = ("", "phases/", "datasets/", "teams/", "datasets/starter/examples/")


@pytest.mark.parametrize("role", [OTHER, OUTSIDER])
def test_a_task_invitation_shows_a_private_task_to_whoever_accepts_it(cast, role):
    cast.shared_task.is_public = False
    cast.shared_task.save()
    client = cast.client(role)
    token = fresh_task_invitation(cast)
    assert client.post(f"{BASE}/teams/", {"kind": "breaker", "name": "Late"}).status_code == 404

    assert client.post(f"/api/v1/task-invitations/{token}/accept/").status_code == 201

    for path in PRIVATE_READS:
        assert client.get(f"{BASE}/{path}").status_code == 200, path
    listed = [task["slug"] for task in client.get("/api/v1/shared-tasks/").json()["results"]]
    assert "sst" in listed
    # Let in, not yet in a team: what a visitor of a public task sees, and no more.
    assert client.get(f"{BASE}/datasets/blind_dev/examples/").status_code == 403
    assert client.get(f"{BASE}/task-invitations/").status_code == 403
    created = client.post(f"{BASE}/teams/", {"kind": "breaker", "name": "Late"}, format="json")
    assert created.status_code == 201, created.content
    assert client.get(f"{BASE}/datasets/blind_dev/examples/").status_code == 200


def test_a_private_tasks_invitation_shows_nothing_to_those_who_do_not_accept_it(cast):
    cast.shared_task.is_public = False
    cast.shared_task.save()
    cast.client(OUTSIDER).post(f"/api/v1/task-invitations/{fresh_task_invitation(cast)}/accept/")
    client = cast.client(OTHER)
    for path in PRIVATE_READS:
        assert client.get(f"{BASE}/{path}").status_code == 404, path
    revoke = client.post(f"/api/v1/task-invitations/{fresh_task_invitation(cast)}/revoke/")
    assert revoke.status_code == 404


def test_organizers_see_blind_dev_labels(cast):
    body = cast.client(ORG).get(f"{BASE}/datasets/blind_dev/examples/").json()
    assert {(row["id"], row["label"]) for row in body["results"]} == {
        (eid, label) for eid, _, label in BLIND_DEV
    }


@pytest.mark.parametrize("role", [BUILDER, BREAKER])
def test_participants_see_blind_dev_texts_without_labels(cast, role):
    body = cast.client(role).get(f"{BASE}/datasets/blind_dev/examples/").json()
    assert [set(row) for row in body["results"]] == [{"id", "text"}] * len(BLIND_DEV)
    datasets = {d["split"]: d for d in cast.client(role).get(f"{BASE}/datasets/").json()}
    assert datasets["blind_dev"]["labels_visible"] is False
    assert datasets["starter"]["labels_visible"] is True


@pytest.mark.parametrize("role", [ORG, BREAKER])
def test_the_team_and_the_organizers_see_an_anonymous_teams_real_name(cast, role):
    services.team_update(team=cast.breaker_team, actor=cast.breaker, is_anonymous=True)
    body = cast.client(role).get(f"{BASE}/teams/{cast.breaker_team.id}/").json()
    assert body["name"] == "Utrecht"
    assert [m["username"] for m in body["members"]] == ["brian"]


@pytest.mark.parametrize("role", [OTHER, BUILDER, OUTSIDER, ANON])
def test_everyone_else_sees_only_an_anonymous_teams_alias(cast, role):
    services.team_update(team=cast.breaker_team, actor=cast.breaker, is_anonymous=True)
    client = cast.client(role)
    detail = client.get(f"{BASE}/teams/{cast.breaker_team.id}/")
    listing = client.get(f"{BASE}/teams/")
    for response in (detail, listing):
        assert b"Utrecht" not in response.content
        assert b"brian" not in response.content
    assert detail.json()["name"] == cast.breaker_team.alias


def test_an_accepted_invitation_cannot_be_used_twice(cast):
    token = fresh_invitation(cast)
    assert cast.client(OUTSIDER).post(f"/api/v1/invitations/{token}/accept/").status_code == 201
    second = cast.client(OTHER).post(f"/api/v1/invitations/{token}/accept/")
    assert second.status_code == 400
    assert second.json() == {"token": ["This invitation has already been used."]}
    assert Invitation.objects.get(token=token).accepted_by == cast.outsider
