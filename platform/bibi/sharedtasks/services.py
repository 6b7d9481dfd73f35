"""Writes for shared tasks. Every organizer action leaves an audit log entry."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    AuditLogEntry,
    Dataset,
    Invitation,
    Membership,
    Organizer,
    Phase,
    SharedTask,
    Team,
)

INVITATION_LIFETIME = timedelta(days=14)

# Fields an organizer may change after creation; the slug is part of every URL and stays.
SHARED_TASK_EDITABLE_FIELDS = (
    "name",
    "description",
    "is_public",
    "labels",
    "weight_mode",
    "break_rate_mode",
    "pair_min_shared_token_ratio",
    "pair_max_edit_distance",
    "pair_max_edit_ratio",
    "pair_require_rationale",
    "pair_max_text_chars",
    "strategy_tags",
    "guidance_visibility",
    "max_systems_per_team",
    "max_uploads_per_system",
    "max_pair_sets_per_team",
    "max_pairs_per_set",
    "allow_anonymous_teams",
)


def audit_record(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser | None,
    action: str,
    target: str,
    details: dict[str, Any] | None = None,
) -> AuditLogEntry:
    return AuditLogEntry.objects.create(
        shared_task=shared_task, actor=actor, action=action, target=target, details=details or {}
    )


def _require_organizer(*, user: AbstractBaseUser, shared_task: SharedTask) -> None:
    if not selectors.is_organizer(user=user, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task may do that.")


def _json_ready(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


# --- The rules every app asks: is this phase open, is this user in this team --------------


def moment_text(moment: datetime) -> str:
    """How the platform writes a deadline in its messages: server time, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def phase_require_open(
    *, shared_task: SharedTask, kind: str, doing: str, now: datetime | None = None
) -> Phase:
    """The ``kind`` phase of the task, if it is running at ``now`` (default: the server clock).

    Raises ``ValidationError`` saying when ``doing`` (e.g. "submitting pairs") is possible.
    """
    now = now or timezone.now()
    phase = shared_task.phases.filter(kind=kind).first()
    if phase is None:
        raise ValidationError(
            f"This shared task has no {kind} phase, so {doing} is not possible: ask its organizers."
        )
    if now < phase.starts_at:
        raise ValidationError(
            f"The {kind} phase opens at {moment_text(phase.starts_at)}: {doing} is possible from "
            f"then until {moment_text(phase.ends_at)} (server time)."
        )
    if now >= phase.ends_at:
        raise ValidationError(
            f"The {kind} phase closed at {moment_text(phase.ends_at)} (server time): "
            f"{doing} is no longer possible."
        )
    return phase


def phase_require_ended(
    *, shared_task: SharedTask, kind: str, doing: str, now: datetime | None = None
) -> Phase:
    """The ``kind`` phase, if it has ended by ``now``; else ``ValidationError`` saying when."""
    now = now or timezone.now()
    phase = shared_task.phases.filter(kind=kind).first()
    if phase is None:
        raise ValidationError(
            f"{doing[:1].upper()}{doing[1:]} waits for the end of the {kind} phase, and this "
            "shared task has none yet."
        )
    if now < phase.ends_at:
        raise ValidationError(
            f"{doing[:1].upper()}{doing[1:]} is possible once the {kind} phase has closed, at "
            f"{moment_text(phase.ends_at)} (server time)."
        )
    return phase


def team_member_require(
    *, user: AbstractBaseUser, team: Team, kind: str | None = None, doing: str
) -> None:
    """Raises ``PermissionDenied`` unless ``user`` is in ``team`` (of ``kind``, if given)."""
    if kind is not None and team.kind != kind:
        raise PermissionDenied(f"Only {kind} teams may do that: {doing}.")
    if not selectors.is_team_member(user=user, team=team):
        raise PermissionDenied(f"Only the members of the team may do that: {doing}.")


@transaction.atomic
def shared_task_create(
    *, creator: AbstractBaseUser, name: str, slug: str, **fields: Any
) -> SharedTask:
    """Create a shared task; its creator becomes its first organizer."""
    unknown = set(fields) - set(SHARED_TASK_EDITABLE_FIELDS) - {"task_type"}
    if unknown:
        raise ValidationError(f"Unknown shared task fields: {', '.join(sorted(unknown))}")
    if SharedTask.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": f"A shared task with the slug '{slug}' already exists."})
    shared_task = SharedTask(name=name, slug=slug, **fields)
    shared_task.full_clean()
    shared_task.save()
    Organizer.objects.create(shared_task=shared_task, user=creator)
    audit_record(
        shared_task=shared_task,
        actor=creator,
        action="shared_task.create",
        target=f"shared_task:{slug}",
    )
    return shared_task


