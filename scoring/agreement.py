"""Label validation: what the blind votes on a pair decide, and how much validators agree.

A *vote* is one validator's reading of a pair's variant: a label (or none, when the
validator found the variant unclear) and flags. With ``needed`` votes or more, a pair's
outcome is decided by ``pair_outcome``, in this order:

1. **invalid** when more than half of the votes carry the same defect: not minimal, not
   fluent, original mislabelled, or unclear (no label). The first such defect, in that
   order, is the reason.
2. Otherwise the most frequent label ``L`` (held by ``c`` of the ``n`` votes) *agrees* when
   the rule holds: ``majority``, ``2c > n``; ``unanimous``, ``c = n``. Votes without a label
   count in ``n``.
3. **validated** when ``L`` agrees and is the claimed label; **relabelled** (by majority)
   when ``L`` agrees and is another label; **disputed** when no label agrees.

Fewer than ``needed`` votes: **pending**. Example::

    >>> pair_outcome([Vote("positive"), Vote("positive"), Vote("negative")],
    ...              claimed="negative", needed=3, rule="majority").status
    'relabelled'

A pair's **state** (``pair_state``, the one place it is decided) is that outcome where the
votes decide, and otherwise: **not_validated** (out of validation's scope, or validation
off), **unverified** (a machine-made label nobody has confirmed yet), **adjudicated** or
**excluded** (the organizers decided, and their decision overrides any vote). The state says
which label scoring uses, if any.

Agreement between validators is Krippendorff's alpha (nominal; ``krippendorff_alpha``), and
a validator's agreement with the majority is the share of their labelled votes, on pairs
that have a majority label, equal to it (``majority_label``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import krippendorff
import numpy as np

PENDING = "pending"
VALIDATED = "validated"
RELABELLED = "relabelled"
DISPUTED = "disputed"
INVALID = "invalid"
OUTCOMES = (PENDING, VALIDATED, RELABELLED, DISPUTED, INVALID)

# A pair's states where its votes do not decide.
NOT_VALIDATED = "not_validated"
UNVERIFIED = "unverified"
ADJUDICATED = "adjudicated"
EXCLUDED = "excluded"
# Every state of a pair, in the order pages and exports list them.
STATES = (
    NOT_VALIDATED,
    PENDING,
    VALIDATED,
    RELABELLED,
    DISPUTED,
    INVALID,
    UNVERIFIED,
    ADJUDICATED,
    EXCLUDED,
)
# The states whose pair is scored with the label its team claimed (a pending pair only
# while ``pending_scored``).
SCORED_AS_CLAIMED = (NOT_VALIDATED, PENDING, VALIDATED)
# Of those, the states whose claimed label nobody has checked.
CLAIMED_UNCHECKED = (NOT_VALIDATED, PENDING)

MAJORITY = "majority"
UNANIMOUS = "unanimous"
RULES = (MAJORITY, UNANIMOUS)

DEFECTS = ("not_minimal", "not_fluent", "original_mislabelled", "unclear")


@dataclass(frozen=True)
class Vote:
    """One validator's vote: ``label`` is "" when ``unclear``."""

    label: str
    not_minimal: bool = False
    not_fluent: bool = False
    original_mislabelled: bool = False
    unclear: bool = False

    def has(self, defect: str) -> bool:
        if defect == "unclear":
            return self.unclear or not self.label
        return bool(getattr(self, defect))


@dataclass(frozen=True)
class Outcome:
    """``status`` (one of ``OUTCOMES``); ``label``: the label that agreed ("" if none);
    ``reason``: the defect that made the pair invalid ("" otherwise); ``votes``: how many."""

    status: str
    label: str = ""
    reason: str = ""
    votes: int = 0


def _top_label(votes: Sequence[Vote]) -> tuple[str, int]:
    """The most frequent label and its count; ("", 0) without labels or on a tie at the top."""
    counts = Counter(vote.label for vote in votes if vote.label and not vote.unclear)
    if not counts:
        return "", 0
    ranked = counts.most_common()
    if len(ranked) > 1 and ranked[0][1] == ranked[1][1]:
        return "", ranked[0][1]
    return ranked[0]


