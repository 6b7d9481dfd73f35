"""Writes for shared tasks. Every organizer action leaves an audit log entry."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
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
    TaskAccess,
    TaskInvitation,
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
    "guidance_shows_systems",
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
    organizer_require(user=user, shared_task=shared_task, doing="that")


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


def phase_require_movable(
    *,
    phase: Phase,
    starts_at: datetime,
    ends_at: datetime,
    now: datetime | None = None,
) -> None:
    """May ``phase`` (as stored) move to ``starts_at``-``ends_at``? Raises ValidationError if not.

    What happened stays as it happened: a start or an end that has passed never changes,
    and no start or end moves to a moment already past. So a deadline cannot be moved
    around submissions already made (a team's entry is its last set before the break
    deadline; the datasets freeze at the break start). A running phase may still end
    earlier or later, as long as its new end is still to come.
    """
    now = now or timezone.now()
    kind = phase.kind
    if starts_at != phase.starts_at:
        if phase.starts_at <= now:
            raise ValidationError(
                {
                    "starts_at": f"The {kind} phase started at {moment_text(phase.starts_at)}; "
                    "its start can no longer change."
                }
            )
        if starts_at < now:
            raise ValidationError(
                {
                    "starts_at": f"{moment_text(starts_at)} has already passed: a phase cannot "
                    "start in the past. Give a moment still to come."
                }
            )
    if ends_at != phase.ends_at:
        if phase.ends_at <= now:
            raise ValidationError(
                {
                    "ends_at": f"The {kind} phase ended at {moment_text(phase.ends_at)}; its "
                    "end can no longer change. Extend a phase while it runs."
                }
            )
        if ends_at < now:
            raise ValidationError(
                {
                    "ends_at": f"{moment_text(ends_at)} has already passed: a phase cannot be "
                    "closed retroactively. Give a moment still to come."
                }
            )


def phase_require_deletable(*, phase: Phase, now: datetime | None = None) -> None:
    """A phase that has started is part of what happened: raises ValidationError."""
    if phase.starts_at <= (now or timezone.now()):
        raise ValidationError(
            f"The {phase.kind} phase started at {moment_text(phase.starts_at)}; it can no "
            "longer be deleted."
        )


@transaction.atomic
def phase_update(
    *, phase: Phase, actor: AbstractBaseUser, starts_at: datetime, ends_at: datetime
) -> Phase:
    """Move a phase: only what has not happened yet (``phase_require_movable``)."""
    shared_task = phase.shared_task
    _require_organizer(user=actor, shared_task=shared_task)
    phase_require_movable(phase=phase, starts_at=starts_at, ends_at=ends_at)
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
def phase_close_now(*, phase: Phase, actor: AbstractBaseUser) -> Phase | None:
    """End the running ``phase`` now and start the next phase at the same moment.

    What an organizer does when every team is done early. The next phase (in the order
    build, break, contest, results) keeps its end; one that has not started starts now.
    Returns the next phase, or None when ``phase`` is the last. Raises ValidationError
    unless ``phase`` is running. Both moves are audited as ``phase.close_now``.
    """
    shared_task = phase.shared_task
    _require_organizer(user=actor, shared_task=shared_task)
    now = timezone.now()
    if not phase.is_open(now):
        raise ValidationError(
            f"Only a running phase can be closed now; the {phase.kind} phase runs from "
            f"{moment_text(phase.starts_at)} to {moment_text(phase.ends_at)}."
        )
    later = [p for p in shared_task.phases.order_by("starts_at") if p.starts_at >= phase.ends_at]
    following = later[0] if later else None
    before = {"ends_at": phase.ends_at.isoformat()}
    phase_require_movable(phase=phase, starts_at=phase.starts_at, ends_at=now, now=now)
    phase.ends_at = now
    phase.save(update_fields=["ends_at"])
    details: dict[str, Any] = {"from": before, "to": {"ends_at": now.isoformat()}}
    if following is not None:
        phase_require_movable(phase=following, starts_at=now, ends_at=following.ends_at, now=now)
        details["opened"] = {"kind": following.kind, "from": following.starts_at.isoformat()}
        following.starts_at = now
        following.save(update_fields=["starts_at"])
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="phase.close_now",
        target=f"phase:{phase.kind}",
        details=details,
    )
    return following


@transaction.atomic
def phase_extend(
    *, phase: Phase, actor: AbstractBaseUser, ends_at: datetime, reason: str = ""
) -> Phase:
    """Push the deadline of a phase that has not ended later (never earlier), and record
    who did it and why."""
    shared_task = phase.shared_task
    _require_organizer(user=actor, shared_task=shared_task)
    phase_require_movable(phase=phase, starts_at=phase.starts_at, ends_at=ends_at)
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


def dataset_require_unfrozen(
    *, shared_task: SharedTask, split: str, now: datetime | None = None
) -> None:
    """Raises ``ValidationError`` (on ``split``) if the split is frozen: the blind dev and
    starter sets take no example once the break phase has started (see
    ``selectors.split_frozen_since``)."""
    since = selectors.split_frozen_since(shared_task=shared_task, split=split, now=now)
    if since is None:
        return
    name = split.replace("_", " ")
    raise ValidationError(
        {
            "split": f"The {name} set is frozen: the break phase started at "
            f"{moment_text(since)}, and from then on the blind dev and starter sets never "
            "change (systems were validated on them, breakers edit them). Training data can "
            "still be imported."
        }
    )


def dataset_get_or_create(*, shared_task: SharedTask, split: str) -> Dataset:
    if split not in Dataset.Split.values:
        raise ValidationError(
            {"split": f"'{split}' is not a split: use one of {', '.join(Dataset.Split.values)}."}
        )
    dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
    return dataset


def team_alias_new(
    *, shared_task: SharedTask, kind: str, token: Callable[[], str] = lambda: secrets.token_hex(3)
) -> str:
    """An alias no team of the task has as its alias or, ignoring case, as its name: an
    anonymous team must not pass for another (``token`` draws the random part)."""
    while True:
        alias = f"Anonymous {kind} {token()}"
        if not shared_task.teams.filter(Q(alias__iexact=alias) | Q(name__iexact=alias)).exists():
            return alias


def _require_free_team_name(
    *, shared_task: SharedTask, name: str, team: Team | None = None
) -> None:
    """A team's name is unique in its task, and is never another team's alias (ignoring case),
    or the named team would pass for the anonymous one."""
    others = shared_task.teams.exclude(id=team.id) if team is not None else shared_task.teams
    clash = others.filter(Q(name__iexact=name) | Q(alias__iexact=name)).first()
    if clash is None:
        return
    if clash.name.lower() == name.lower():
        raise ValidationError(
            {"name": f"A team named '{name}' already exists in this shared task."}
        )
    raise ValidationError(
        {
            "name": f"'{name}' is reserved: it is another team's anonymous alias in this "
            "shared task. Choose another name."
        }
    )


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
    _require_free_team_name(shared_task=shared_task, name=name)
    team = Team.objects.create(
        shared_task=shared_task,
        kind=kind,
        name=name,
        is_anonymous=is_anonymous,
        alias=team_alias_new(shared_task=shared_task, kind=kind),
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
        _require_free_team_name(shared_task=team.shared_task, name=name, team=team)
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


# --- Letting people into a private task ----------------------------------------------------


@transaction.atomic
def task_invitation_create(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    expires_at: datetime | None = None,
    max_uses: int | None = None,
    note: str = "",
) -> TaskInvitation:
    """An organizer's link into the task: valid until ``expires_at`` (default: in 14 days),
    for ``max_uses`` people (None: any number), until revoked."""
    _require_organizer(user=actor, shared_task=shared_task)
    now = timezone.now()
    expires_at = expires_at or now + INVITATION_LIFETIME
    if expires_at <= now:
        raise ValidationError(
            {"expires_at": f"{moment_text(expires_at)} has passed: give a moment still to come."}
        )
    if max_uses is not None and max_uses < 1:
        raise ValidationError({"max_uses": "Give at least 1, or nothing for no limit."})
    invitation = TaskInvitation.objects.create(
        shared_task=shared_task,
        created_by=actor,
        expires_at=expires_at,
        max_uses=max_uses,
        note=note.strip(),
    )
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="task_invitation.create",
        target=f"task_invitation:{invitation.id}",
        details={"expires_at": expires_at.isoformat(), "max_uses": max_uses, "note": note},
    )
    return invitation


@transaction.atomic
def task_invitation_revoke(
    *, invitation: TaskInvitation, actor: AbstractBaseUser
) -> TaskInvitation:
    """Nobody else gets in with this link; whoever it let in keeps their access."""
    _require_organizer(user=actor, shared_task=invitation.shared_task)
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
    someone already let in keeps their access and uses up nothing."""
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
    if existing is not None:
        return existing, False
    if invitation.revoked_at is not None:
        raise ValidationError({"token": "This invitation was revoked by the organizers."})
    if invitation.expires_at <= timezone.now():
        raise ValidationError(
            {"token": "This invitation has expired. Ask the organizers for a new link."}
        )
    if invitation.max_uses is not None and invitation.accesses.count() >= invitation.max_uses:
        raise ValidationError(
            {"token": "This invitation has been used as often as it may be. Ask the organizers."}
        )
    try:
        with transaction.atomic():
            access = TaskAccess.objects.create(
                shared_task=shared_task, user=user, invitation=invitation
            )
    except IntegrityError:
        # Let in a moment ago through another link.
        return TaskAccess.objects.get(shared_task=shared_task, user=user), False
    audit_record(
        shared_task=shared_task,
        actor=user,
        action="task_invitation.accept",
        target=f"task_invitation:{invitation.id}",
        details={"user": user.get_username()},
    )
    return access, True