@transaction.atomic
def shared_task_update(
    *, shared_task: SharedTask, actor: AbstractBaseUser, **changes: Any
) -> SharedTask:
    _require_organizer(user=actor, shared_task=shared_task)
    unknown = set(changes) - set(SHARED_TASK_EDITABLE_FIELDS)
    if unknown:
        raise ValidationError(f"These fields cannot be changed: {', '.join(sorted(unknown))}")
    if (
        "labels" in changes
        and changes["labels"] != shared_task.labels
        and shared_task.datasets.filter(examples__isnull=False).exists()
    ):
        raise ValidationError(
            {"labels": "The label set cannot change once examples have been imported."}
        )
    before = {field: getattr(shared_task, field) for field in changes}
    for field, value in changes.items():
        setattr(shared_task, field, value)
    shared_task.full_clean()
    shared_task.save()
    changed = {f: {"from": before[f], "to": changes[f]} for f in changes if before[f] != changes[f]}
    if changed:
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action="shared_task.update",
            target=f"shared_task:{shared_task.slug}",
            details=changed,
        )
    return shared_task


@transaction.atomic
def organizer_add(
    *, shared_task: SharedTask, actor: AbstractBaseUser, user: AbstractBaseUser
) -> Organizer:
    _require_organizer(user=actor, shared_task=shared_task)
    if Membership.objects.filter(shared_task=shared_task, user=user).exists():
        raise ValidationError("A member of a team in this shared task cannot also organize it.")
    organizer, created = Organizer.objects.get_or_create(shared_task=shared_task, user=user)
    if created:
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action="organizer.add",
            target=f"user:{user.get_username()}",
        )
    return organizer


@dataclass(frozen=True)
class PhasePlan:
    kind: str
    starts_at: datetime
    ends_at: datetime


def phase_plan_check(*, plan: list[PhasePlan], kind: str) -> None:
    """Does phase ``kind`` of ``plan`` end after it starts, overlap none and keep the order
    build, break, contest, results? Raises ValidationError saying which rule it breaks."""
    target = next(phase for phase in plan if phase.kind == kind)
    if target.ends_at <= target.starts_at:
        raise ValidationError({"ends_at": "A phase must end after it starts."})
    others = sorted(
        (phase for phase in plan if phase.kind != kind), key=lambda phase: phase.starts_at
    )
    for other in others:
        if other.starts_at < target.ends_at and other.ends_at > target.starts_at:
            raise ValidationError(
                f"The {kind} phase would overlap the {other.kind} phase "
                f"({other.starts_at.isoformat()} to {other.ends_at.isoformat()})."
            )
    order = Phase.Kind.values
    for other in others:
        if order.index(other.kind) < order.index(kind) and other.starts_at > target.starts_at:
            raise ValidationError(f"The {kind} phase must come after the {other.kind} phase.")
        if order.index(other.kind) > order.index(kind) and other.starts_at < target.starts_at:
            raise ValidationError(f"The {kind} phase must come before the {other.kind} phase.")


def _check_phase_fits(
    *,
    shared_task: SharedTask,
    kind: str,
    starts_at: datetime,
    ends_at: datetime,
    exclude_id: int | None,
) -> None:
    others = shared_task.phases.exclude(id=exclude_id)
    plan = [PhasePlan(p.kind, p.starts_at, p.ends_at) for p in others]
    phase_plan_check(plan=[*plan, PhasePlan(kind, starts_at, ends_at)], kind=kind)


@transaction.atomic
def phase_create(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    kind: str,
    starts_at: datetime,
    ends_at: datetime,
) -> Phase:
    _require_organizer(user=actor, shared_task=shared_task)
    if kind not in Phase.Kind.values:
        raise ValidationError(
            {"kind": f"'{kind}' is not a phase: use one of {', '.join(Phase.Kind.values)}."}
        )
    if shared_task.phases.filter(kind=kind).exists():
        raise ValidationError({"kind": f"This shared task already has a {kind} phase."})
    _check_phase_fits(
        shared_task=shared_task, kind=kind, starts_at=starts_at, ends_at=ends_at, exclude_id=None
    )
    phase = Phase.objects.create(
        shared_task=shared_task, kind=kind, starts_at=starts_at, ends_at=ends_at
    )
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="phase.create",
        target=f"phase:{kind}",
        details={"starts_at": starts_at.isoformat(), "ends_at": ends_at.isoformat()},
    )
    return phase


