"""Letting people into a private task: organizers' links, and who they let in."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    SharedTask,
    TaskAccess,
    TaskInvitation,
    TaskInvitationUse,
)
from bibi.sharedtasks.services.access import organizer_require
from bibi.sharedtasks.services.audit import audit_record
from bibi.sharedtasks.services.invitations import INVITATION_LIFETIME
from bibi.texts import moment_text

# A link for validators is tied to nobody: whoever has it becomes a validator, so it lets in
# one person unless the organizers say more (a team member's second account is a validator
# too, otherwise).
VALIDATOR_LINK_USES = 1


@transaction.atomic
def task_invitation_create(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    expires_at: datetime | None = None,
    max_uses: int | None = None,
    note: str = "",
    grants_validator: bool = False,
) -> TaskInvitation:
    """An organizer's link into the task: valid until ``expires_at`` (default: in 14 days),
    for ``max_uses`` people (None: any number; for a link for validators,
    ``VALIDATOR_LINK_USES``), until revoked. ``grants_validator``: whoever accepts it becomes
    a validator of the task's pair labels (``bibi.pairs.validation``)."""
    organizer_require(user=actor, shared_task=shared_task, doing="that")
    now = timezone.now()
    expires_at = expires_at or now + INVITATION_LIFETIME
    if expires_at <= now:
        raise ValidationError(
            {"expires_at": f"{moment_text(expires_at)} has passed: give a moment still to come."}
        )
    if max_uses is not None and max_uses < 1:
        raise ValidationError({"max_uses": "Give at least 1, or nothing for no limit."})
    if grants_validator and max_uses is None:
        max_uses = VALIDATOR_LINK_USES
    invitation = TaskInvitation.objects.create(
        shared_task=shared_task,
        created_by=actor,
        expires_at=expires_at,
        max_uses=max_uses,
        note=note.strip(),
        grants_validator=grants_validator,
    )
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="task_invitation.create",
        target=f"task_invitation:{invitation.id}",
        details={
            "expires_at": expires_at.isoformat(),
            "max_uses": max_uses,
            "note": note,
            "grants_validator": grants_validator,
        },
    )
    return invitation


@transaction.atomic
def task_invitation_revoke(
    *, invitation: TaskInvitation, actor: AbstractBaseUser
) -> TaskInvitation:
    """Nobody else gets in with this link; whoever it let in keeps their access."""
    organizer_require(user=actor, shared_task=invitation.shared_task, doing="that")
    if invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit_record(
            shared_task=invitation.shared_task,
            actor=actor,
            action="task_invitation.revoke",
            target=f"task_invitation:{invitation.id}",
        )
    return invitation


@transaction.atomic
def task_invitation_accept(*, token: str, user: AbstractBaseUser) -> tuple[TaskAccess, bool]:
    """Let ``user`` into the task the link is for. Returns the access and whether it is new:
    someone already let in keeps their access and uses up nothing, but a link that grants the
    validator role gives it to them (``TaskAccess.is_validator``)."""
    # Locked so that two people cannot both take the last use of a link.
    invitation = (
        TaskInvitation.objects.select_for_update()
        .select_related("shared_task")
        .filter(token=token)
        .first()
    )
    if invitation is None:
        raise ValidationError(
            {"token": "This invitation does not exist. Ask the organizers for a new link."}
        )
    shared_task = invitation.shared_task
    if selectors.is_organizer(user=user, shared_task=shared_task):
        raise ValidationError("You organize this shared task: you see it already.")
    existing = TaskAccess.objects.filter(shared_task=shared_task, user=user).first()
    if existing is not None and (existing.is_validator or not invitation.grants_validator):
        return existing, False
    if invitation.revoked_at is not None:
        raise ValidationError({"token": "This invitation was revoked by the organizers."})
    if invitation.expires_at <= timezone.now():
        raise ValidationError(
            {"token": "This invitation has expired. Ask the organizers for a new link."}
        )
    if invitation.max_uses is not None and invitation.uses_taken.count() >= invitation.max_uses:
        raise ValidationError(
            {"token": "This invitation has been used as often as it may be. Ask the organizers."}
        )
    if existing is not None:
        return _validator_grant(existing, invitation), False
    try:
        with transaction.atomic():
            access = TaskAccess.objects.create(
                shared_task=shared_task,
                user=user,
                invitation=invitation,
                is_validator=invitation.grants_validator,
            )
    except IntegrityError:
        # Let in a moment ago through another link.
        return TaskAccess.objects.get(shared_task=shared_task, user=user), False
    TaskInvitationUse.objects.create(invitation=invitation, user=user)
    audit_record(
        shared_task=shared_task,
        actor=user,
        action="task_invitation.accept",
        target=f"task_invitation:{invitation.id}",
        details={
            "user": user.get_username(),
            **({"validator": True} if access.is_validator else {}),
        },
    )
    return access, True


def _validator_grant(access: TaskAccess, invitation: TaskInvitation) -> TaskAccess:
    """Someone already let in accepts a validator's link: they become a validator."""
    access.is_validator = True
    access.save(update_fields=["is_validator"])
    TaskInvitationUse.objects.get_or_create(invitation=invitation, user=access.user)
    audit_record(
        shared_task=invitation.shared_task,
        actor=access.user,
        action="task_invitation.accept",
        target=f"task_invitation:{invitation.id}",
        details={"user": access.user.get_username(), "validator": True},
    )
    return access
