"""Label validation, the queue's reads: who validates, when validation is open, which pairs
the queue may hand out, and what a validator's page says.

**Who**: organizers; members of breaker teams (never of their own team's pairs); people let
in by a task invitation that grants the validator role. **When**: in every mode but off,
from the end of the break phase (the entries are fixed) until the results phase starts
(labels are published then). **Which pair next** (``validation_candidates``): of the pairs
in scope still short of their votes (given or handed out), the fewest votes first, ties
broken by a fixed hash of the pair's id (so teams mix); ``services.validation_next`` hands
them out.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from bibi.pairs.models import LabelValidation
from bibi.pairs.validation.selectors.states import pair_hash, pair_validations
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.texts import moment_text
from scoring import agreement

User = task_selectors.User
Mode = SharedTask.ValidationMode


def validation_closed_reason(*, shared_task: SharedTask) -> str | None:
    """Why validators cannot work now, None when they can: validation runs in every mode
    but off, from the end of the break phase (the entries are fixed) until the results
    phase starts (labels are published then, so a vote would no longer be blind)."""
    if shared_task.validation_mode == Mode.OFF:
        return "Label validation is off for this shared task."
    phases = {phase.kind: phase for phase in shared_task.phases.all()}
    moment = timezone.now()
    break_phase = phases.get(Phase.Kind.BREAK)
    if break_phase is None or break_phase.ends_at > moment:
        when = f" at {moment_text(break_phase.ends_at)}" if break_phase else ""
        return f"Label validation opens when the break phase closes{when} (server time)."
    results = phases.get(Phase.Kind.RESULTS)
    if results is not None and results.starts_at <= moment:
        return "Label validation closed when the results phase started."
    return None


def validator_role(*, user: User, shared_task: SharedTask) -> str | None:
    """``user``'s validator role in the task (``LabelValidation.Role``), None if they have none.

    Organizers; members of breaker teams (never of their own team's pairs); people let in by
    a task invitation that grants the validator role. Builder team members are not
    validators: pairs that break their systems are theirs to contest, not to label.
    """
    if not user.is_authenticated or shared_task.validation_mode == Mode.OFF:
        return None
    if task_selectors.is_organizer(user=user, shared_task=shared_task):
        return LabelValidation.Role.ORGANIZER
    membership = task_selectors.membership_get(user=user, shared_task=shared_task)
    if membership is not None:
        return LabelValidation.Role.BREAKER if membership.team.kind == Team.Kind.BREAKER else None
    if task_selectors.is_invited_validator(user=user, shared_task=shared_task):
        return LabelValidation.Role.VALIDATOR
    return None


def validation_candidates(
    *, shared_task: SharedTask, exclude_team_id: int | None
) -> list[tuple[int, int]]:
    """(pair id, votes given or handed out) of every pair in scope still short of its votes,
    in queue order: fewest votes first, then a fixed hash of the pair's id. A pair an
    organizer adjudicated needs none."""
    states = pair_validations(shared_task=shared_task)
    wanted = [
        state.pair_id
        for state in states.values()
        if state.in_scope
        and not state.adjudicated
        and state.team_id != exclude_team_id
        and state.outcome.status == agreement.PENDING
    ]
    taken: dict[int, int] = defaultdict(int)
    for pair_id in (
        LabelValidation.objects.filter(pair_id__in=wanted)
        .exclude(status=LabelValidation.Status.SKIPPED)
        .values_list("pair_id", flat=True)
    ):
        taken[pair_id] += 1
    needed = shared_task.validations_per_pair
    open_pairs = [(pair_id, taken[pair_id]) for pair_id in wanted if taken[pair_id] < needed]
    return sorted(open_pairs, key=lambda item: (item[1], pair_hash(item[0]), item[0]))


def pending_pairs(*, shared_task: SharedTask) -> dict[int, int]:
    """Pair id → team id of the pairs in scope, not adjudicated, still short of their votes:
    the pairs a validator may still be asked about, and those that ending validation now
    would leave unvalidated."""
    return {
        state.pair_id: state.team_id
        for state in pair_validations(shared_task=shared_task).values()
        if state.in_scope and not state.adjudicated and state.outcome.status == agreement.PENDING
    }


def pending_pair_ids(*, shared_task: SharedTask, exclude_team_id: int | None = None) -> set[int]:
    """The pending pairs (``pending_pairs``), less those of ``exclude_team_id``."""
    return {
        pair_id
        for pair_id, team_id in pending_pairs(shared_task=shared_task).items()
        if team_id != exclude_team_id
    }


def pairs_seen(*, shared_task: SharedTask, user: User, team_id: int | None) -> set[int]:
    """Pairs the queue never hands ``user``: those they hold, voted on or handed back, and
    those another member of their breaker team (``team_id``; None: in no team) holds or voted
    on: one vote per team and pair."""
    mine = Q(validator=user)
    if team_id is not None:
        mine |= Q(
            team_id=team_id,
            status__in=[LabelValidation.Status.ASSIGNED, LabelValidation.Status.DONE],
        )
    return set(
        LabelValidation.objects.filter(mine, pair__pair_set__shared_task=shared_task).values_list(
            "pair_id", flat=True
        )
    )


def breaker_team_id(*, user: User, shared_task: SharedTask) -> int | None:
    """The breaker team ``user`` votes for in the task; None for invited validators and
    organizers (each their own one-person team)."""
    membership = task_selectors.membership_get(user=user, shared_task=shared_task)
    if membership is None or membership.team.kind != Team.Kind.BREAKER:
        return None
    return membership.team_id


def pending_count(*, shared_task: SharedTask) -> int:
    """Pairs in scope, not adjudicated, still short of their votes."""
    return len(pending_pair_ids(shared_task=shared_task))


def validation_queue_state(*, shared_task: SharedTask, user: User) -> dict[str, Any]:
    """What a validator's page says: ``role`` (None: not a validator), ``closed_reason`` (None
    while validation is open), ``quota`` (0: none), ``done`` (votes given), ``assigned`` (the
    id of the pair handed to them and not answered, or None) and ``available`` (pairs the
    queue could still hand them)."""
    role = validator_role(user=user, shared_task=shared_task)
    state: dict[str, Any] = {
        "role": role,
        "closed_reason": validation_closed_reason(shared_task=shared_task),
        "quota": shared_task.validation_quota_per_validator,
        "done": 0,
        "assigned": None,
        "available": 0,
    }
    if role is None:
        return state
    mine = LabelValidation.objects.filter(validator=user, pair__pair_set__shared_task=shared_task)
    state["done"] = mine.filter(status=LabelValidation.Status.DONE).count()
    state["assigned"] = (
        mine.filter(status=LabelValidation.Status.ASSIGNED).values_list("id", flat=True).first()
    )
    membership = task_selectors.membership_get(user=user, shared_task=shared_task)
    seen = pairs_seen(
        shared_task=shared_task,
        user=user,
        team_id=breaker_team_id(user=user, shared_task=shared_task),
    )
    state["available"] = sum(
        pair_id not in seen
        for pair_id, _ in validation_candidates(
            shared_task=shared_task, exclude_team_id=membership.team_id if membership else None
        )
    )
    return state


def validator_history(*, shared_task: SharedTask, user: User) -> QuerySet[LabelValidation]:
    """The votes ``user`` gave in the task, newest first (with their pairs' texts)."""
    if not user.is_authenticated:
        return LabelValidation.objects.none()
    return (
        LabelValidation.objects.filter(
            validator=user,
            pair__pair_set__shared_task=shared_task,
            status=LabelValidation.Status.DONE,
        )
        .select_related("pair")
        .order_by("-submitted_at", "-id")
    )
