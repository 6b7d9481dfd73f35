"""Phases: is one open, and creating, moving, extending and closing them (what has happened
stays)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from bibi.sharedtasks import signals
from bibi.sharedtasks.models import (
    Phase,
    SharedTask,
)
from bibi.sharedtasks.services.access import organizer_require
from bibi.sharedtasks.services.audit import audit_record
from bibi.texts import moment_text


def phase_require_open(
    *, shared_task: SharedTask, kind: str, doing: str, now: datetime | None = None
) -> Phase:
    """The ``kind`` phase of the task, if it is running at ``now`` (default: the server clock).

    Raises ``ValidationError`` saying when ``doing`` (e.g. "submitting pairs") is possible.
    """
    now = now or timezone.now()
    phase = shared_task.phase_of(kind)
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
    phase = shared_task.phase_of(kind)
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
    organizer_require(user=actor, shared_task=shared_task, doing="that")
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
    organizer_require(user=actor, shared_task=shared_task, doing="that")
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
def phase_close_now(
    *, phase: Phase, actor: AbstractBaseUser, confirm: bool = False
) -> Phase | None:
    """End the running ``phase`` now and start the next phase at the same moment.

    What an organizer does when every team is done early. The next phase (in the order
    build, break, contest, results) keeps its end; one that has not started starts now.
    Returns the next phase, or None when ``phase`` is the last. Raises ValidationError
    unless ``phase`` is running. Both moves are audited as ``phase.close_now``.

    Starting the results phase ends label validation for good: while pairs still wait for
    votes (``evaluation.triggers.validation_end_warning``), that is refused, with the
    counts by team, unless ``confirm``; the audit keeps the warning confirmed.
    """
    shared_task = phase.shared_task
    organizer_require(user=actor, shared_task=shared_task, doing="that")
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
    warning = None
    if following is not None and following.kind == Phase.Kind.RESULTS:
        # Evaluation answers (sharedtasks.signals): it imports these services, not they it.
        warning = signals.first_warning(
            shared_task=shared_task, doing=f"closing the {phase.kind} phase now"
        )
        if warning is not None and not confirm:
            raise ValidationError(warning, code="confirm")
    phase.ends_at = now
    phase.save(update_fields=["ends_at"])
    details: dict[str, Any] = {"from": before, "to": {"ends_at": now.isoformat()}}
    if warning is not None:
        details["validation_ended"] = warning
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
    organizer_require(user=actor, shared_task=shared_task, doing="that")
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


# --- Many phases at once: the admin's form edits them all together -------------------------


@dataclass(frozen=True)
class PhaseChange:
    """One change in a set of phases: ``phase`` is the stored phase (None: a new one);
    ``delete`` removes it; else it becomes ``kind``, ``starts_at`` to ``ends_at``."""

    phase: Phase | None
    kind: str
    starts_at: datetime
    ends_at: datetime
    delete: bool = False


def phases_change_check(
    *, shared_task: SharedTask, changes: list[PhaseChange], now: datetime | None = None
) -> None:
    """May ``changes`` be made together? The rules of ``phase_update`` and ``phase_create``
    over the whole plan: what has happened stays (``phase_require_movable``, a started phase
    is never deleted or turned into another kind), at most one phase of each kind, in order,
    none overlapping. Raises ValidationError saying which rule a change breaks."""
    now = now or timezone.now()
    for change in changes:
        old = change.phase
        if old is None:
            continue
        if change.delete or change.kind != old.kind:
            phase_require_deletable(phase=old, now=now)
        else:
            phase_require_movable(
                phase=old, starts_at=change.starts_at, ends_at=change.ends_at, now=now
            )
    touched = {change.phase.id for change in changes if change.phase is not None}
    stored = list(shared_task.phases.exclude(id__in=touched)) if shared_task.pk else []
    # The changed phases first: a refusal names the phase that was moved.
    plan = [PhasePlan(c.kind, c.starts_at, c.ends_at) for c in changes if not c.delete] + [
        PhasePlan(p.kind, p.starts_at, p.ends_at) for p in stored
    ]
    kinds = [phase.kind for phase in plan]
    if len(set(kinds)) != len(kinds):
        raise ValidationError("A shared task has at most one phase of each kind.")
    for phase in plan:
        phase_plan_check(plan=plan, kind=phase.kind)


@transaction.atomic
def phases_change(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    changes: list[PhaseChange],
    via: str | None = None,
) -> None:
    """Make ``changes`` together (``phases_change_check``), each audited as the one-phase
    services audit it (``phase.create``, ``phase.update``), deletions as ``phase.delete``;
    ``via`` (e.g. "admin") is added to each entry."""
    organizer_require(user=actor, shared_task=shared_task, doing="that")
    phases_change_check(shared_task=shared_task, changes=changes)
    # Deletions first, so that a kind they free can be taken by another change.
    for change in sorted(changes, key=lambda change: not change.delete):
        action, details = _phase_change_write(shared_task=shared_task, change=change)
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action=action,
            target=f"phase:{change.kind}",
            details={**details, "via": via} if via else details,
        )


def _phase_change_write(
    *, shared_task: SharedTask, change: PhaseChange
) -> tuple[str, dict[str, Any]]:
    moment = {"starts_at": change.starts_at.isoformat(), "ends_at": change.ends_at.isoformat()}
    old = change.phase
    if old is None:
        Phase.objects.create(
            shared_task=shared_task,
            kind=change.kind,
            starts_at=change.starts_at,
            ends_at=change.ends_at,
        )
        return "phase.create", moment
    before = {"starts_at": old.starts_at.isoformat(), "ends_at": old.ends_at.isoformat()}
    if change.delete:
        old.delete()
        return "phase.delete", before
    old.kind, old.starts_at, old.ends_at = change.kind, change.starts_at, change.ends_at
    old.save(update_fields=["kind", "starts_at", "ends_at"])
    return "phase.update", {"from": before, "to": moment}
