"""A pair's validation state (``scoring.agreement.pair_state``): every state, and the label
scoring uses in each, from plain values and without a database."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scoring.agreement import (
    ADJUDICATED,
    DEFECTS,
    DISPUTED,
    EXCLUDED,
    INVALID,
    NOT_VALIDATED,
    PENDING,
    RELABELLED,
    STATES,
    UNVERIFIED,
    VALIDATED,
    Outcome,
    PairState,
    Vote,
    label_share,
    pair_state,
)

POS, NEG, UNCLEAR = Vote("positive"), Vote("negative"), Vote("", unclear=True)


def state(votes, claimed="positive", needed=3, rule="majority", **pair) -> PairState:
    return pair_state(votes, claimed=claimed, needed=needed, rule=rule, **pair)


# --- Where the votes decide ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("votes", "claimed", "rule", "expected", "scored"),
    [
        ([POS, POS, POS], "positive", "majority", VALIDATED, "positive"),
        ([POS, POS, NEG], "positive", "majority", VALIDATED, "positive"),
        ([POS, POS, NEG], "negative", "majority", RELABELLED, "positive"),
        ([POS, POS, POS], "negative", "unanimous", RELABELLED, "positive"),
        ([NEG, NEG, NEG], "negative", "unanimous", VALIDATED, "negative"),
        # Unanimous asks for every vote: two of three is no agreement.
        ([POS, POS, NEG], "positive", "unanimous", DISPUTED, None),
        # A tie at the top is no label, whatever the rule.
        ([POS, POS, NEG, NEG], "positive", "majority", DISPUTED, None),
        ([POS, NEG], "positive", "majority", DISPUTED, None),
        # Unclear votes count in n: two of four is not more than half.
        ([POS, POS, NEG, UNCLEAR], "positive", "majority", DISPUTED, None),
        ([POS, NEG, UNCLEAR], "positive", "majority", DISPUTED, None),
        # One unclear vote of four leaves three of four: a majority, not unanimity.
        ([POS, POS, POS, UNCLEAR], "positive", "majority", VALIDATED, "positive"),
        ([POS, POS, POS, UNCLEAR], "positive", "unanimous", DISPUTED, None),
    ],
)
def test_the_votes_validate_relabel_or_dispute_a_pair(votes, claimed, rule, expected, scored):
    result = state(votes, claimed=claimed, needed=2, rule=rule)
    assert (result.state, result.scored_label) == (expected, scored)
    assert result.outcome.votes == len(votes)
    assert result.outcome.label == (scored or "")


def test_the_claimed_label_is_scored_while_the_pair_waits_for_k_votes():
    for votes in ([], [NEG], [NEG, NEG]):
        waiting = state(votes, needed=3)
        assert (waiting.state, waiting.scored_label) == (PENDING, "positive")
        assert waiting.outcome == Outcome(PENDING, votes=len(votes))
    assert state([NEG, NEG, NEG], needed=3).state == RELABELLED
    # k = 0 still asks for one vote.
    assert state([], needed=0).state == PENDING
    assert state([POS], needed=0).state == VALIDATED


@pytest.mark.parametrize("defect", ["not_minimal", "not_fluent", "original_mislabelled"])
def test_a_flag_on_more_than_half_of_the_votes_makes_the_pair_invalid(defect):
    flagged = Vote("positive", **{defect: True})
    invalid = state([flagged, flagged, POS])
    assert (invalid.state, invalid.outcome.reason, invalid.scored_label) == (INVALID, defect, None)
    # Half is not more than half: the labels decide.
    assert state([flagged, flagged, POS, POS], needed=4).state == VALIDATED
    # The flag beats an agreed label, claimed or not.
    assert state([flagged, flagged, flagged], claimed="negative").state == INVALID


def test_flags_count_defect_by_defect_and_the_first_defect_is_the_reason():
    spread = [Vote("positive", not_minimal=True), Vote("positive", not_fluent=True), POS]
    assert state(spread).state == VALIDATED
    both = Vote("positive", not_minimal=True, not_fluent=True)
    assert state([both, both, POS]).outcome.reason == "not_minimal"
    everything = Vote("", unclear=True, **dict.fromkeys(DEFECTS[:3], True))
    assert state([everything] * 3).outcome.reason == DEFECTS[0]


def test_mostly_unclear_votes_make_the_pair_invalid():
    assert state([UNCLEAR, UNCLEAR, POS]).outcome.reason == "unclear"
    # A vote without a label is unclear, marked or not.
    unlabelled = Vote("")
    assert state([unlabelled, unlabelled, POS]).outcome.reason == "unclear"


def test_a_relabel_to_the_originals_label_is_scored_with_it():
    # A machine-made edit claimed the label changed (positive -> negative); the validators
    # read the original's label in the variant: the edit kept it, and the pair says so.
    kept = state([POS, POS, NEG], claimed="negative", unverified=True)
    assert (kept.state, kept.scored_label) == (RELABELLED, "positive")
    assert kept.unvalidated_label is None  # nobody checked it with validation off


# --- Where the votes do not decide -----------------------------------------------------------


def test_a_pair_out_of_scope_is_scored_with_its_claim_and_its_votes_decide_nothing():
    outside = state([NEG, NEG, NEG], in_scope=False)
    assert (outside.state, outside.scored_label) == (NOT_VALIDATED, "positive")
    assert outside.outcome == Outcome(PENDING, votes=3)
    assert outside.unvalidated_label == "positive"
    # Out of scope, the rule is never read.
    assert state([POS], rule="plurality", in_scope=False).state == NOT_VALIDATED


def test_an_unverified_label_is_left_out_until_votes_decide_it():
    assert state([POS, POS], unverified=True).state == UNVERIFIED
    assert state([POS, POS], unverified=True).scored_label is None
    assert state([POS, POS, POS], unverified=True).state == VALIDATED
    assert state([POS, POS, POS], unverified=True).scored_label == "positive"
    # With validation off (out of scope) it waits for nobody: left out either way.
    off = state([], unverified=True, in_scope=False)
    assert (off.state, off.scored_label, off.unvalidated_label) == (UNVERIFIED, None, None)
    assert state([POS, NEG, UNCLEAR], unverified=True).state == DISPUTED


def test_the_organizers_decision_overrides_the_votes():
    for votes in ([], [NEG, NEG, NEG], [POS, NEG, UNCLEAR]):
        kept = state(votes, adjudicated=True, effective_label="negative")
        assert (kept.state, kept.scored_label) == (ADJUDICATED, "negative")
        assert kept.unvalidated_label == "negative"
    out = state([POS, POS, POS], adjudicated=True, excluded=True)
    assert (out.state, out.scored_label, out.unvalidated_label) == (EXCLUDED, None, None)
    # An organizer's label reaches the scores even where the claim was unverified.
    checked = state([], unverified=True, adjudicated=True, in_scope=False)
    assert (checked.state, checked.scored_label, checked.unvalidated_label) == (
        ADJUDICATED,
        "positive",
        "positive",
    )
    # The votes' own outcome is still told (the queue needs no more votes for such a pair).
    assert state([NEG, NEG, NEG], adjudicated=True).outcome.status == RELABELLED


def test_the_unvalidated_view_scores_the_label_the_decisions_leave():
    for votes in ([POS, NEG, UNCLEAR], [UNCLEAR, UNCLEAR, UNCLEAR]):
        left_out = state(votes)
        assert left_out.scored_label is None
        assert left_out.unvalidated_label == "positive"
    assert state([], effective_label="negative").unvalidated_label == "negative"
    assert state([], excluded=True).unvalidated_label is None


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown agreement rule 'plurality'"):
        state([POS], rule="plurality")


def test_a_state_is_a_frozen_value():
    with pytest.raises(dataclasses.FrozenInstanceError):
        state([POS]).state = INVALID  # type: ignore[misc]
    assert state([POS, POS, POS]) == state([POS, POS, POS])


VOTES = st.builds(
    Vote,
    label=st.sampled_from(["positive", "negative", ""]),
    not_minimal=st.booleans(),
    not_fluent=st.booleans(),
    original_mislabelled=st.booleans(),
    unclear=st.booleans(),
)


@given(
    votes=st.lists(VOTES, max_size=7),
    claimed=st.sampled_from(["positive", "negative"]),
    needed=st.integers(0, 5),
    rule=st.sampled_from(["majority", "unanimous"]),
    flags=st.fixed_dictionaries(
        {
            "in_scope": st.booleans(),
            "unverified": st.booleans(),
            "adjudicated": st.booleans(),
            "excluded": st.booleans(),
        }
    ),
)
def test_every_state_is_named_and_only_the_scored_states_carry_a_label(
    votes, claimed, needed, rule, flags
):
    result = state(votes, claimed=claimed, needed=needed, rule=rule, **flags)
    assert result.state in STATES
    scored = (VALIDATED, RELABELLED, PENDING, NOT_VALIDATED, ADJUDICATED)
    assert (result.scored_label is not None) == (result.state in scored)
    if result.state == RELABELLED:
        assert result.scored_label != claimed
    if flags["unverified"] and not flags["adjudicated"]:
        assert result.unvalidated_label is None
        assert result.state not in (PENDING, NOT_VALIDATED)


def test_the_share_of_labelled_votes_that_agree():
    assert label_share([POS, POS, NEG, UNCLEAR], "positive") == pytest.approx(2 / 3)
    assert label_share([UNCLEAR], "positive") is None
    assert label_share([POS], "") is None
