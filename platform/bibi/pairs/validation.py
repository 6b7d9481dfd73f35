"""Label validation, the reads: which pairs are validated, what their votes decide, what
scoring uses, who may validate, and how much validators agree.

**Scope** (the task's ``validation_mode``): ``off``, none; ``contested``, the entry pairs
some contest names; ``sampled``, those and a fixed share of the entry pairs
(``validation_sample_fraction``, chosen by a hash of the pair's id, so the sample never
changes and needs no storage); ``all``, every entry pair. In every mode but off, pairs
marked ``label_unverified`` (machine-made label changes) are in scope too.

**Outcome** of a pair in scope: ``scoring.agreement.pair_outcome`` over its submitted votes,
with ``validations_per_pair`` votes needed and the task's ``validation_agreement`` rule:
pending, validated, relabelled, disputed or invalid. An organizer's adjudication
(``Pair.decision``) is absolute: it overrides any outcome.

**What scoring uses** (``pairs_scored``), per entry pair not excluded by an organizer:

| state | label scored | counted as |
|---|---|---|
| adjudicated | the organizers' | adjudicated |
| out of scope, or validation off | the submitted one | not validated |
| pending | the submitted one | pending |
| validated | the submitted one | validated |
| relabelled | the majority's | relabelled |
| disputed (a contest is open) | left out until adjudicated | left out |
| invalid | left out | left out |
| label unverified, not validated or relabelled | left out | left out |

The *unvalidated* view, scored beside it for comparison, is the task as if validation were
off: adjudications applied, unverified pairs left out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from bibi.pairs.entries import entry_pairs
from bibi.pairs.models import Contest, LabelValidation
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.texts import moment_text
from scoring import agreement
from scoring.agreement import Outcome, Vote

User = task_selectors.User
Mode = SharedTask.ValidationMode

EFFECTIVE_PAIR_KEYS = (
    "pair_id",
    "pair_set_id",
    "team_id",
    "original_id",
    "original_external_id",
    "original_text",
    "original_label",
    "variant_text",
    "variant_label",
    "tags",
    "question",
    "original_answers",
    "variant_answers",
    "original_text_b",
    "variant_text_b",
)

# Pair states beyond the outcomes of ``scoring.agreement``.
ADJUDICATED = "adjudicated"
NOT_VALIDATED = "not_validated"
EXCLUDED = "excluded"
UNVERIFIED = "unverified"  # label unverified and not (yet) validated: left out

# Every state a pair can be in (``PairValidation.state``), as pages and exports name them.
STATES = (
    NOT_VALIDATED,
    agreement.PENDING,
    agreement.VALIDATED,
    agreement.RELABELLED,
    agreement.DISPUTED,
    agreement.INVALID,
    UNVERIFIED,
    ADJUDICATED,
    EXCLUDED,
)

COUNT_KEYS = (
    "entry_pairs",
    "scored",
    "validated",
    "relabelled",
    "left_out",
    "pending",
    "not_validated",
    "adjudicated",
    "invalid",
    "disputed",
    "unverified",
    "excluded",
)

_HASH = 2654435761  # Knuth's multiplicative hash: spreads consecutive ids over [0, 2^32)


def in_sample(pair_id: int, fraction: float) -> bool:
    """Is the pair in a task's sampled fraction? Fixed by its id."""
    return (pair_id * _HASH) % 2**32 < fraction * 2**32


def queue_rank(pair_id: int) -> int:
    """Tie-break of the queue among pairs with as many votes: fixed, and mixing teams."""
    return (pair_id * _HASH) % 2**32


