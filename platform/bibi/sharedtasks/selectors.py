"""Reads, and the one place that answers "who may see what" for shared tasks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet
from django.utils import timezone

from bibi.sharedtasks.models import (
    AuditLogEntry,
    Dataset,
    Example,
    Invitation,
    Membership,
    Organizer,
    Phase,
    SharedTask,
    TaskAccess,
    TaskInvitation,
    TaskInvitationUse,
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


def is_invited_validator(*, user: User, shared_task: SharedTask) -> bool:
    """Was ``user`` let into the task by a link that grants the validator role?"""
    if not user.is_authenticated:
        return False
    return TaskAccess.objects.filter(shared_task=shared_task, user=user, is_validator=True).exists()


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
    """The task's links, newest first, each with ``uses`` (people who took a use of it) and
    ``uses_taken`` (who, oldest first) prefetched."""
    return (
        shared_task.task_invitations.select_related("created_by")
        .annotate(uses=Count("uses_taken"))
        .prefetch_related(
            Prefetch(
                "uses_taken",
                queryset=TaskInvitationUse.objects.select_related("user").order_by("used_at", "id"),
            )
        )
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


# --- What the pages read: a task's schedule, its counts, and who is looking ---------------
# The schedule functions read ``shared_task.phases.all()``, so a list of tasks fetched with
# ``prefetch_related("phases")`` is placed on its timeline without a query per task.

TASK_UPCOMING, TASK_OPEN, TASK_FINISHED = "upcoming", "open", "finished"
# A task with no phase at all has no date to be upcoming for: it is not scheduled yet.
TASK_UNSCHEDULED = "unscheduled"


def shared_task_state(*, shared_task: SharedTask, now: datetime | None = None) -> str:
    """``unscheduled`` while it has no phase, ``upcoming`` until its first phase starts,
    ``finished`` once its results phase has started or every phase has ended, ``open`` in
    between."""
    now = now or timezone.now()
    phases = list(shared_task.phases.all())
    if not phases:
        return TASK_UNSCHEDULED
    if all(phase.starts_at > now for phase in phases):
        return TASK_UPCOMING
    results_started = any(
        phase.kind == Phase.Kind.RESULTS and phase.starts_at <= now for phase in phases
    )
    if results_started or all(phase.ends_at <= now for phase in phases):
        return TASK_FINISHED
    return TASK_OPEN


def shared_tasks_by_state(
    *, user: User, now: datetime | None = None
) -> dict[str, list[SharedTask]]:
    """The tasks ``user`` may see, as ``{"open": [...], "upcoming": [...], "finished": [...],
    "unscheduled": [...]}`` (``shared_task_state``)."""
    now = now or timezone.now()
    grouped: dict[str, list[SharedTask]] = {
        TASK_OPEN: [],
        TASK_UPCOMING: [],
        TASK_FINISHED: [],
        TASK_UNSCHEDULED: [],
    }
    for shared_task in shared_task_list(user=user).prefetch_related("phases"):
        grouped[shared_task_state(shared_task=shared_task, now=now)].append(shared_task)
    return grouped


@dataclass(frozen=True)
class PhaseOnTimeline:
    phase: Phase
    state: str  # "past", "current" or "future"


@dataclass(frozen=True)
class PhaseMoment:
    """The next thing the clock does to a task: a phase opens or closes ``at``."""

    phase: Phase
    event: str  # "opens" or "closes"
    at: datetime


def phase_timeline(
    *, shared_task: SharedTask, now: datetime | None = None
) -> list[PhaseOnTimeline]:
    now = now or timezone.now()
    timeline = []
    for phase in sorted(shared_task.phases.all(), key=lambda phase: phase.starts_at):
        if phase.ends_at <= now:
            state = "past"
        elif phase.starts_at <= now:
            state = "current"
        else:
            state = "future"
        timeline.append(PhaseOnTimeline(phase=phase, state=state))
    return timeline


def phase_next_moment(
    *, shared_task: SharedTask, now: datetime | None = None
) -> PhaseMoment | None:
    """The soonest phase start or end after ``now``; None once the last phase has ended."""
    now = now or timezone.now()
    moments = [
        PhaseMoment(phase=phase, event=event, at=at)
        for phase in shared_task.phases.all()
        for event, at in (("opens", phase.starts_at), ("closes", phase.ends_at))
        if at > now
    ]
    return min(moments, key=lambda moment: moment.at, default=None)


def team_counts(*, shared_task: SharedTask) -> dict[str, int]:
    """How many teams of each kind, e.g. ``{"builder": 3, "breaker": 10}``."""
    counts = dict.fromkeys(Team.Kind.values, 0)
    rows = shared_task.teams.values("kind").annotate(count=Count("id")).order_by()
    counts.update({row["kind"]: row["count"] for row in rows})
    return counts


def dataset_list(*, shared_task: SharedTask) -> QuerySet[Dataset]:
    """The task's datasets, each with ``example_count``."""
    return shared_task.datasets.annotate(example_count=Count("examples")).order_by("split")


def team_list_with_members(*, shared_task: SharedTask) -> QuerySet[Team]:
    """Every team with its memberships and their users, in two more queries whatever the size."""
    memberships = Membership.objects.select_related("user").order_by("joined_at", "id")
    return team_list(shared_task=shared_task).prefetch_related(
        Prefetch("memberships", queryset=memberships)
    )


def team_members(*, team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("joined_at", "id")


def invitation_open_list(*, team: Team, now: datetime | None = None) -> QuerySet[Invitation]:
    """Invitations that can still be accepted: not used, not revoked, not expired."""
    now = now or timezone.now()
    return team.invitations.filter(
        accepted_at__isnull=True, revoked_at__isnull=True, expires_at__gt=now
    ).order_by("-created_at")


def audit_log_list(
    *, shared_task: SharedTask, action: str | None = None
) -> QuerySet[AuditLogEntry]:
    entries = shared_task.audit_log.select_related("actor")
    return entries.filter(action=action) if action else entries


@dataclass(frozen=True)
class Viewer:
    """Who is looking at a task, found once, so a page answers the visibility questions of
    every row it shows without a query per row. The rules are ``can_view_team_private``'s."""

    user: User
    is_organizer: bool
    membership: Membership | None

    @property
    def team(self) -> Team | None:
        return self.membership.team if self.membership else None

    def sees_team_private(self, team: Team) -> bool:
        return self.is_organizer or (
            self.membership is not None and self.membership.team_id == team.id
        )

    @property
    def datasets(self) -> DatasetSight:
        """What the viewer sees of the task's datasets; a viewer is made for a task the
        page has found visible to them (``bibi.sharedtasks.apis.common.shared_task_for``)."""
        return DatasetSight(
            task_visible=True, organizer=self.is_organizer, participant=self.membership is not None
        )

    def team_name(self, team: Team) -> str:
        """The real name to the team and the organizers; the alias of an anonymous team to others."""
        return team.name if self.sees_team_private(team) else team.public_name


def viewer_get(*, user: User, shared_task: SharedTask) -> Viewer:
    return Viewer(
        user=user,
        is_organizer=is_organizer(user=user, shared_task=shared_task),
        membership=membership_get(user=user, shared_task=shared_task),
    )


def example_get(*, shared_task: SharedTask, split: str, external_id: str) -> Example | None:
    """One example of the task's ``split`` dataset by its id in the imported file."""
    return Example.objects.filter(
        dataset__shared_task=shared_task, dataset__split=split, external_id=external_id
    ).first()
