"""The sentence-pair type's own rules, on plain values: which text a pair may edit, how its
original is found, its files and its cell keys."""

from __future__ import annotations

import pytest

from bibi.tasktypes import SENTENCE_PAIRS, task_type
from bibi.tasktypes.examples import ExistingExamples, ImportOptions
from bibi.tasktypes.items import item_key, text_digest
from bibi.tasktypes.pair_files import read_pair_file
from bibi.tasktypes.rules import PairInput, PairRules, StarterExample

LABELS = ("contradiction", "entailment", "neutral")
PREMISE = "A man is riding a red motorcycle with a small child sitting in front of him."
HYPOTHESIS = "A man rides his motorcycle with a child."
STARTER = SENTENCE_PAIRS.starter_index(
    [
        StarterExample(id=1, external_id="p1", text=PREMISE, label="entailment", text_b=HYPOTHESIS),
        StarterExample(
            id=2,
            external_id="p2",
            text="Two dogs run on the beach.",
            label="neutral",
            text_b="Two dogs play fetch.",
        ),
    ]
)


def rules(editable: str = "second") -> PairRules:
    return PairRules(
        labels=LABELS,
        strategy_tags=("semantics", "other"),
        editable=SENTENCE_PAIRS.editable_fields(editable),
    )


def check(editable: str = "second", **fields):
    pair = PairInput(**{"row": 2, "original_id": "p1", "variant_label": "contradiction", **fields})
    return SENTENCE_PAIRS.check_pair(pair, starter=STARTER, rules=rules(editable))


def test_it_is_registered_with_two_texts_and_labels():
    assert task_type("sentence_pair_classification") is SENTENCE_PAIRS
    assert SENTENCE_PAIRS.labelled
    assert [s.title for s in SENTENCE_PAIRS.segments] == ["Premise", "Hypothesis"]
    assert SENTENCE_PAIRS.pair_fields("variant") == ("variant_text", "variant_text_b")


@pytest.mark.parametrize(
    ("setting", "editable"),
    [("second", ("text_b",)), ("first", ("text",)), ("both", ("text", "text_b"))],
)
def test_the_task_setting_says_which_text_a_breaker_may_edit(setting, editable):
    assert SENTENCE_PAIRS.editable_fields(setting) == editable
    assert SENTENCE_PAIRS.model_options(type("Task", (), {"editable_text": setting})()) == {
        "editable": {"second": "hypothesis", "first": "premise", "both": "both"}[setting]
    }


def test_an_edited_hypothesis_passes_and_keeps_the_premise():
    checked, problems = check(variant_text_b="A man rides his car with a child.")
    assert problems == []
    assert checked.variant_text == PREMISE
    assert checked.fields == {
        "original_text_b": HYPOTHESIS,
        "variant_text_b": "A man rides his car with a child.",
    }
    assert checked.edit_distance == 1


def test_an_edited_premise_is_refused_when_only_the_hypothesis_may_change():
    _, problems = check(variant_text=PREMISE.replace("red", "blue"))
    assert [p.kind for p in problems] == ["fixed"]
    assert "the variant premise differs from the original's" in problems[0]
    assert problems[0].endswith("this task lets breakers edit only the hypothesis")
    assert problems[0].setting == "editable_text"


def test_either_text_or_both_may_change_when_the_task_says_both():
    checked, problems = check(
        "both",
        variant_text=PREMISE.replace("red", "blue"),
        variant_text_b="A man rides his truck with a child.",
    )
    assert problems == [] and checked.edit_distance == 2


def test_a_pair_that_changes_neither_text_is_refused():
    _, problems = check(variant_text_b=HYPOTHESIS)
    assert [p.kind for p in problems] == ["unchanged"]


def test_the_minimal_edit_rules_apply_to_the_edited_text():
    _, problems = check(variant_text_b="Nobody at all is anywhere near any vehicle today.")
    assert {p.kind for p in problems} == {"shared_tokens", "edit_distance"}
    assert all(p.startswith("the variant hypothesis") for p in problems)


