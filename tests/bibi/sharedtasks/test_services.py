from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from bibi.sharedtasks import services
from bibi.sharedtasks.models import AuditLogEntry, Invitation, Membership, Phase

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_the_creator_of_a_task_becomes_its_organizer_and_it_is_audited(cast):
    assert list(cast.shared_task.organizers.all()) == [cast.organizer]
    entry = AuditLogEntry.objects.filter(
        shared_task=cast.shared_task, action="shared_task.create"
    ).get()
    assert entry.actor == cast.organizer


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        (["positive"], "at least two labels"),
        (["positive", "positive"], "distinct"),
        (["positive", ""], "non-empty string"),
        ("positive,negative", "at least two labels"),
    ],
)
def test_it_rejects_a_label_set_that_is_not_an_ordered_list_of_distinct_labels(
    cast, labels, message
):
    with pytest.raises(ValidationError, match=message):
        services.shared_task_create(creator=cast.organizer, name="Bad", slug="bad", labels=labels)
    assert not cast.shared_task.__class__.objects.filter(slug="bad").exists()


def test_it_rejects_a_slug_that_is_taken(cast):
    with pytest.raises(ValidationError, match="slug 'sst' already exists"):
        services.shared_task_create(creator=cast.outsider, name="Again", slug="sst")


def test_the_label_set_is_frozen_once_examples_are_imported(cast):
    with pytest.raises(ValidationError, match="cannot change once examples"):
        services.shared_task_update(
            shared_task=cast.shared_task, actor=cast.organizer, labels=["neg", "pos"]
        )


def test_a_settings_change_is_audited_with_before_and_after(cast):
    services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, weight_mode="none"
    )
    entry = AuditLogEntry.objects.filter(action="shared_task.update").get()
    assert entry.details == {"weight_mode": {"from": "dev_accuracy", "to": "none"}}


def test_only_organizers_change_a_task(cast):
    with pytest.raises(PermissionDenied):
        services.shared_task_update(
            shared_task=cast.shared_task, actor=cast.other_organizer, description="x"
        )


def test_the_current_phase_follows_the_clock(cast):
    now = timezone.now()
    assert cast.shared_task.phase_at(now).kind == "break"
    build = cast.shared_task.phases.get(kind="build")
    assert cast.shared_task.phase_at(build.starts_at + timedelta(seconds=1)).kind == "build"
    results = cast.shared_task.phases.get(kind="results")
    assert cast.shared_task.phase_at(results.ends_at + timedelta(seconds=1)) is None
    assert cast.shared_task.results_published is False


def test_it_refuses_overlapping_phases(cast):
    contest = cast.shared_task.phases.get(kind="contest")
    with pytest.raises(ValidationError, match="would overlap the results phase"):
        services.phase_update(
            phase=contest,
            actor=cast.organizer,
            starts_at=contest.starts_at,
            ends_at=contest.ends_at + timedelta(days=1),
        )


def test_it_refuses_phases_out_of_order(db, cast):
    other = cast.other_task
    now = timezone.now()
    services.phase_create(
        shared_task=other,
        actor=cast.other_organizer,
        kind="break",
        starts_at=now,
        ends_at=now + timedelta(days=1),
    )
    with pytest.raises(ValidationError, match="build phase must come before the break phase"):
        services.phase_create(
            shared_task=other,
            actor=cast.other_organizer,
            kind="build",
            starts_at=now + timedelta(days=2),
            ends_at=now + timedelta(days=3),
        )


def test_a_phase_must_end_after_it_starts(cast):
    now = timezone.now()
    with pytest.raises(ValidationError, match="end after it starts"):
        services.phase_create(
            shared_task=cast.other_task,
            actor=cast.other_organizer,
            kind="build",
            starts_at=now,
            ends_at=now,
        )