def pair_outcome(votes: Sequence[Vote], *, claimed: str, needed: int, rule: str) -> Outcome:
    """What ``votes`` decide about a pair whose team claimed the label ``claimed``."""
    if rule not in RULES:
        raise ValueError(f"unknown agreement rule {rule!r}: use one of {', '.join(RULES)}")
    count = len(votes)
    if count < max(needed, 1):
        return Outcome(PENDING, votes=count)
    for defect in DEFECTS:
        if 2 * sum(vote.has(defect) for vote in votes) > count:
            return Outcome(INVALID, reason=defect, votes=count)
    label, top = _top_label(votes)
    agrees = bool(label) and (2 * top > count if rule == MAJORITY else top == count)
    if not agrees:
        return Outcome(DISPUTED, votes=count)
    return Outcome(VALIDATED if label == claimed else RELABELLED, label=label, votes=count)


@dataclass(frozen=True)
class PairState:
    """What a pair's validation decides: ``state`` (one of ``STATES``); ``outcome``, what its
    votes decide (``pair_outcome``; pending while the pair is out of scope); ``scored_label``,
    the label scoring uses (None: the pair is left out); ``unvalidated_label``, the label
    scoring would use were validation off (None: left out even then)."""

    state: str
    outcome: Outcome
    scored_label: str | None
    unvalidated_label: str | None


def pair_state(
    votes: Sequence[Vote],
    *,
    claimed: str,
    needed: int,
    rule: str,
    in_scope: bool = True,
    unverified: bool = False,
    adjudicated: bool = False,
    excluded: bool = False,
    effective_label: str | None = None,
    pending_scored: bool = True,
) -> PairState:
    """The state of a pair whose team claimed the label ``claimed``, from plain values.

    ``votes``: the submitted votes; ``needed`` (k) and ``rule`` as in ``pair_outcome``;
    ``in_scope``: validation covers the pair (False when validation is off); ``unverified``:
    the label is a machine-made change nobody has checked, so only votes (or the organizers)
    let the pair into the scores; ``adjudicated``: an organizers' decision holds, which
    overrides the votes, ``excluded`` when it left the pair out; ``effective_label``: the
    label after the organizers' decisions (None: the claimed one); ``pending_scored``: a
    pair still waiting for votes is scored with its claimed label (the task's
    ``validation_pending`` 'claimed'), else left out until its votes are in.

    >>> pair_state([Vote("negative")] * 2, claimed="positive", needed=3, rule="majority",
    ...            unverified=True).state
    'unverified'
    """
    if in_scope:
        outcome = pair_outcome(votes, claimed=claimed, needed=needed, rule=rule)
    else:
        outcome = Outcome(PENDING, votes=len(votes))
    effective = claimed if effective_label is None else effective_label
    if adjudicated:
        state = EXCLUDED if excluded else ADJUDICATED
    elif not in_scope:
        state = UNVERIFIED if unverified else NOT_VALIDATED
    elif unverified and outcome.status == PENDING:
        state = UNVERIFIED
    else:
        state = outcome.status
    if state == ADJUDICATED:
        scored: str | None = effective
    elif state == RELABELLED:
        scored = outcome.label
    elif state == PENDING and not pending_scored:
        scored = None
    else:
        scored = claimed if state in SCORED_AS_CLAIMED else None
    # Validation off: an organizer's decision still holds, and an unverified label still
    # waits for someone to check it.
    unvalidated = None if excluded or (unverified and not adjudicated) else effective
    return PairState(state, outcome, scored, unvalidated)


def label_share(votes: Sequence[Vote], label: str) -> float | None:
    """The share of the labelled ``votes`` that give ``label`` (None without a labelled vote
    or a label)."""
    labelled = [vote for vote in votes if vote.label]
    if not labelled or not label:
        return None
    return sum(vote.label == label for vote in labelled) / len(labelled)


def majority_label(votes: Sequence[Vote]) -> str:
    """The label more than half of ``votes`` give, else ""."""
    label, top = _top_label(votes)
    return label if label and 2 * top > len(votes) else ""


def krippendorff_alpha(units: Iterable[Sequence[str]], labels: Sequence[str]) -> float | None:
    """Krippendorff's alpha (nominal) over ``units``: each the labels its validators gave
    (unclear votes left out). None when it is undefined: fewer than two units with two
    labels or more, or a single label used throughout.

    >>> krippendorff_alpha([["a", "a"], ["b", "b"]], ["a", "b"])
    1.0
    """
    index = {label: position for position, label in enumerate(labels)}
    rows = []
    for unit in units:
        row = np.zeros(len(labels))
        for label in unit:
            if label in index:
                row[index[label]] += 1
        if row.sum() >= 2:
            rows.append(row)
    if len(rows) < 2:
        return None
    counts = np.array(rows)
    if np.count_nonzero(counts.sum(axis=0)) < 2:
        return None
    value = float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))
    return value if np.isfinite(value) else None
