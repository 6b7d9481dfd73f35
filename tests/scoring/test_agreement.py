"""The label-validation rule: outcomes of a pair's votes, majority labels, Krippendorff's alpha."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest

from scoring.agreement import (
    DISPUTED,
    INVALID,
    PENDING,
    RELABELLED,
    VALIDATED,
    Vote,
    krippendorff_alpha,
    majority_label,
    pair_outcome,
)

POS, NEG, UNCLEAR = Vote("positive"), Vote("negative"), Vote("", unclear=True)


def outcome(votes, claimed="positive", needed=3, rule="majority"):
    return pair_outcome(votes, claimed=claimed, needed=needed, rule=rule)


@pytest.mark.parametrize(
    ("votes", "claimed", "rule", "status", "label"),
    [
        ([POS, POS, POS], "positive", "majority", VALIDATED, "positive"),
        ([POS, POS, NEG], "positive", "majority", VALIDATED, "positive"),
        ([POS, POS, NEG], "negative", "majority", RELABELLED, "positive"),
        ([POS, POS, NEG], "positive", "unanimous", DISPUTED, ""),
        ([POS, POS, POS], "negative", "unanimous", RELABELLED, "positive"),
        ([POS, NEG, UNCLEAR], "positive", "majority", DISPUTED, ""),
        # Unclear votes count in n: two of four is no majority.
        ([POS, POS, NEG, UNCLEAR], "positive", "majority", DISPUTED, ""),
        ([POS, POS, NEG, NEG], "positive", "majority", DISPUTED, ""),
    ],
)
def test_labels_decide_validated_relabelled_or_disputed(votes, claimed, rule, status, label):
    result = outcome(votes, claimed=claimed, needed=3, rule=rule)
    assert (result.status, result.label, result.votes) == (status, label, len(votes))


def test_fewer_votes_than_needed_leave_the_pair_pending():
    assert outcome([POS, POS], needed=3).status == PENDING
    assert outcome([], needed=1).status == PENDING
    assert outcome([POS], needed=1).status == VALIDATED


@pytest.mark.parametrize(
    ("flag", "reason"),
    [
        ("not_minimal", "not_minimal"),
        ("not_fluent", "not_fluent"),
        ("original_mislabelled", "original_mislabelled"),
    ],
)
def test_a_defect_flagged_by_more_than_half_makes_the_pair_invalid(flag, reason):
    flagged = Vote("positive", **{flag: True})
    assert outcome([flagged, flagged, POS]) == outcome([flagged, POS, flagged])
    result = outcome([flagged, flagged, POS])
    assert (result.status, result.reason) == (INVALID, reason)
    # Half is not more than half.
    assert outcome([flagged, flagged, POS, POS], needed=4).status == VALIDATED


def test_mostly_unclear_votes_make_the_pair_invalid_and_the_first_defect_is_the_reason():
    assert outcome([UNCLEAR, UNCLEAR, POS]).reason == "unclear"
    both = Vote("positive", not_minimal=True, not_fluent=True)
    assert outcome([both, both, POS]).reason == "not_minimal"


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="unknown agreement rule"):
        outcome([POS], rule="plurality")


def test_the_majority_label_needs_more_than_half_of_all_votes():
    assert majority_label([POS, POS, NEG]) == "positive"
    assert majority_label([POS, NEG]) == ""
    assert majority_label([POS, UNCLEAR, UNCLEAR]) == ""


def test_alpha_is_the_librarys_nominal_alpha_and_none_where_undefined():
    units = [
        ["positive", "positive", "negative"],
        ["negative", "negative"],
        ["positive", "positive"],
    ]
    counts = np.array([[1, 2], [2, 0], [0, 2]])
    expected = krippendorff.alpha(value_counts=counts, level_of_measurement="nominal")
    assert krippendorff_alpha(units, ["negative", "positive"]) == pytest.approx(expected)
    assert krippendorff_alpha([["positive", "positive"]], ["negative", "positive"]) is None
    assert krippendorff_alpha([["positive"], ["negative"]], ["negative", "positive"]) is None
    same = [["positive", "positive"], ["positive", "positive"]]
    assert krippendorff_alpha(same, ["negative", "positive"]) is None
    assert krippendorff_alpha([["a", "a"], ["b", "b"]], ["a", "b"]) == 1.0