def test_an_extension_moves_the_deadline_later_and_is_audited(cast):
    phase = cast.shared_task.phases.get(kind="results")
    previous = phase.ends_at
    services.phase_extend(
        phase=phase,
        actor=cast.organizer,
        ends_at=previous + timedelta(days=2),
        reason="server outage",
    )
    phase.refresh_from_db()
    assert phase.ends_at == previous + timedelta(days=2)
    entry = AuditLogEntry.objects.filter(action="phase.extend").get()
    assert entry.details == {
        "from": previous.isoformat(),
        "to": phase.ends_at.isoformat(),
        "reason": "server outage",
    }
    assert entry.actor == cast.organizer


def test_an_extension_cannot_shorten_a_phase(cast):
    phase = cast.shared_task.phases.get(kind="break")
    with pytest.raises(ValidationError, match="must end after the current deadline"):
        services.phase_extend(
            phase=phase, actor=cast.organizer, ends_at=phase.ends_at - timedelta(hours=1)
        )


def test_an_extension_cannot_run_into_the_next_phase(cast):
    phase = cast.shared_task.phases.get(kind="break")
    with pytest.raises(ValidationError, match="would overlap the contest phase"):
        services.phase_extend(
            phase=phase, actor=cast.organizer, ends_at=phase.ends_at + timedelta(days=1)
        )
    assert Phase.objects.get(id=phase.id).ends_at == phase.ends_at


def test_a_user_is_in_one_team_per_task(cast):
    with pytest.raises(ValidationError, match="already in the team 'Strawman'"):
        services.team_create(
            shared_task=cast.shared_task, owner=cast.builder, kind="breaker", name="Second"
        )


def test_the_same_user_may_join_teams_of_different_tasks(cast):
    team = services.team_create(
        shared_task=cast.other_task, owner=cast.builder, kind="breaker", name="Elsewhere"
    )
    assert Membership.objects.filter(user=cast.builder).count() == 2
    assert team.memberships.get().role == "owner"


def test_organizers_cannot_join_their_own_tasks_teams(cast):
    with pytest.raises(ValidationError, match="Organizers of a shared task cannot join"):
        services.team_create(
            shared_task=cast.shared_task, owner=cast.organizer, kind="builder", name="Inside job"
        )


def test_team_names_are_unique_per_task_whatever_the_case(cast):
    with pytest.raises(ValidationError, match="named 'utrecht' already exists"):
        services.team_create(
            shared_task=cast.shared_task, owner=cast.outsider, kind="breaker", name="utrecht"
        )


def test_it_refuses_an_anonymous_team_where_the_task_does_not_allow_it(cast):
    services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, allow_anonymous_teams=False
    )
    with pytest.raises(ValidationError, match="does not allow anonymous"):
        services.team_create(
            shared_task=cast.shared_task,
            owner=cast.outsider,
            kind="breaker",
            name="Ghosts",
            is_anonymous=True,
        )


def test_an_invitation_adds_a_member(cast):
    invitation = services.invitation_create(team=cast.breaker_team, actor=cast.breaker)
    membership = services.invitation_accept(token=invitation.token, user=cast.outsider)
    assert membership.team == cast.breaker_team
    assert membership.role == "member"


def test_only_owners_invite(cast):
    invitation = services.invitation_create(team=cast.breaker_team, actor=cast.breaker)
    services.invitation_accept(token=invitation.token, user=cast.outsider)
    with pytest.raises(PermissionDenied, match="owners may invite"):
        services.invitation_create(team=cast.breaker_team, actor=cast.outsider)


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        ({"expires_at": timezone.now() - timedelta(seconds=1)}, "has expired"),
        ({"revoked_at": timezone.now()}, "was revoked"),
    ],
)
def test_a_stale_invitation_is_refused(cast, spoil, message):
    invitation = services.invitation_create(team=cast.breaker_team, actor=cast.breaker)
    Invitation.objects.filter(id=invitation.id).update(**spoil)
    with pytest.raises(ValidationError, match=message):
        services.invitation_accept(token=invitation.token, user=cast.outsider)
    assert not Membership.objects.filter(user=cast.outsider).exists()


def test_an_unknown_invitation_is_refused(cast):
    with pytest.raises(ValidationError, match="does not exist"):
        services.invitation_accept(token="nope", user=cast.outsider)
