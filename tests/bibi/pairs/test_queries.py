"""Every list of the pairs API costs the same number of queries whatever its length."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from bibi.pairs import services
from bibi.sharedtasks import services as task_services

from ..conftest import query_count
from .conftest import GOOD_PAIRS, start_contests, submit

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

BASE = "/api/v1/shared-tasks/sst"


def populate(cast, teams: int) -> dict[str, str]:
    """The breaker's team with an entry of up to ``teams`` pairs, and ``teams`` more breaker
    teams (every other one anonymous) with two sets each. In the contest phase the builder
    contests every pair of their entries (kept), and each of them contests the breaker's
    first pair. Returns the URL of each list."""
    users = get_user_model().objects
    entries = [submit(cast, GOOD_PAIRS[: min(teams, 4)])]
    for n in range(teams):
        owner = users.create_user(f"breaker{n}", password="pw-breaker-123")
        team = task_services.team_create(
            shared_task=cast.shared_task, owner=owner, kind="breaker", name=f"Team {n}"
        )
        if n % 2:
            task_services.team_update(team=team, actor=owner, is_anonymous=True)
        submit(cast, GOOD_PAIRS[:1], team=team, user=owner)
        entries.append(submit(cast, GOOD_PAIRS[: 1 + n % 4], team=team, user=owner))
    start_contests(cast.shared_task)
    for entry in entries[1:]:
        for pair in entry.pairs.all():
            contest = services.contest_create(pair=pair, user=cast.builder, reason="Wrong.")
            services.contest_adjudicate(
                contest=contest, actor=cast.organizer, decision="keep", note="Right."
            )
    ours = entries[0]
    for pair in ours.pairs.all()[:1]:
        for entry in entries[1:]:
            owner = entry.submitted_by
            services.contest_create(pair=pair, user=owner, reason="Wrong label.")
    return {
        "pair sets": f"{BASE}/pair-sets/",
        "contests": f"{BASE}/contests/",
        "contestable pairs": f"{BASE}/contestable-pairs/",
        "pairs of a set": f"/api/v1/pair-sets/{ours.id}/",
        "contests of a pair": f"/api/v1/pairs/{ours.pairs.order_by('row').first().id}/contests/",
    }


# Organizers contest nothing; a builder sees no team's set before the results.
NOT_SEEN = {("organizer", "contestable pairs"), ("builder", "pairs of a set")}


def counts(cast, teams: int) -> dict[tuple[str, str], int]:
    with transaction.atomic():
        urls = populate(cast, teams)
        found = {}
        for role in ("organizer", "builder", "breaker"):
            client = cast.client(role)
            for name, url in urls.items():
                if (role, name) in NOT_SEEN:
                    continue
                query_count(client, url)  # warm: per-process caches
                found[(role, name)] = query_count(client, url)
        transaction.set_rollback(True)
    return found


def test_every_list_costs_the_same_queries_for_two_teams_and_for_six(cast):
    small, large = counts(cast, 2), counts(cast, 6)
    assert large == small