def test_the_original_is_found_by_its_two_texts_and_its_label_checked():
    pair = PairInput(
        row=3,
        original_text=PREMISE,
        original_text_b=HYPOTHESIS,
        original_label="neutral",
        variant_text_b="A man rides his car with a child.",
        variant_label="contradiction",
    )
    _, problems = SENTENCE_PAIRS.check_pair(pair, starter=STARTER, rules=rules())
    assert problems == ["the original's label is 'entailment' in the starter set, not 'neutral'"]
    alone = PairInput(row=3, original_text=PREMISE, variant_text_b="x", variant_label="neutral")
    _, problems = SENTENCE_PAIRS.check_pair(alone, starter=STARTER, rules=rules())
    assert problems[0] == (
        "the pair names no original: give its starter-set id (or its premise and hypothesis)"
    )


def test_a_label_outside_the_set_is_refused():
    _, problems = check(variant_text_b="A man rides his car with a child.", variant_label="yes")
    assert [p.kind for p in problems] == ["label"]


def test_a_set_may_not_hold_the_same_variant_twice():
    pairs = [
        PairInput(
            row=row, original_id="p1", variant_text_b="A man rides his car.", variant_label=gold
        )
        for row, gold in ((2, "contradiction"), (3, "neutral"))
    ]
    checked, errors = SENTENCE_PAIRS.check_pairs(pairs, starter=STARTER, rules=rules())
    assert len(checked) == 1
    assert [(e.line, e.reason) for e in errors] == [(3, "the same variant as row 2")]


def test_a_pair_file_in_the_sentence_pairs_layout_reads_each_text():
    data = (
        b"original_id,variant_hypothesis,variant_label,tags\n"
        b"p1,A man rides his car with a child.,contradiction,semantics\n"
    )
    read = read_pair_file(data, filename="p.csv", layouts=SENTENCE_PAIRS.pair_layouts)
    assert read.layout == "sentence_pairs"
    pair = read.pairs[0]
    assert (pair.original_id, pair.variant_text, pair.variant_text_b) == (
        "p1",
        "",
        "A man rides his car with a child.",
    )


def test_json_pairs_name_premise_and_hypothesis():
    pair = SENTENCE_PAIRS.pair_input(
        1, {"original_id": "p2", "variant_premise": "Two cats run.", "variant_label": "neutral"}
    )
    assert (pair.variant_text, pair.variant_text_b) == ("Two cats run.", "")


def test_the_snli_layout_imports_without_ids():
    data = (
        "sentence1\tsentence2\tgold_label\n"
        f"{PREMISE}\t{HYPOTHESIS}\tentailment\n"
        'A man walks.\t"The man works for ""Camden""."\tneutral\n'
    ).encode()
    upload = SENTENCE_PAIRS.examples_read(
        data, filename="dev.tsv", options=ImportOptions(), labels=LABELS
    )
    checked = SENTENCE_PAIRS.examples_check(upload, existing=ExistingExamples(), split="starter")
    assert not checked.errors
    assert checked.examples == [
        {"external_id": "2", "text": PREMISE, "text_b": HYPOTHESIS, "label": "entailment"},
        {
            "external_id": "3",
            "text": "A man walks.",
            "text_b": 'The man works for "Camden".',
            "label": "neutral",
        },
    ]


def test_one_item_has_one_label_and_a_missing_hypothesis_is_named():
    data = (
        "id,premise,hypothesis,label\n"
        f"a,{PREMISE},{HYPOTHESIS},entailment\n"
        f"b,{PREMISE},{HYPOTHESIS},neutral\n"
        "c,A man walks.,,neutral\n"
    ).encode()
    upload = SENTENCE_PAIRS.examples_read(
        data, filename="x.csv", options=ImportOptions(), labels=LABELS
    )
    checked = SENTENCE_PAIRS.examples_check(upload, existing=ExistingExamples(), split="starter")
    assert [(e.line, e.reason) for e in checked.errors.first] == [
        (
            3,
            "the same item is on line 2 with the label 'entailment', here 'neutral': "
            "one item has one label",
        ),
        (4, "the hypothesis is empty"),
    ]


def test_an_item_of_two_texts_has_its_own_cell_key():
    item = (PREMISE, HYPOTHESIS)
    assert SENTENCE_PAIRS.item_key(item) == item_key(item) != text_digest(PREMISE)
    assert SENTENCE_PAIRS.model_input(item) == item
