"""Teams, who belongs to them, and the links that let people into a team or a private task."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models

from bibi.sharedtasks.models.tasks import SharedTask


class Team(models.Model):
    class Kind(models.TextChoices):
        BUILDER = "builder", "Builder"
        BREAKER = "breaker", "Breaker"

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="teams")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    name = models.CharField(max_length=120)
    is_anonymous = models.BooleanField(
        default=False,
        help_text="Show an alias instead of the name to everyone outside the team and the organizers.",
    )
    alias = models.CharField(max_length=60, help_text="The name shown when the team is anonymous.")
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Membership", related_name="teams"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["shared_task", "kind", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["shared_task", "name"], name="unique_team_name_per_task"
            ),
            models.UniqueConstraint(
                fields=["shared_task", "alias"], name="unique_team_alias_per_task"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def public_name(self) -> str:
        return self.alias if self.is_anonymous else self.name


class Membership(models.Model):
    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        MEMBER = "member", "Member"

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    # Denormalized so the database itself keeps a user to one team per shared task.
    shared_task = models.ForeignKey(
        SharedTask, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.MEMBER)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["shared_task", "user"], name="one_team_per_user_per_task"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"


def new_invitation_token() -> str:
    return secrets.token_urlsafe(24)


class Invitation(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True, default=new_invitation_token)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    accepted_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation to {self.team}"


class TaskInvitation(models.Model):
    """A link organizers hand out to let people into a private task.

    Whoever accepts it (signed in) is given a ``TaskAccess``: from then on they see the task
    as everyone sees a public one, so they can found a team or accept a team's invitation.
    """

    shared_task = models.ForeignKey(
        SharedTask, on_delete=models.CASCADE, related_name="task_invitations"
    )
    token = models.CharField(max_length=64, unique=True, default=new_invitation_token)
    note = models.CharField(
        max_length=200, blank=True, help_text="Who the link is for, for the organizers."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    max_uses = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="How many people may accept it; empty for no limit (a link for validators "
        "always has one: 1 unless the organizers give more).",
    )
    grants_validator = models.BooleanField(
        default=False,
        help_text="Whoever accepts it becomes a validator: they label pairs blind, in no team.",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"invitation to {self.shared_task}"


class TaskInvitationUse(models.Model):
    """Who took a use of a task invitation, and when: everyone a link let in, and everyone
    already in whom a link for validators made a validator. A link's uses are counted here,
    and organizers read who joined by which link."""

    invitation = models.ForeignKey(
        TaskInvitation, on_delete=models.CASCADE, related_name="uses_taken"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_invitation_uses"
    )
    used_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["used_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["invitation", "user"], name="one_use_per_user_per_link")
        ]

    def __str__(self) -> str:
        return f"{self.user} used {self.invitation}"


class TaskAccess(models.Model):
    """A user let into a (private) task by a task invitation."""

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="accesses")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_accesses"
    )
    invitation = models.ForeignKey(
        TaskInvitation, on_delete=models.SET_NULL, null=True, related_name="accesses"
    )
    is_validator = models.BooleanField(
        default=False, help_text="Let in as a validator (by a link that grants it)."
    )
    granted_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["granted_at", "id"]
        verbose_name_plural = "task accesses"
        constraints = [
            models.UniqueConstraint(fields=["shared_task", "user"], name="one_access_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} may see {self.shared_task}"
