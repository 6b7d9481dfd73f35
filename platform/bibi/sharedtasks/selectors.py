"""Reads, and the one place that answers "who may see what" for shared tasks."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from bibi.sharedtasks.models import Dataset, Example, Membership, Organizer, SharedTask, Team

User = AbstractBaseUser | AnonymousUser


def is_organizer(*, user: User, shared_task: SharedTask) -> bool:
    if not user.is_authenticated:
        return False
    return Organizer.objects.filter(shared_task=shared_task, user=user).exists()


def membership_get(*, user: User, shared_task: SharedTask) -> Membership | None:
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.select_related("team").filter(shared_task=shared_task, user=user).first()
    )


def shared_task_list(*, user: User) -> QuerySet[SharedTask]:
    """Public tasks for everyone; private ones for their organizers and team members."""
    visible = Q(is_public=True)
    if user.is_authenticated:
        visible |= Q(organizer__user=user) | Q(memberships__user=user)
    return SharedTask.objects.filter(visible).distinct().order_by("-created_at", "id")


def can_view_shared_task(*, user: User, shared_task: SharedTask) -> bool:
    if shared_task.is_public:
        return True
    return (
        is_organizer(user=user, shared_task=shared_task)
        or membership_get(user=user, shared_task=shared_task) is not None
    )


def can_view_examples(*, user: User, dataset: Dataset) -> bool:
    """Training and starter texts go with the task; blind-dev texts only to participants."""
    shared_task = dataset.shared_task
    if not can_view_shared_task(user=user, shared_task=shared_task):
        return False
    if dataset.split != Dataset.Split.BLIND_DEV:
        return True
    return (
        is_organizer(user=user, shared_task=shared_task)
        or membership_get(user=user, shared_task=shared_task) is not None
    )


def can_view_labels(*, user: User, dataset: Dataset) -> bool:
    """Blind-dev labels are the organizers' alone; every other label goes with its text."""
    if dataset.split == Dataset.Split.BLIND_DEV:
        return is_organizer(user=user, shared_task=dataset.shared_task)
    return can_view_examples(user=user, dataset=dataset)


def example_list(*, dataset: Dataset) -> QuerySet[Example]:
    return dataset.examples.order_by("position")


def team_list(*, shared_task: SharedTask) -> QuerySet[Team]:
    return shared_task.teams.order_by("kind", "id")


def is_team_member(*, user: User, team: Team) -> bool:
    if not user.is_authenticated:
        return False
    return Membership.objects.filter(team=team, user=user).exists()


def can_view_team_private(*, user: User, team: Team) -> bool:
    """Member lists, invitations and the real name of an anonymous team."""
    if is_organizer(user=user, shared_task=team.shared_task):
        return True
    return is_team_member(user=user, team=team)


def is_team_owner(*, user: User, team: Team) -> bool:
    if not user.is_authenticated:
        return False
    return Membership.objects.filter(team=team, user=user, role=Membership.Role.OWNER).exists()
