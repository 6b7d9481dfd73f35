"""Who may do what: the checks every app asks before it writes (organizers, team members,
who may join a team)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    SharedTask,
    Team,
)


def organizer_require(*, user: AbstractBaseUser, shared_task: SharedTask, doing: str) -> None:
    """Raises ``PermissionDenied`` unless ``user`` organizes ``shared_task``."""
    if not selectors.is_organizer(user=user, shared_task=shared_task):
        raise PermissionDenied(f"Only the organizers of this shared task may do {doing}.")


def team_member_require(
    *, user: AbstractBaseUser, team: Team, kind: str | None = None, doing: str
) -> None:
    """Raises ``PermissionDenied`` unless ``user`` is in ``team`` (of ``kind``, if given)."""
    if kind is not None and team.kind != kind:
        raise PermissionDenied(f"Only {kind} teams may do that: {doing}.")
    if not selectors.is_team_member(user=user, team=team):
        raise PermissionDenied(f"Only the members of the team may do that: {doing}.")


def join_require_allowed(*, shared_task: SharedTask, user: AbstractBaseUser) -> None:
    """Raises ``ValidationError`` if ``user`` may not join a team of ``shared_task``: organizers
    join none, and a user is in one team per task."""
    if selectors.is_organizer(user=user, shared_task=shared_task):
        raise ValidationError("Organizers of a shared task cannot join one of its teams.")
    current = selectors.membership_get(user=user, shared_task=shared_task)
    if current is not None:
        raise ValidationError(
            f"You are already in the team '{current.team.name}' of this shared task."
        )
