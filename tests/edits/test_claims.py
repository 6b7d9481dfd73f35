"""What a machine-made edit claims: the one rule (edits.claims), without a model or a database."""

from __future__ import annotations

import subprocess
import sys

import pytest

from edits.claims import (
    ANTONYM,
    CHANGES,
    KEEPS,
    KEEPS_LABEL,
    KINDS,
    NAME,
    NEGATION,
    NEIGHBOUR,
    PROBE,
    SYNONYM,
    TYPO,
    Claim,
    changed_label,
    edit_claim,
    edit_kind,
    pair_unverified,
    stated_kind,
)
from edits.perturbations import Edit, Perturbation, antonym_swaps, negation_edits, synonym_swaps

BINARY = ["negative", "positive"]
THREE = ["negative", "neutral", "positive"]
NLI = ["entailment", "neutral", "contradiction"]


def test_a_label_keeping_edit_claims_the_originals_label_and_is_verified():
    for labels in (BINARY, THREE, NLI, []):
        original = labels[1] if labels else "anything"
        claim = edit_claim(KEEPS, original_label=original, labels=labels)
        assert claim == Claim(KEEPS, original)
        assert not claim.label_unverified and not claim.probe


def test_a_label_changing_edit_claims_the_other_label_of_a_binary_task_unverified():
    assert edit_claim(CHANGES, original_label="positive", labels=BINARY) == Claim(
        CHANGES, "negative"
    )
    assert edit_claim(CHANGES, original_label="negative", labels=BINARY).label == "positive"
    # Any two labels: the other one, whatever they are called.
    assert edit_claim(CHANGES, original_label="-1", labels=["-1", "1"]).label == "1"
    assert edit_claim(CHANGES, original_label="positive", labels=BINARY).label_unverified


def test_on_a_larger_label_set_only_a_polarity_label_has_an_opposite():
    assert edit_claim(CHANGES, original_label="positive", labels=THREE).label == "negative"
    assert edit_claim(CHANGES, original_label="neg", labels=["neg", "neu", "pos"]).label == "pos"
    # A negated "neutral" item is not reliably anything; nor is an NLI label's edit.
    for original, labels in (("neutral", THREE), ("entailment", NLI), ("neutral", NLI)):
        claim = edit_claim(CHANGES, original_label=original, labels=labels)
        assert claim == Claim(CHANGES, None) and claim.label_unverified


@pytest.mark.parametrize(
    ("label", "labels", "expected"),
    [
        ("Positive", ["Negative", "Neutral", "Positive"], "Negative"),
        ("NEGATIVE", ["NEGATIVE", "Mixed", "POSITIVE"], "POSITIVE"),
        ("Pos", ["Neg", "Neu", "Pos"], "Neg"),
        ("Neutral", ["Negative", "Neutral", "Positive"], None),
    ],
)
def test_polarity_labels_are_found_in_any_case(label, labels, expected):
    assert changed_label(label, labels) == expected


def test_a_label_set_without_the_opposite_gives_no_label():
    # "positive" with no "negative" beside it, and a label set of one.
    assert changed_label("positive", ["positive", "neutral", "mixed"]) is None
    assert changed_label("positive", ["positive"]) is None
    # A label the set does not hold has no claimed change (not the set's first label).
    assert changed_label("spam", BINARY) is None
    assert changed_label("positive", []) is None


def test_a_probe_claims_nothing():
    for labels in (BINARY, THREE, []):
        claim = edit_claim(PROBE, original_label="positive", labels=labels)
        assert claim == Claim(PROBE, None)
        assert claim.probe and not claim.label_unverified


def test_a_span_edit_without_labels_claims_only_its_kind():
    assert edit_claim(KEEPS) == Claim(KEEPS, None)
    assert edit_claim(CHANGES).label_unverified
    assert edit_claim(CHANGES).label is None


def test_an_unknown_kind_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown edit kind 'flips': one of keeps, changes, probe"):
        edit_claim("flips", original_label="positive", labels=BINARY)


def test_every_source_has_an_intent_and_neighbours_are_probes():
    assert set(KEEPS_LABEL) == {SYNONYM, ANTONYM, NEIGHBOUR, NAME, TYPO, NEGATION}
    expected = {
        SYNONYM: KEEPS,
        ANTONYM: CHANGES,
        NEIGHBOUR: PROBE,
        NAME: KEEPS,
        TYPO: KEEPS,
        NEGATION: CHANGES,
    }
    for source, keeps in KEEPS_LABEL.items():
        assert edit_kind(source=source, keeps_label=keeps) == expected[source]
    # Any edit marked a probe (an antonym without opposite opinions) claims nothing.
    assert edit_kind(source=ANTONYM, keeps_label=False, probe=True) == PROBE
    assert edit_kind(keeps_label=True) == KEEPS and edit_kind(keeps_label=False) == CHANGES
    assert KINDS == (KEEPS, CHANGES, PROBE)


def test_a_perturbations_kind_is_the_rules():
    edit = Edit(2, 6, "good", "bad")
    made = Perturbation("a bad film", edit, ANTONYM, False, "why")
    assert made.kind == CHANGES
    assert Perturbation("a bad film", edit, ANTONYM, False, "why", probe=True).kind == PROBE
    assert Perturbation("a bad film", edit, NEIGHBOUR, True, "why").kind == PROBE
    [antonym] = antonym_swaps("a good film")
    assert antonym.kind == CHANGES
    assert edit_claim(antonym.kind, original_label="positive", labels=BINARY).label == "negative"
    assert {p.kind for p in synonym_swaps("the movie is a delight .")} == {KEEPS}
    assert {p.kind for p in negation_edits("it is funny")} == {CHANGES}


def test_a_stated_pair_keeps_or_changes_by_its_label_or_answers():
    assert stated_kind("positive", "positive") == KEEPS
    assert stated_kind("positive", "negative") == CHANGES
    assert stated_kind(("UCD",), ("UCD",)) == KEEPS
    assert stated_kind(("UCD",), ("the UCD team",)) == CHANGES


def test_only_a_machine_made_pair_that_states_a_change_is_unverified():
    assert pair_unverified(machine_made=True, original="positive", variant="negative")
    # The original's label (or answers): no change is claimed, nothing is left to verify.
    assert not pair_unverified(machine_made=True, original="positive", variant="positive")
    assert not pair_unverified(machine_made=True, original=("UCD",), variant=("UCD",))
    assert pair_unverified(machine_made=True, original=("UCD",), variant=("the UCD team",))
    # A person's pair is that person's claim, as any pair is.
    assert not pair_unverified(machine_made=False, original="positive", variant="negative")


def test_the_rule_loads_no_language_resource_and_the_library_no_torch():
    code = (
        "import sys, edits.claims\n"
        "heavy = ('torch', 'lemminflect', 'wordfreq', 'nltk', 'fim_engine', 'django')\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in heavy], sorted(sys.modules)\n"
        "import edits.perturbations, edits.wordnet\n"
        "from edits import Claim, antonym_swaps, load_wordnet, split_words\n"
        "assert not [m for m in sys.modules if m.split('.')[0] in ('torch', 'fim_engine')]\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
