"""What has happened stays: a start or end that has passed never moves, by API or admin."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from bibi.pairs.models import PairSet
from bibi.pairs.selectors import entry_pair_sets
from bibi.sharedtasks import services
from bibi.sharedtasks.models import AuditLogEntry, Phase
from bibi.texts import moment_text

from .test_admin import change_form, phase_index, staff_organizer

pytestmark = pytest.mark.django_db

BASE = "/api/v1/shared-tasks/sst"


def phase(cast, kind: str) -> Phase:
    return cast.shared_task.phases.get(kind=kind)


def patch(cast, kind: str, **moments):
    current = phase(cast, kind)
    body = {
        "starts_at": moments.get("starts_at", current.starts_at).isoformat(),
        "ends_at": moments.get("ends_at", current.ends_at).isoformat(),
    }
    return cast.client("organizer").patch(f"{BASE}/phases/{kind}/", body, format="json")


def test_the_end_of_a_phase_that_has_ended_cannot_move(cast):
    build = phase(cast, "build")
    response = patch(cast, "build", ends_at=build.ends_at - timedelta(hours=2))
    assert response.status_code == 400
    assert response.json() == {
        "ends_at": [
            f"The build phase ended at {moment_text(build.ends_at)}; its end can no "
            "longer change. Extend a phase while it runs."
        ]
    }
    assert phase(cast, "build").ends_at == build.ends_at
    assert not AuditLogEntry.objects.filter(action="phase.update").exists()


def test_the_start_of_a_phase_that_has_started_cannot_move(cast):
    brk = phase(cast, "break")
    response = patch(cast, "break", starts_at=brk.starts_at + timedelta(hours=1))
    assert response.status_code == 400
    assert response.json()["starts_at"] == [
        f"The break phase started at {moment_text(brk.starts_at)}; its start can no longer change."
    ]


def test_a_running_phase_cannot_be_closed_retroactively(cast):
    an_hour_ago = timezone.now() - timedelta(hours=1)
    response = patch(cast, "break", ends_at=an_hour_ago)
    assert response.status_code == 400
    assert "a phase cannot be closed retroactively" in response.json()["ends_at"][0]


def test_a_phase_still_to_come_cannot_be_moved_into_the_past(cast):
    contest = phase(cast, "contest")
    response = patch(cast, "results", starts_at=contest.starts_at - timedelta(days=30))
    assert response.status_code == 400
    assert "a phase cannot start in the past" in response.json()["starts_at"][0]


def test_a_running_phase_may_still_end_earlier_or_later(cast):
    brk = phase(cast, "break")
    sooner = timezone.now() + timedelta(hours=1)
    assert patch(cast, "break", ends_at=sooner).status_code == 200
    assert phase(cast, "break").ends_at == sooner
    assert patch(cast, "break", ends_at=brk.ends_at).status_code == 200


def test_a_running_phase_may_be_extended_but_an_ended_one_may_not(cast):
    contest, results = phase(cast, "contest"), phase(cast, "results")
    for later in (results, contest):
        services.phase_update(
            phase=later,
            actor=cast.organizer,
            starts_at=later.starts_at + timedelta(days=5),
            ends_at=later.ends_at + timedelta(days=5),
        )
    deadline = phase(cast, "break").ends_at
    services.phase_extend(
        phase=phase(cast, "break"), actor=cast.organizer, ends_at=deadline + timedelta(days=2)
    )
    assert phase(cast, "break").ends_at == deadline + timedelta(days=2)

    build = phase(cast, "build")
    with pytest.raises(ValidationError, match="The build phase ended at .*; its end can no"):
        services.phase_extend(
            phase=build, actor=cast.organizer, ends_at=build.ends_at + timedelta(hours=1)
        )


def submit(cast, at) -> PairSet:
    return PairSet.objects.create(
        shared_task=cast.shared_task,
        team=cast.breaker_team,
        status=PairSet.Status.SUBMITTED,
        source=PairSet.Source.API,
        submitted_at=at,
    )


@pytest.mark.parametrize("current", ["break", "contest"])
def test_moving_the_break_end_never_changes_a_teams_entry(cast, current):
    if current == "contest":
        # The break phase has ended: move every phase ten days back.
        for kind in ("results", "contest", "break", "build"):
            Phase.objects.filter(shared_task=cast.shared_task, kind=kind).update(
                starts_at=phase(cast, kind).starts_at - timedelta(days=10),
                ends_at=phase(cast, kind).ends_at - timedelta(days=10),
            )
    brk = phase(cast, "break")
    first = submit(cast, brk.starts_at + timedelta(hours=1))
    latest = submit(cast, brk.starts_at + timedelta(hours=3))
    assert entry_pair_sets(shared_task=cast.shared_task)[cast.breaker_team.id] == latest

    between = brk.starts_at + timedelta(hours=2)
    assert patch(cast, "break", ends_at=between).status_code == 400
    with pytest.raises(ValidationError):
        services.phase_update(
            phase=brk, actor=cast.organizer, starts_at=brk.starts_at, ends_at=between
        )
    assert entry_pair_sets(shared_task=cast.shared_task)[cast.breaker_team.id] == latest
    assert first != latest


def admin_post(cast, client, fields):
    return client.post(f"/admin/sharedtasks/sharedtask/{cast.shared_task.pk}/change/", fields)


def test_the_admin_refuses_to_move_an_end_that_has_passed(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    i = phase_index(fields, "build")
    build = phase(cast, "build")
    earlier = build.ends_at - timedelta(days=1)
    fields[f"phases-{i}-ends_at_0"] = earlier.strftime("%Y-%m-%d")
    fields[f"phases-{i}-ends_at_1"] = earlier.strftime("%H:%M:%S")
    response = admin_post(cast, client, fields)
    assert response.status_code == 200
    assert "The build phase ended at" in response.content.decode()
    assert "its end can no longer change" in response.content.decode()
    assert phase(cast, "build").ends_at == build.ends_at
    assert not AuditLogEntry.objects.filter(action="phase.update").exists()


def test_the_admin_refuses_to_delete_a_phase_that_has_started(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    fields[f"phases-{phase_index(fields, 'break')}-DELETE"] = "on"
    response = admin_post(cast, client, fields)
    assert response.status_code == 200
    assert "it can no longer be deleted" in response.content.decode()
    assert cast.shared_task.phases.filter(kind="break").exists()


def test_the_admin_still_moves_a_phase_to_come(cast):
    client = staff_organizer(cast)
    fields = change_form(client, cast)
    i = phase_index(fields, "results")
    later = phase(cast, "results").ends_at + timedelta(days=3)
    fields[f"phases-{i}-ends_at_0"] = later.strftime("%Y-%m-%d")
    fields[f"phases-{i}-ends_at_1"] = later.strftime("%H:%M:%S")
    assert admin_post(cast, client, fields).status_code == 302
    assert phase(cast, "results").ends_at.date() == later.date()


def test_closing_the_running_phase_now_opens_the_next_at_the_same_moment(cast):
    before = timezone.now()
    response = cast.client("organizer").post(f"{BASE}/phases/break/close-now/")
    assert response.status_code == 200, response.json()
    closed, opened = phase(cast, "break"), phase(cast, "contest")
    assert before <= closed.ends_at == opened.starts_at <= timezone.now()
    assert cast.shared_task.phase_at().kind == "contest"
    entry = AuditLogEntry.objects.filter(action="phase.close_now").get()
    assert entry.details["opened"]["kind"] == "contest"


def test_only_a_running_phase_can_be_closed_now(cast):
    for kind in ("build", "contest"):
        response = cast.client("organizer").post(f"{BASE}/phases/{kind}/close-now/")
        assert response.status_code == 400
        assert "Only a running phase can be closed now" in response.json()["detail"]


def test_closing_the_last_phase_opens_nothing(cast):
    results = phase(cast, "results")
    services.phase_close_now(phase=phase(cast, "break"), actor=cast.organizer)
    services.phase_close_now(phase=phase(cast, "contest"), actor=cast.organizer)
    assert services.phase_close_now(phase=phase(cast, "results"), actor=cast.organizer) is None
    assert phase(cast, "results").starts_at < phase(cast, "results").ends_at <= timezone.now()
    assert results.ends_at > phase(cast, "results").ends_at
