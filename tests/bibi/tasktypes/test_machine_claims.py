"""What a machine-made pair claims, as both pair checks store it: label unverified only when it
states a label (span: answer texts) other than the original's (``edits.claims``). Plain values,
no database."""

from __future__ import annotations

import json

import pytest

from bibi.tasktypes import SPAN_EXTRACTION, TEXT_CLASSIFICATION
from bibi.tasktypes.rules import PairInput, PairRules, StarterExample

from ..spancast import UCD, answers_of

RULES = PairRules(labels=("negative", "positive"), strategy_tags=())
STARTER = TEXT_CLASSIFICATION.starter_index(
    [StarterExample(1, "s1", "The acting is weak .", "negative")]
)
SPAN_STARTER = SPAN_EXTRACTION.starter_index(
    [StarterExample(1, "s1", UCD, question="who beat someone?", answers=answers_of(UCD, ["UCD"]))]
)


def checked_label_pair(*, label: str, machine_made: bool) -> bool:
    pair = PairInput(
        row=1,
        original_id="s1",
        variant_text="The acting is strong .",
        variant_label=label,
        label_unverified=machine_made,
    )
    checked, problems = TEXT_CLASSIFICATION.check_pair(pair, starter=STARTER, rules=RULES)
    assert checked is not None, problems
    return checked.label_unverified


def checked_span_pair(*, variant: str, answers: list[str] | None, machine_made: bool) -> bool:
    given = "" if answers is None else json.dumps(answers_of(variant, answers))
    pair = PairInput(
        row=1,
        original_id="s1",
        variant_text=variant,
        variant_label="",
        variant_answers=given,
        label_unverified=machine_made,
    )
    checked, problems = SPAN_EXTRACTION.check_pair(pair, starter=SPAN_STARTER, rules=RULES)
    assert checked is not None, problems
    return checked.label_unverified


def test_a_machine_made_label_change_is_stored_unverified():
    assert checked_label_pair(label="positive", machine_made=True)


@pytest.mark.parametrize(
    ("label", "machine_made"), [("negative", True), ("positive", False), ("negative", False)]
)
def test_the_originals_label_or_a_persons_pair_claims_nothing_to_verify(label, machine_made):
    assert not checked_label_pair(label=label, machine_made=machine_made)


def test_a_machine_made_answer_that_moved_is_stored_unverified():
    variant = UCD.replace("UCD", "UCD Dublin")
    assert checked_span_pair(variant=variant, answers=["UCD Dublin"], machine_made=True)


@pytest.mark.parametrize("answers", [["UCD"], None], ids=["given", "found in the variant"])
def test_a_machine_made_span_edit_that_keeps_the_answer_claims_nothing(answers):
    # The span checks kept the mark whatever the answers before; now they agree with the label
    # checks: a label-keeping span edit claims nothing about labels.
    variant = UCD.replace("championship", "title")
    assert not checked_span_pair(variant=variant, answers=answers, machine_made=True)


def test_a_persons_span_pair_is_never_unverified():
    variant = UCD.replace("UCD", "UCD Dublin")
    assert not checked_span_pair(variant=variant, answers=["UCD Dublin"], machine_made=False)
