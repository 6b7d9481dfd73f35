"""Every pair endpoint x every role, in the phase where it matters: allowed and refused.

401 is the anonymous visitor asked to log in, 403 a signed-in user whose role does not
allow the action, 404 something they may not see (answered as if it did not exist).

The world of each case: the breaker's team (Utrecht) and a rival breaker team (OSU) have
each submitted an entry, Utrecht also has a draft with one pair; from the contest phase
on, OSU has contested Utrecht's scare-quotes pair. The phases: ``break``; ``predicting``,
the contest phase has just begun and builders still predict the pair texts, so no builder
team may read a variant's label; ``contest``, the contest phase with builders' pair
predictions final; ``results``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs import services
from bibi.pairs.models import Contest, Pair, PairSet
from bibi.sharedtasks import services as task_services
from bibi.tasktypes.rules import PairInput

from ..conftest import ROLES, Cast
from .conftest import (
    GOOD_PAIRS,
    PAST_THE_PAIR_PREDICTIONS,
    csv_bytes,
    let_time_pass,
    start_phase_now,
    submit,
)

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES
BASE = "/api/v1/shared-tasks/sst"


@pytest.fixture
def cast(shared_cast: Cast) -> Cast:
    """One cast for the module: each test reads it, or changes it and the change is undone
    after the test (``kept_rows``)."""
    return shared_cast


@dataclass
class World:
    cast: Cast
    entry: PairSet
    pair: Pair
    draft: PairSet
    draft_pair: Pair
    rival_entry: PairSet
    contest: Contest | None


def build_world(cast: Cast, phase: str) -> World:
    olivia = get_user_model().objects.create_user("olivia", password="pw-olivia-123")
    osu = task_services.team_create(
        shared_task=cast.shared_task, owner=olivia, kind="breaker", name="OSU"
    )
    entry = submit(cast)
    rival_entry = submit(cast, GOOD_PAIRS[:2], team=osu, user=olivia)
    draft_pair = services.pair_add(
        team=cast.breaker_team,
        user=cast.breaker,
        pair=PairInput(
            row=0, original_id="s1", variant_text="I adore it!", variant_label="positive"
        ),
    )
    pair = entry.pairs.get(original__external_id="s4")
    contest = None
    if phase in ("predicting", "contest", "results"):
        start_phase_now(cast.shared_task, "contest")
        contest = services.contest_create(pair=pair, user=olivia, reason="Not sarcastic.")
    if phase in ("contest", "results"):
        let_time_pass(cast.shared_task, PAST_THE_PAIR_PREDICTIONS)
    if phase == "results":
        # The contest phase lasts ten days: the results are published now.
        let_time_pass(cast.shared_task, timedelta(days=10) - PAST_THE_PAIR_PREDICTIONS)
    return World(cast, entry, pair, draft_pair.pair_set, draft_pair, rival_entry, contest)


@dataclass
class Case:
    name: str
    phase: str
    method: str
    url: Callable[[World], str]
    expected: dict[str, int]
    body: Callable[[World], Any] | None = None
    multipart: bool = False


def roles(**codes: int) -> dict[str, int]:
    """Codes by role name; ``rest`` is everyone not named."""
    rest = codes.pop("rest")
    return {role: codes.get(role, rest) for role in ROLES}


def a_file(world: World) -> dict[str, Any]:
    rows = [{**GOOD_PAIRS[0], "variant_text": "I'm crazy about this movie!"}]
    return {"file": SimpleUploadedFile("more.csv", csv_bytes(rows))}


A_PAIR = {"original_id": "s1", "variant_text": "I adore that movie!", "variant_label": "positive"}

CASES = [
    Case("list pair sets", "break", "get", lambda w: f"{BASE}/pair-sets/", roles(rest=200)),
    Case(
        "upload a file",
        "break",
        "post",
        lambda w: f"{BASE}/pair-sets/",
        roles(breaker=201, anonymous=401, rest=403),
        body=a_file,
        multipart=True,
    ),
    Case(
        "submit a json list",
        "break",
        "post",
        lambda w: f"{BASE}/pair-sets/",
        roles(breaker=201, anonymous=401, rest=403),
        body=lambda w: {"pairs": [A_PAIR]},
    ),
    Case(
        "read an entry",
        "break",
        "get",
        lambda w: f"/api/v1/pair-sets/{w.entry.id}/",
        roles(organizer=200, breaker=200, rest=404),
    ),
    Case(
        "mark a set final",
        "break",
        "patch",
        lambda w: f"/api/v1/pair-sets/{w.entry.id}/",
        roles(organizer=403, breaker=200, anonymous=401, rest=404),
        body=lambda w: {"is_final": True},
    ),
    Case(
        "add a pair to the draft",
        "break",
        "post",
        lambda w: f"{BASE}/pairs/",
        roles(breaker=201, anonymous=401, rest=403),
        body=lambda w: A_PAIR,
    ),
    Case(
        "submit the draft",
        "break",
        "post",
        lambda w: f"/api/v1/pair-sets/{w.draft.id}/submit/",
        roles(organizer=403, breaker=200, anonymous=401, rest=404),
    ),
    Case(
        "read a pair",
        "break",
        "get",
        lambda w: f"/api/v1/pairs/{w.pair.id}/",
        roles(organizer=200, breaker=200, rest=404),
    ),
    Case(
        "remove a draft pair",
        "break",
        "delete",
        lambda w: f"/api/v1/pairs/{w.draft_pair.id}/",
        roles(organizer=403, breaker=204, anonymous=401, rest=404),
    ),
    Case(
        "list contestable pairs before the contest phase",
        "break",
        "get",
        lambda w: f"{BASE}/contestable-pairs/",
        roles(builder=200, breaker=200, anonymous=401, rest=403),
    ),
    Case(
        "list contestable pairs while builders predict the pair texts",
        "predicting",
        "get",
        lambda w: f"{BASE}/contestable-pairs/",
        roles(builder=400, breaker=200, anonymous=401, rest=403),
    ),
    Case(
        "read another team's entry pair while builders predict the pair texts",
        "predicting",
        "get",
        lambda w: f"/api/v1/pairs/{w.pair.id}/",
        roles(organizer=200, breaker=200, rest=404),
    ),
    Case(
        "contest a pair while builders predict the pair texts",
        "predicting",
        "post",
        lambda w: f"/api/v1/pairs/{w.pair.id}/contests/",
        roles(organizer=403, breaker=403, anonymous=401, rest=404),
        body=lambda w: {"reason": "The quotes are not ironic."},
    ),
    Case(
        "list contests",
        "contest",
        "get",
        lambda w: f"{BASE}/contests/",
        roles(anonymous=401, rest=200),
    ),
    Case(
        "list contestable pairs",
        "contest",
        "get",
        lambda w: f"{BASE}/contestable-pairs/",
        roles(builder=200, breaker=200, anonymous=401, rest=403),
    ),
    Case(
        "read another team's entry pair while contesting",
        "contest",
        "get",
        lambda w: f"/api/v1/pairs/{w.pair.id}/",
        roles(organizer=200, builder=200, breaker=200, rest=404),
    ),
    Case(
        "contest a pair",
        "contest",
        "post",
        lambda w: f"/api/v1/pairs/{w.pair.id}/contests/",
        roles(organizer=403, builder=201, breaker=403, anonymous=401, rest=404),
        body=lambda w: {"reason": "The quotes are not ironic."},
    ),
    Case(
        "list a pair's contests",
        "contest",
        "get",
        lambda w: f"/api/v1/pairs/{w.pair.id}/contests/",
        roles(organizer=200, builder=200, breaker=200, rest=404),
    ),
    Case(
        "read a contest",
        "contest",
        "get",
        lambda w: f"/api/v1/contests/{w.contest.id}/",
        roles(organizer=200, breaker=200, anonymous=401, rest=404),
    ),
    Case(
        "adjudicate a contest",
        "contest",
        "post",
        lambda w: f"/api/v1/contests/{w.contest.id}/adjudicate/",
        roles(organizer=200, breaker=403, anonymous=401, rest=404),
        body=lambda w: {"decision": "keep", "note": "Sarcastic enough."},
    ),
    Case(
        "read an entry after the results",
        "results",
        "get",
        lambda w: f"/api/v1/pair-sets/{w.entry.id}/",
        roles(rest=200),
    ),
    Case(
        "read a draft after the results",
        "results",
        "get",
        lambda w: f"/api/v1/pair-sets/{w.draft.id}/",
        roles(organizer=200, breaker=200, rest=404),
    ),
    Case(
        "read a pair after the results",
        "results",
        "get",
        lambda w: f"/api/v1/pairs/{w.pair.id}/",
        roles(rest=200),
    ),
    Case(
        "read a contest after the results",
        "results",
        "get",
        lambda w: f"/api/v1/contests/{w.contest.id}/",
        roles(organizer=200, breaker=200, anonymous=401, rest=404),
    ),
]


def call(world: World, case: Case, role: str):
    client = world.cast.client(role)
    body = case.body(world) if case.body else None
    kind = "multipart" if case.multipart else "json"
    return getattr(client, case.method)(case.url(world), body, format=kind)


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_each_role_gets_what_its_role_allows(cast, case, role):
    world = build_world(cast, case.phase)
    response = call(world, case, role)
    assert response.status_code == case.expected[role], response.content[:500]


# --- What each role sees in the lists -----------------------------------------------------


def listed_set_ids(world: World, role: str) -> set[int]:
    body = world.cast.client(role).get(f"{BASE}/pair-sets/").json()
    return {row["id"] for row in body["results"]}


@pytest.mark.parametrize("role", ROLES)
def test_before_the_results_a_team_lists_its_own_sets_and_the_organizers_all(cast, role):
    world = build_world(cast, "contest")
    everything = {world.entry.id, world.draft.id, world.rival_entry.id}
    expected = {ORG: everything, BREAKER: {world.entry.id, world.draft.id}}.get(role, set())
    assert listed_set_ids(world, role) == expected


@pytest.mark.parametrize("role", ROLES)
def test_after_the_results_everyone_lists_the_submitted_sets_but_no_draft(cast, role):
    world = build_world(cast, "results")
    submitted = {world.entry.id, world.rival_entry.id}
    expected = submitted | ({world.draft.id} if role in (ORG, BREAKER) else set())
    assert listed_set_ids(world, role) == expected


@pytest.mark.parametrize("role", [OTHER, OUTSIDER, ANON])
def test_after_the_results_a_private_tasks_sets_stay_hidden_from_outsiders(cast, role):
    world = build_world(cast, "results")
    cast.shared_task.is_public = False
    cast.shared_task.save()
    client = cast.client(role)
    assert client.get(f"/api/v1/pair-sets/{world.entry.id}/").status_code == 404
    assert client.get(f"{BASE}/pair-sets/").status_code == 404


def test_contestable_pairs_show_texts_and_labels_but_no_team_or_rationale(cast):
    world = build_world(cast, "contest")
    response = cast.client(BUILDER).get(f"{BASE}/contestable-pairs/")
    rows = response.json()["results"]
    assert len(rows) == 6
    assert b"Utrecht" not in response.content and b"OSU" not in response.content
    assert b"Scare quotes" not in response.content
    by_team = cast.client(BREAKER).get(f"{BASE}/contestable-pairs/").json()["results"]
    assert {row["id"] for row in by_team} == set(
        world.rival_entry.pairs.values_list("id", flat=True)
    )


def test_the_author_team_sees_who_contested_by_team_alias_only_if_anonymous(cast):
    world = build_world(cast, "contest")
    osu = world.contest.team
    task_services.team_update(team=osu, actor=osu.memberships.get().user, is_anonymous=True)
    body = cast.client(BREAKER).get(f"/api/v1/contests/{world.contest.id}/").json()
    assert body["team"] == {"id": osu.id, "name": osu.alias}
    assert body["created_by"] is None
    assert (
        cast.client(ORG).get(f"/api/v1/contests/{world.contest.id}/").json()["team"]["name"]
        == "OSU"
    )
