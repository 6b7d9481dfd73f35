"""Every list endpoint of shared tasks costs the same SQL queries for 2 rows as for 20."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Example, Organizer

from ..conftest import Cast, phases_around_now, query_count

BASE = "/api/v1/shared-tasks/sst"


def _users(prefix: str, start: int, count: int) -> list:
    users = get_user_model().objects
    return [users.create_user(f"{prefix}{i}") for i in range(start, start + count)]


@dataclass
class ListEndpoint:
    name: str
    who: str
    url: str
    # Adds rows so that the list holds ``total`` (it holds ``before`` already).
    grow: Callable[[Cast, int, int], None]
    # How many rows the list shows for ``total`` added.
    shown: Callable[[int], int]


def more_tasks(cast: Cast, before: int, total: int) -> None:
    for i in range(before, total):
        task = services.shared_task_create(
            creator=cast.organizer, name=f"Task {i}", slug=f"task-{i}", is_public=i % 2 == 0
        )
        phases_around_now(task, cast.organizer, current="build")


def more_memberships(cast: Cast, before: int, total: int) -> None:
    for i in range(before, total):
        task = services.shared_task_create(
            creator=cast.other_organizer, name=f"Joined {i}", slug=f"joined-{i}"
        )
        services.team_create(shared_task=task, owner=cast.outsider, kind="builder", name="Solo")


def more_teams(cast: Cast, before: int, total: int) -> None:
    owners = _users("owner", before, total - before)
    for i, owner in enumerate(owners, start=before):
        team = services.team_create(
            shared_task=cast.shared_task, owner=owner, kind="breaker", name=f"Team {i}"
        )
        services.invitation_accept(
            token=services.invitation_create(team=team, actor=owner).token,
            user=_users(f"member{i}-", 0, 1)[0],
        )


def more_team_invitations(cast: Cast, before: int, total: int) -> None:
    joiners = _users("joiner", before, total - before)
    for i, joiner in enumerate(joiners, start=before):
        invitation = services.invitation_create(team=cast.breaker_team, actor=cast.breaker)
        if i % 2:
            services.invitation_accept(token=invitation.token, user=joiner)


def more_examples(cast: Cast, before: int, total: int) -> None:
    Example.objects.bulk_create(
        Example(
            dataset=cast.train, external_id=f"x{i}", text=f"film {i}", label="positive", position=i
        )
        for i in range(before, total)
    )


def more_organizers(cast: Cast, before: int, total: int) -> None:
    for user in _users("org", before, total - before):
        Organizer.objects.create(shared_task=cast.shared_task, user=user)


def more_audit_entries(cast: Cast, before: int, total: int) -> None:
    for i in range(before, total):
        services.shared_task_update(
            shared_task=cast.shared_task, actor=cast.organizer, description=f"take {i}"
        )


def more_task_invitations(cast: Cast, before: int, total: int) -> None:
    for i, user in enumerate(_users("guest", before, total - before), start=before):
        invitation = services.task_invitation_create(
            shared_task=cast.shared_task, actor=cast.organizer, note=f"for guest {i}"
        )
        if i % 2:
            services.task_invitation_accept(token=invitation.token, user=user)


ENDPOINTS = [
    # The cast's own two tasks come first; the organizer sees every other one.
    ListEndpoint("shared tasks", "organizer", "/api/v1/shared-tasks/", more_tasks, lambda n: n + 2),
    ListEndpoint(
        "my memberships", "outsider", "/api/v1/me/memberships/", more_memberships, lambda n: n
    ),
    ListEndpoint("teams", "outsider", f"{BASE}/teams/", more_teams, lambda n: n + 2),
    ListEndpoint(
        "team invitations",
        "breaker",
        "TEAM_INVITATIONS",
        more_team_invitations,
        lambda n: n,
    ),
    ListEndpoint(
        "examples", "outsider", f"{BASE}/datasets/train/examples/", more_examples, lambda n: n
    ),
    ListEndpoint(
        "organizers", "organizer", f"{BASE}/organizers/", more_organizers, lambda n: n + 1
    ),
    ListEndpoint("audit log", "organizer", f"{BASE}/audit-log/", more_audit_entries, lambda n: n),
    ListEndpoint(
        "task invitations",
        "organizer",
        f"{BASE}/task-invitations/",
        more_task_invitations,
        lambda n: n,
    ),
]


def rows(body) -> list:
    return body["results"] if isinstance(body, dict) else body


@pytest.mark.parametrize("endpoint", ENDPOINTS, ids=[e.name for e in ENDPOINTS])
def test_a_list_costs_the_same_queries_for_2_rows_as_for_20(cast, endpoint):
    cast.train.examples.all().delete()
    cast.shared_task.audit_log.all().delete()
    url = endpoint.url.replace(
        "TEAM_INVITATIONS", f"{BASE}/teams/{cast.breaker_team.id}/invitations/"
    )
    client = cast.client(endpoint.who)

    endpoint.grow(cast, 0, 2)
    few = query_count(client, url)
    endpoint.grow(cast, 2, 20)
    many = query_count(client, url)

    body = client.get(url).json()
    assert len(rows(body)) == endpoint.shown(20)
    assert many == few


def test_the_dataset_list_costs_the_same_for_one_split_as_for_three(cast):
    client = cast.client("builder")
    cast.blind_dev.delete()
    cast.starter.delete()
    one = query_count(client, f"{BASE}/datasets/")
    for split in ("blind_dev", "starter"):
        services.dataset_get_or_create(shared_task=cast.shared_task, split=split)
    three = query_count(client, f"{BASE}/datasets/")
    assert len(client.get(f"{BASE}/datasets/").json()) == 3
    assert three == one


def test_the_phase_list_costs_the_same_for_one_phase_as_for_four(cast):
    client = cast.client("other_organizer")
    url = "/api/v1/shared-tasks/other/phases/"
    start = timezone.now()
    services.phase_create(
        shared_task=cast.other_task,
        actor=cast.other_organizer,
        kind="build",
        starts_at=start,
        ends_at=start + timedelta(days=1),
    )
    one = query_count(client, url)
    for i, kind in enumerate(["break", "contest", "results"], start=1):
        services.phase_create(
            shared_task=cast.other_task,
            actor=cast.other_organizer,
            kind=kind,
            starts_at=start + timedelta(days=i),
            ends_at=start + timedelta(days=i + 1),
        )
    assert query_count(client, url) == one


def test_a_page_holds_as_many_rows_as_asked_up_to_the_maximum(cast, settings):
    settings.API_MAX_PAGE_SIZE = 15
    more_examples(cast, 2, 40)
    client = cast.client("outsider")
    url = f"{BASE}/datasets/train/examples/"
    assert len(client.get(url, {"page_size": 10}).json()["results"]) == 10
    assert len(client.get(url, {"page_size": 1000}).json()["results"]) == 15
