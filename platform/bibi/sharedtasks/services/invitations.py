"""Invitations into a team: single use, expiring, revocable."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    Invitation,
    Membership,
    Team,
)
from bibi.sharedtasks.services.access import join_require_allowed

INVITATION_LIFETIME = timedelta(days=14)


def invitation_create(*, team: Team, actor: AbstractBaseUser) -> Invitation:
    if not selectors.is_team_owner(user=actor, team=team):
        raise PermissionDenied("Only the team's owners may invite members.")
    return Invitation.objects.create(
        team=team, created_by=actor, expires_at=timezone.now() + INVITATION_LIFETIME
    )


@transaction.atomic
def invitation_accept(*, token: str, user: AbstractBaseUser) -> Membership:
    invitation = (
        Invitation.objects.select_for_update()
        .select_related("team__shared_task")
        .filter(token=token)
        .first()
    )
    if invitation is None:
        raise ValidationError(
            {"token": "This invitation does not exist. Ask the team for a new link."}
        )
    if invitation.revoked_at is not None:
        raise ValidationError({"token": "This invitation was revoked by the team."})
    if invitation.accepted_at is not None:
        raise ValidationError({"token": "This invitation has already been used."})
    if invitation.expires_at <= timezone.now():
        raise ValidationError(
            {"token": "This invitation has expired. Ask the team for a new link."}
        )
    team = invitation.team
    join_require_allowed(shared_task=team.shared_task, user=user)
    try:
        membership = Membership.objects.create(team=team, user=user, shared_task=team.shared_task)
    except IntegrityError:
        raise ValidationError("You are already in a team of this shared task.") from None
    invitation.accepted_by, invitation.accepted_at = user, timezone.now()
    invitation.save(update_fields=["accepted_by", "accepted_at"])
    return membership


def invitation_revoke(*, invitation: Invitation, actor: AbstractBaseUser) -> Invitation:
    if not selectors.is_team_owner(user=actor, team=invitation.team):
        raise PermissionDenied("Only the team's owners may revoke invitations.")
    if invitation.accepted_at is None and invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation
