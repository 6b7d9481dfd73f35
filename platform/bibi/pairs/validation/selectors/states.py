"""Label validation, a pair's state: which pairs are validated, what their votes decide, and
what scoring uses.

**Scope** (the task's ``validation_mode``): ``off``, none; ``contested``, the entry pairs
some contest names; ``sampled``, those and a fixed share of the entry pairs
(``validation_sample_fraction``, chosen by a hash of the pair's id, so the sample never
changes and needs no storage); ``all``, every entry pair. In every mode but off, pairs
marked ``label_unverified`` (machine-made label changes) are in scope too.

**State** of a pair: ``scoring.agreement.pair_state``, pure, over the pair's submitted votes
(``validations_per_pair`` votes needed, the task's ``validation_agreement`` rule), its
scope, its ``label_unverified`` mark and the organizers' decision (``Pair.decision``), which
is absolute: it overrides any outcome. This module reads those values and asks it.

**What scoring uses** (``pairs_scored``), per entry pair not excluded by an organizer:

| state | label scored | counted as |
|---|---|---|
| adjudicated | the organizers' | adjudicated |
| out of scope, or validation off | the submitted one | not validated |
| pending | the submitted one (``validation_pending`` claimed), else left out | pending |
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

from bibi.pairs.entries import entry_pairs
from bibi.pairs.models import Contest, LabelValidation, Pair
from bibi.sharedtasks.models import SharedTask
from scoring import agreement
from scoring.agreement import Outcome, PairState, Vote

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

# Every state a pair can be in (``PairValidation.state``), as pages and exports name them.
STATES = agreement.STATES

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
    "claimed_unchecked",
)

_HASH = 2654435761  # Knuth's multiplicative hash: spreads consecutive ids over [0, 2^32)


def pair_hash(pair_id: int) -> int:
    """A fixed spread of pair ids over [0, 2^32): the sample and the queue's tie-break."""
    return (pair_id * _HASH) % 2**32


def in_sample(pair_id: int, fraction: float) -> bool:
    """Is the pair in a task's sampled fraction? Fixed by its id."""
    return pair_hash(pair_id) < fraction * 2**32


@dataclass(frozen=True)
class PairValidation:
    """One entry pair's validation: what it was decided from (its votes, scope, mark and the
    organizers' decision) and ``decided``, what ``scoring.agreement.pair_state`` made of it."""

    pair_id: int
    team_id: int
    claimed: str
    label_unverified: bool
    in_scope: bool
    adjudicated: bool
    excluded: bool
    effective_label: str
    votes: tuple[Vote, ...]
    decided: PairState

    @property
    def state(self) -> str:
        return self.decided.state

    @property
    def outcome(self) -> Outcome:
        return self.decided.outcome

    @property
    def scored_label(self) -> str | None:
        """The label scoring uses, None when the pair is left out."""
        return self.decided.scored_label

    @property
    def unvalidated_label(self) -> str | None:
        """The label scoring would use with validation off."""
        return self.decided.unvalidated_label

    @property
    def agreement(self) -> float | None:
        """Share of the labelled votes that give the label scored (None without one)."""
        return agreement.label_share(self.votes, self.scored_label or self.outcome.label)

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


def _in_scope(shared_task: SharedTask, pair_id: int, unverified: bool, contested: bool) -> bool:
    mode = shared_task.validation_mode
    if mode == Mode.OFF:
        return False
    if mode == Mode.ALL or unverified or contested:
        return True
    return mode == Mode.SAMPLED and in_sample(pair_id, shared_task.validation_sample_fraction)


@dataclass(frozen=True)
class _PairRow:
    """What a pair's validation is decided from, as the database holds it."""

    pair_id: int
    team_id: int
    claimed: str
    unverified: bool
    decision_id: int | None
    excluded: bool
    effective: str


def _pair_validation(
    row: _PairRow, votes: list[Vote], *, contested: bool, shared_task: SharedTask
) -> PairValidation:
    in_scope = _in_scope(shared_task, row.pair_id, row.unverified, contested)
    pair_votes = tuple(votes)
    return PairValidation(
        pair_id=row.pair_id,
        team_id=row.team_id,
        claimed=row.claimed,
        label_unverified=row.unverified,
        in_scope=in_scope,
        adjudicated=row.decision_id is not None,
        excluded=row.excluded,
        effective_label=row.effective,
        votes=pair_votes,
        decided=agreement.pair_state(
            pair_votes,
            claimed=row.claimed,
            needed=shared_task.validations_per_pair,
            rule=shared_task.validation_agreement,
            in_scope=in_scope,
            unverified=row.unverified,
            adjudicated=row.decision_id is not None,
            excluded=row.excluded,
            effective_label=row.effective,
            pending_scored=shared_task.validation_pending != SharedTask.ValidationPending.LEFT_OUT,
        ),
    )


def pair_validations(*, shared_task: SharedTask) -> dict[int, PairValidation]:
    """Every entry pair's validation, by pair id (three queries)."""
    rows = [
        _PairRow(*values)
        for values in entry_pairs(shared_task=shared_task)
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
    ]
    off = shared_task.validation_mode == Mode.OFF
    contested = (
        set()
        if off
        else set(
            Contest.objects.filter(pair__pair_set__shared_task=shared_task).values_list(
                "pair_id", flat=True
            )
        )
    )
    votes = {} if off else votes_by_pair(None, shared_task=shared_task)
    return {
        row.pair_id: _pair_validation(
            row,
            votes.get(row.pair_id, []),
            contested=row.pair_id in contested,
            shared_task=shared_task,
        )
        for row in rows
    }


def pair_validation(*, pair: Pair, team_id: int, shared_task: SharedTask) -> PairValidation:
    """One pair's validation, as ``pair_validations`` decides it (one or two queries)."""
    row = _PairRow(
        pair.id,
        team_id,
        pair.variant_label,
        pair.label_unverified,
        pair.decision_id,
        pair.is_excluded,
        pair.effective_label,
    )
    mode = shared_task.validation_mode
    votes = (
        []
        if mode == Mode.OFF
        else votes_by_pair([pair.id], shared_task=shared_task).get(pair.id, [])
    )
    # Whether a contest names the pair matters only where it decides the scope.
    contested = mode in (Mode.CONTESTED, Mode.SAMPLED) and (
        Contest.objects.filter(pair_id=pair.id).exists()
    )
    return _pair_validation(row, votes, contested=contested, shared_task=shared_task)


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
            # Scored on the label its team claimed, which no validator has checked.
            team["claimed_unchecked"] += state.state in agreement.CLAIMED_UNCHECKED
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


def validation_settings(shared_task: SharedTask) -> dict[str, Any]:
    """The task's validation settings, as snapshots and summaries record them."""
    return {
        "mode": shared_task.validation_mode,
        "sample_fraction": shared_task.validation_sample_fraction,
        "validations_per_pair": shared_task.validations_per_pair,
        "agreement": shared_task.validation_agreement,
        "quota_per_validator": shared_task.validation_quota_per_validator,
        "pending": shared_task.validation_pending,
    }
