"""Task invitations: how organizers let people into a private task."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.models import AuditLogEntry, TaskAccess

pytestmark = pytest.mark.django_db


@pytest.fixture
def private(cast):
    cast.shared_task.is_public = False
    cast.shared_task.save()
    return cast


def invite(cast, **options):
    return services.task_invitation_create(
        shared_task=cast.shared_task, actor=cast.organizer, **options
    )


def test_nobody_outside_a_private_task_can_see_it_or_found_a_team_in_it(private):
    assert not selectors.can_view_shared_task(
        user=private.outsider, shared_task=private.shared_task
    )


def test_an_accepted_invitation_lets_its_holder_see_the_task_and_found_a_team(private):
    access, created = services.task_invitation_accept(
        token=invite(private).token, user=private.outsider
    )
    assert created
    assert (access.shared_task, access.user) == (private.shared_task, private.outsider)
    assert selectors.can_view_shared_task(user=private.outsider, shared_task=private.shared_task)
    assert private.shared_task in selectors.shared_task_list(user=private.outsider)
    team = services.team_create(
        shared_task=private.shared_task, owner=private.outsider, kind="builder", name="Late"
    )
    assert selectors.is_team_member(user=private.outsider, team=team)


def test_a_team_invitation_lets_someone_into_a_private_task_too(private):
    invitation = services.invitation_create(team=private.breaker_team, actor=private.breaker)
    services.invitation_accept(token=invitation.token, user=private.outsider)
    assert selectors.can_view_shared_task(user=private.outsider, shared_task=private.shared_task)


@pytest.mark.parametrize(
    ("spoil", "message"),
    [
        ("revoked", "This invitation was revoked by the organizers."),
        ("expired", "This invitation has expired. Ask the organizers for a new link."),
        ("used_up", "This invitation has been used as often as it may be. Ask the organizers."),
    ],
)
def test_a_revoked_expired_or_used_up_invitation_lets_nobody_in(private, spoil, message):
    invitation = invite(private, max_uses=1)
    if spoil == "revoked":
        services.task_invitation_revoke(invitation=invitation, actor=private.organizer)
    elif spoil == "expired":
        invitation.expires_at = timezone.now() - timedelta(seconds=1)
        invitation.save()
    else:
        services.task_invitation_accept(token=invitation.token, user=private.other_organizer)
    with pytest.raises(ValidationError) as raised:
        services.task_invitation_accept(token=invitation.token, user=private.outsider)
    assert raised.value.message_dict == {"token": [message]}
    assert not selectors.can_view_shared_task(
        user=private.outsider, shared_task=private.shared_task
    )


def test_an_unknown_token_is_refused(private):
    with pytest.raises(ValidationError, match="does not exist"):
        services.task_invitation_accept(token="no-such-token", user=private.outsider)


def test_accepting_again_uses_up_nothing(private):
    invitation = invite(private, max_uses=2)
    services.task_invitation_accept(token=invitation.token, user=private.outsider)
    access, created = services.task_invitation_accept(token=invitation.token, user=private.outsider)
    assert not created
    assert TaskAccess.objects.filter(user=private.outsider).count() == 1
    services.task_invitation_accept(token=invitation.token, user=private.other_organizer)


def test_revoking_an_invitation_keeps_the_access_it_gave(private):
    invitation = invite(private)
    services.task_invitation_accept(token=invitation.token, user=private.outsider)
    services.task_invitation_revoke(invitation=invitation, actor=private.organizer)
    assert selectors.can_view_shared_task(user=private.outsider, shared_task=private.shared_task)


def test_only_organizers_create_or_revoke_invitations(private):
    with pytest.raises(PermissionDenied):
        services.task_invitation_create(shared_task=private.shared_task, actor=private.builder)
    invitation = invite(private)
    with pytest.raises(PermissionDenied):
        services.task_invitation_revoke(invitation=invitation, actor=private.breaker)


def test_an_organizer_needs_no_invitation(private):
    with pytest.raises(ValidationError, match="You organize this shared task"):
        services.task_invitation_accept(token=invite(private).token, user=private.organizer)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"expires_at": timezone.now() - timedelta(minutes=1)}, "expires_at"),
        ({"max_uses": 0}, "max_uses"),
    ],
)
def test_an_invitation_that_could_never_be_used_is_refused(private, options, field):
    with pytest.raises(ValidationError) as raised:
        invite(private, **options)
    assert list(raised.value.message_dict) == [field]


def test_invitations_are_valid_for_fourteen_days_unless_told_otherwise(private):
    invitation = invite(private)
    lifetime = invitation.expires_at - invitation.created_at
    assert timedelta(days=14) - timedelta(seconds=5) < lifetime <= timedelta(days=14)


def test_creating_accepting_and_revoking_are_audited(private):
    invitation = invite(private, note="the reading group", max_uses=3)
    services.task_invitation_accept(token=invitation.token, user=private.outsider)
    services.task_invitation_revoke(invitation=invitation, actor=private.organizer)
    entries = AuditLogEntry.objects.filter(action__startswith="task_invitation.").order_by("id")
    assert [(e.action, e.actor, e.target) for e in entries] == [
        ("task_invitation.create", private.organizer, f"task_invitation:{invitation.id}"),
        ("task_invitation.accept", private.outsider, f"task_invitation:{invitation.id}"),
        ("task_invitation.revoke", private.organizer, f"task_invitation:{invitation.id}"),
    ]
    assert entries[0].details["note"] == "the reading group"
    assert entries[0].details["max_uses"] == 3
    assert entries[1].details == {"user": "oscar"}
    # The token is the key to the task: the log never shows it.
    assert all(invitation.token not in str(e.details) for e in entries)


def test_the_organizers_list_counts_each_invitations_uses(private):
    invitation = invite(private)
    services.task_invitation_accept(token=invitation.token, user=private.outsider)
    body = private.client("organizer").get("/api/v1/shared-tasks/sst/task-invitations/").json()
    assert [(row["token"], row["uses"], row["created_by"]) for row in body["results"]] == [
        (invitation.token, 1, "olga")
    ]
