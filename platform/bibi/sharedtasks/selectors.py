"""Reads, and the one place that answers "who may see what" for shared tasks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from bibi.sharedtasks.models import (
    Dataset,
    Example,
    Membership,
    Organizer,
    Phase,
    SharedTask,
    TaskAccess,
    TaskInvitation,
    Team,
)

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


def has_access(*, user: User, shared_task: SharedTask) -> bool:
    """Was ``user`` let into the task by a task invitation?"""
    if not user.is_authenticated:
        return False
    return TaskAccess.objects.filter(shared_task=shared_task, user=user).exists()


def shared_task_list(*, user: User) -> QuerySet[SharedTask]:
    """Public tasks for everyone; private ones for their organizers, their team members and
    the people a task invitation let in."""
    visible = Q(is_public=True)
    if user.is_authenticated:
        tasks = SharedTask.objects.filter(
            Q(organizer__user=user) | Q(memberships__user=user) | Q(accesses__user=user)
        )
        visible |= Q(id__in=tasks.values("id"))
    return SharedTask.objects.filter(visible).order_by("-created_at", "id")


def can_view_shared_task(*, user: User, shared_task: SharedTask) -> bool:
    if shared_task.is_public:
        return True
    return (
        is_organizer(user=user, shared_task=shared_task)
        or membership_get(user=user, shared_task=shared_task) is not None
        or has_access(user=user, shared_task=shared_task)
    )


def roles_of(*, user: User) -> dict[int, str]:
    """``user``'s role in every task they have one in, by task id: "organizer", or the kind
    of their team ("builder", "breaker"). Two queries, for a whole list of tasks."""
    if not user.is_authenticated:
        return {}
    roles = {
        task_id: team_kind
        for task_id, team_kind in Membership.objects.filter(user=user).values_list(
            "shared_task_id", "team__kind"
        )
    }
    for task_id in Organizer.objects.filter(user=user).values_list("shared_task_id", flat=True):
        roles[task_id] = "organizer"
    return roles


def task_invitation_list(*, shared_task: SharedTask) -> QuerySet[TaskInvitation]:
    return (
        shared_task.task_invitations.select_related("created_by")
        .annotate(uses=Count("accesses"))
        .order_by("-created_at", "-id")
    )


@dataclass(frozen=True)
class DatasetSight:
    """What one user may see of a task's datasets, found once for all its splits."""

    task_visible: bool
    organizer: bool
    participant: bool

    @classmethod
    def of(cls, *, user: User, shared_task: SharedTask) -> DatasetSight:
        return cls(
            task_visible=can_view_shared_task(user=user, shared_task=shared_task),
            organizer=is_organizer(user=user, shared_task=shared_task),
            participant=membership_get(user=user, shared_task=shared_task) is not None,
        )

    def examples(self, split: str) -> bool:
        """Training and starter texts go with the task; blind-dev texts only to participants."""
        if not self.task_visible:
            return False
        return split != Dataset.Split.BLIND_DEV or self.organizer or self.participant

    def labels(self, split: str) -> bool:
        """Blind-dev labels are the organizers' alone; every other label goes with its text."""
        if split == Dataset.Split.BLIND_DEV:
            return self.organizer
        return self.examples(split)


def can_view_examples(*, user: User, dataset: Dataset) -> bool:
    return DatasetSight.of(user=user, shared_task=dataset.shared_task).examples(dataset.split)


def can_view_labels(*, user: User, dataset: Dataset) -> bool:
    return DatasetSight.of(user=user, shared_task=dataset.shared_task).labels(dataset.split)


# Systems are validated on these, and breakers edit the starter originals: once breaking
# starts, a change would leave validated systems and submitted pairs describing another set.
FROZEN_SPLITS = (Dataset.Split.BLIND_DEV, Dataset.Split.STARTER)


def split_frozen_since(
    *, shared_task: SharedTask, split: str, now: datetime | None = None
) -> datetime | None:
    """When the ``split`` dataset stopped accepting examples (the start of the break phase),
    or None while it may still change. Training data never freezes."""
    if split not in FROZEN_SPLITS:
        return None
    phase = shared_task.phases.filter(kind=Phase.Kind.BREAK).first()
    if phase is None or phase.starts_at > (now or timezone.now()):
        return None
    return phase.starts_at


def example_list(*, dataset: Dataset) -> QuerySet[Example]:
    return dataset.examples.order_by("position")


def team_list(*, shared_task: SharedTask) -> QuerySet[Team]:
    """The task's teams, each with ``member_count``."""
    return shared_task.teams.annotate(member_count=Count("memberships")).order_by("kind", "id")


def is_team_member(*, user: User, team: Team) -> bool:
    if not user.is_authenticated:
        return False
    return Membership.objects.filter(team=team, user=user).exists()


def private_team_ids(*, user: User, shared_task: SharedTask) -> frozenset[int] | None:
    """The teams of ``shared_task`` whose private side ``user`` sees: None for every team
    (an organizer), else the user's own. A list asks once, not once per row."""
    if is_organizer(user=user, shared_task=shared_task):
        return None
    if not user.is_authenticated:
        return frozenset()
    return frozenset(
        Membership.objects.filter(shared_task=shared_task, user=user).values_list(
            "team_id", flat=True
        )
    )


def can_view_team_private(*, user: User, team: Team) -> bool:
    """Member lists, invitations and the real name of an anonymous team."""
    visible = private_team_ids(user=user, shared_task=team.shared_task)
    return visible is None or team.id in visible


def is_team_owner(*, user: User, team: Team) -> bool:
    if not user.is_authenticated:
        return False
    return Membership.objects.filter(team=team, user=user, role=Membership.Role.OWNER).exists()