@transaction.atomic
def phase_update(
    *, phase: Phase, actor: AbstractBaseUser, starts_at: datetime, ends_at: datetime
) -> Phase:
    """Move a phase. Changing an end that has already passed is refused: use an extension."""
    shared_task = phase.shared_task
    _require_organizer(user=actor, shared_task=shared_task)
    _check_phase_fits(
        shared_task=shared_task,
        kind=phase.kind,
        starts_at=starts_at,
        ends_at=ends_at,
        exclude_id=phase.id,
    )
    before = {"starts_at": phase.starts_at.isoformat(), "ends_at": phase.ends_at.isoformat()}
    phase.starts_at, phase.ends_at = starts_at, ends_at
    phase.save(update_fields=["starts_at", "ends_at"])
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="phase.update",
        target=f"phase:{phase.kind}",
        details={
            "from": before,
            "to": {"starts_at": starts_at.isoformat(), "ends_at": ends_at.isoformat()},
        },
    )
    return phase


@transaction.atomic
def phase_extend(
    *, phase: Phase, actor: AbstractBaseUser, ends_at: datetime, reason: str = ""
) -> Phase:
    """Push a phase's deadline later (never earlier), and record who did it and why."""
    shared_task = phase.shared_task
    _require_organizer(user=actor, shared_task=shared_task)
    if ends_at <= phase.ends_at:
        raise ValidationError(
            {
                "ends_at": f"An extension must end after the current deadline, {phase.ends_at.isoformat()}."
            }
        )
    _check_phase_fits(
        shared_task=shared_task,
        kind=phase.kind,
        starts_at=phase.starts_at,
        ends_at=ends_at,
        exclude_id=phase.id,
    )
    previous = phase.ends_at
    phase.ends_at = ends_at
    phase.save(update_fields=["ends_at"])
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="phase.extend",
        target=f"phase:{phase.kind}",
        details={"from": previous.isoformat(), "to": ends_at.isoformat(), "reason": reason},
    )
    return phase


def dataset_get_or_create(*, shared_task: SharedTask, split: str) -> Dataset:
    if split not in Dataset.Split.values:
        raise ValidationError(
            {"split": f"'{split}' is not a split: use one of {', '.join(Dataset.Split.values)}."}
        )
    dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
    return dataset


def _new_alias(*, shared_task: SharedTask, kind: str) -> str:
    while True:
        alias = f"Anonymous {kind} {secrets.token_hex(3)}"
        if not shared_task.teams.filter(alias=alias).exists():
            return alias


def _check_can_join(*, shared_task: SharedTask, user: AbstractBaseUser) -> None:
    if selectors.is_organizer(user=user, shared_task=shared_task):
        raise ValidationError("Organizers of a shared task cannot join one of its teams.")
    current = selectors.membership_get(user=user, shared_task=shared_task)
    if current is not None:
        raise ValidationError(
            f"You are already in the team '{current.team.name}' of this shared task."
        )


@transaction.atomic
def team_create(
    *,
    shared_task: SharedTask,
    owner: AbstractBaseUser,
    kind: str,
    name: str,
    is_anonymous: bool = False,
) -> Team:
    """Create a team with ``owner`` as its first member. A user is in one team per task."""
    if kind not in Team.Kind.values:
        raise ValidationError({"kind": f"'{kind}' is not a team kind: use builder or breaker."})
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A team needs a name."})
    if is_anonymous and not shared_task.allow_anonymous_teams:
        raise ValidationError(
            {"is_anonymous": "This shared task does not allow anonymous team names."}
        )
    _check_can_join(shared_task=shared_task, user=owner)
    if shared_task.teams.filter(name__iexact=name).exists():
        raise ValidationError(
            {"name": f"A team named '{name}' already exists in this shared task."}
        )
    team = Team.objects.create(
        shared_task=shared_task,
        kind=kind,
        name=name,
        is_anonymous=is_anonymous,
        alias=_new_alias(shared_task=shared_task, kind=kind),
    )
    Membership.objects.create(
        team=team, user=owner, shared_task=shared_task, role=Membership.Role.OWNER
    )
    return team


@transaction.atomic
def team_update(
    *,
    team: Team,
    actor: AbstractBaseUser,
    name: str | None = None,
    is_anonymous: bool | None = None,
) -> Team:
    if not selectors.is_team_owner(user=actor, team=team):
        raise PermissionDenied("Only the team's owners may change it.")
    if name is not None:
        name = name.strip()
        if not name:
            raise ValidationError({"name": "A team needs a name."})
        if team.shared_task.teams.filter(name__iexact=name).exclude(id=team.id).exists():
            raise ValidationError(
                {"name": f"A team named '{name}' already exists in this shared task."}
            )
        team.name = name
    if is_anonymous is not None:
        if is_anonymous and not team.shared_task.allow_anonymous_teams:
            raise ValidationError(
                {"is_anonymous": "This shared task does not allow anonymous team names."}
            )
        team.is_anonymous = is_anonymous
    team.save()
    return team


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
    _check_can_join(shared_task=team.shared_task, user=user)
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