@dataclass(frozen=True)
class PairValidation:
    """One entry pair's validation: its votes and what they decide (see the module doc)."""

    pair_id: int
    team_id: int
    claimed: str
    label_unverified: bool
    in_scope: bool
    adjudicated: bool
    excluded: bool
    effective_label: str
    votes: tuple[Vote, ...]
    outcome: Outcome

    @property
    def state(self) -> str:
        if self.adjudicated:
            return EXCLUDED if self.excluded else ADJUDICATED
        if self.in_scope:
            status = self.outcome.status
            if self.label_unverified and status == agreement.PENDING:
                return UNVERIFIED
            return status
        return UNVERIFIED if self.label_unverified else NOT_VALIDATED

    @property
    def scored_label(self) -> str | None:
        """The label scoring uses, None when the pair is left out."""
        state = self.state
        if state == ADJUDICATED:
            return self.effective_label
        if state == agreement.RELABELLED:
            return self.outcome.label
        if state in (agreement.VALIDATED, agreement.PENDING, NOT_VALIDATED):
            return self.claimed
        return None

    @property
    def unvalidated_label(self) -> str | None:
        """The label scoring would use with validation off."""
        if self.excluded or (self.label_unverified and not self.adjudicated):
            return None
        return self.effective_label

    @property
    def agreement(self) -> float | None:
        """Share of the labelled votes that give the label scored (None without one)."""
        label = self.scored_label or self.outcome.label
        labelled = [vote for vote in self.votes if vote.label]
        if not labelled or not label:
            return None
        return sum(vote.label == label for vote in labelled) / len(labelled)

    def as_row(self) -> dict[str, Any]:
        """JSON-ready: what exports and the item explorer show of the pair's validation."""
        return {
            "pair_id": self.pair_id,
            "team_id": self.team_id,
            "state": self.state,
            "claimed_label": self.claimed,
            "scored_label": self.scored_label,
            "label_unverified": self.label_unverified,
            "votes": len(self.votes),
            "vote_labels": sorted(vote.label for vote in self.votes if vote.label),
            "flags": {
                defect: sum(vote.has(defect) for vote in self.votes) for defect in agreement.DEFECTS
            },
            "agreement": self.agreement,
            "invalid_reason": self.outcome.reason,
        }


def _scope_contested(shared_task: SharedTask) -> set[int]:
    return set(
        Contest.objects.filter(pair__pair_set__shared_task=shared_task).values_list(
            "pair_id", flat=True
        )
    )


def votes_by_pair(pair_ids: list[int] | None, *, shared_task: SharedTask) -> dict[int, list[Vote]]:
    """Submitted votes, by pair (every pair of the task when ``pair_ids`` is None)."""
    rows = LabelValidation.objects.filter(
        pair__pair_set__shared_task=shared_task, status=LabelValidation.Status.DONE
    )
    if pair_ids is not None:
        rows = rows.filter(pair_id__in=pair_ids)
    votes: dict[int, list[Vote]] = defaultdict(list)
    for pair_id, *values in rows.order_by("pair_id", "id").values_list(
        "pair_id", "label", "not_minimal", "not_fluent", "original_mislabelled", "unclear"
    ):
        votes[pair_id].append(Vote(*values))
    return votes


def _in_scope(shared_task: SharedTask, pair_id: int, unverified: bool, contested: set[int]) -> bool:
    mode = shared_task.validation_mode
    if mode == Mode.OFF:
        return False
    if mode == Mode.ALL or unverified or pair_id in contested:
        return True
    return mode == Mode.SAMPLED and in_sample(pair_id, shared_task.validation_sample_fraction)


def pair_validations(*, shared_task: SharedTask) -> dict[int, PairValidation]:
    """Every entry pair's validation, by pair id (three queries)."""
    rows = list(
        entry_pairs(shared_task=shared_task)
        .order_by("pair_set__team_id", "row")
        .values_list(
            "id",
            "pair_set__team_id",
            "variant_label",
            "label_unverified",
            "decision_id",
            "is_excluded",
            "effective_label",
        )
    )
    off = shared_task.validation_mode == Mode.OFF
    contested = set() if off else _scope_contested(shared_task)
    votes = {} if off else votes_by_pair(None, shared_task=shared_task)
    found = {}
    for pair_id, team_id, claimed, unverified, decision_id, excluded, effective in rows:
        in_scope = _in_scope(shared_task, pair_id, unverified, contested)
        pair_votes = tuple(votes.get(pair_id, ()))
        outcome = (
            agreement.pair_outcome(
                pair_votes,
                claimed=claimed,
                needed=shared_task.validations_per_pair,
                rule=shared_task.validation_agreement,
            )
            if in_scope
            else Outcome(agreement.PENDING, votes=len(pair_votes))
        )
        found[pair_id] = PairValidation(
            pair_id=pair_id,
            team_id=team_id,
            claimed=claimed,
            label_unverified=unverified,
            in_scope=in_scope,
            adjudicated=decision_id is not None,
            excluded=excluded,
            effective_label=effective,
            votes=pair_votes,
            outcome=outcome,
        )
    return found


@dataclass
class ScoredPairs:
    """What scoring reads: the pairs with validated labels (``validated``), the same task as
    if validation were off (``unvalidated``), every pair's validation and counts by team."""

    validation_on: bool
    validated: list[dict[str, Any]]
    unvalidated: list[dict[str, Any]]
    states: dict[int, PairValidation] = field(default_factory=dict)
    counts: dict[int, dict[str, int]] = field(default_factory=dict)  # team id -> COUNT_KEYS


def count_by_team(states: dict[int, PairValidation]) -> dict[int, dict[str, int]]:
    counts: dict[int, dict[str, int]] = {}
    for state in states.values():
        team = counts.setdefault(state.team_id, dict.fromkeys(COUNT_KEYS, 0))
        team["entry_pairs"] += 1
        team[state.state] += 1
        if state.scored_label is None:
            team["left_out"] += 1
        else:
            team["scored"] += 1
    return counts


def pairs_scored(*, shared_task: SharedTask) -> ScoredPairs:
    """The entry pairs as scoring uses them, validated and not (see the module doc).

    Each list holds one dict per scored pair, ordered by team then row, with the keys of
    ``EFFECTIVE_PAIR_KEYS`` (``variant_label``: the label scored).
    """
    states = pair_validations(shared_task=shared_task)
    rows = (
        entry_pairs(shared_task=shared_task)
        .order_by("pair_set__team_id", "row")
        .values_list(
            "id",
            "pair_set_id",
            "pair_set__team_id",
            "original_id",
            "original__external_id",
            "original_text",
            "original_label",
            "variant_text",
            "effective_label",
            "tags",
            "question",
            "original_answers",
            "variant_answers",
            "original_text_b",
            "variant_text_b",
        )
    )
    validated, unvalidated = [], []
    for row in rows:
        pair = dict(zip(EFFECTIVE_PAIR_KEYS, row, strict=True))
        state = states[pair["pair_id"]]
        if state.scored_label is not None:
            validated.append({**pair, "variant_label": state.scored_label})
        if state.unvalidated_label is not None:
            unvalidated.append({**pair, "variant_label": state.unvalidated_label})
    return ScoredPairs(
        validation_on=shared_task.validation_mode != Mode.OFF,
        validated=validated,
        unvalidated=unvalidated,
        states=states,
        counts=count_by_team(states),
    )


# --- Who validates ------------------------------------------------------------------------


def validation_closed_reason(*, shared_task: SharedTask) -> str | None:
    """Why validators cannot work now, None when they can: validation runs in every mode
    but off, from the end of the break phase (the entries are fixed) until the results
    phase starts (labels are published then, so a vote would no longer be blind)."""
    if shared_task.validation_mode == SharedTask.ValidationMode.OFF:
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
    in queue order: fewest votes first, then ``queue_rank``. A pair an organizer adjudicated
    needs none."""
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
    return sorted(open_pairs, key=lambda item: (item[1], queue_rank(item[0]), item[0]))


def pending_count(*, shared_task: SharedTask) -> int:
    """Pairs in scope, not adjudicated, still short of their votes."""
    return sum(
        state.in_scope and not state.adjudicated and state.outcome.status == agreement.PENDING
        for state in pair_validations(shared_task=shared_task).values()
    )


def validation_settings(shared_task: SharedTask) -> dict[str, Any]:
    """The task's validation settings, as snapshots and summaries record them."""
    return {
        "mode": shared_task.validation_mode,
        "sample_fraction": shared_task.validation_sample_fraction,
        "validations_per_pair": shared_task.validations_per_pair,
        "agreement": shared_task.validation_agreement,
        "quota_per_validator": shared_task.validation_quota_per_validator,
    }
