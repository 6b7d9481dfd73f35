"""The minimal-pair rules, on plain values: every check passes and fails where it should."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.exceptions import ValidationError

from bibi.labelmaps import LabelLookup
from bibi.tasktypes import TEXT_CLASSIFICATION
from bibi.tasktypes.rules import PairInput, PairRules, StarterExample, StarterIndex
from bibi.tasktypes.tokens import (
    tokenize,
)
from bibi.texts import normalize_text

from ..conftest import STARTER

RULES = PairRules(
    labels=("negative", "positive"),
    strategy_tags=("morphosyntax", "semantics", "pragmatics", "world_knowledge", "other"),
)
INDEX = TEXT_CLASSIFICATION.starter_index(
    StarterExample(id=n, external_id=eid, text=text, label=label)
    for n, (eid, text, label) in enumerate(STARTER, start=1)
)
LONG = "the film is a slow , quiet and oddly moving study of grief and memory ."

BACKGROUND_PAIRS = [
    ("s1", "I'm mad for this movie!", "positive"),
    ("s2", "[Bettis] has a smoldering, humorless intensity that's hilarious.", "positive"),
    ("s3", "It's not harmless, sure, but it's also not charmless.", "positive"),
    ("s4", 'Russell is "terrific" as coach Herb Brooks.', "negative"),
]


def pair(**fields) -> PairInput:
    base = {"row": 2, "original_id": "s1", "variant_text": "I adore this movie!"}
    return PairInput(**{"variant_label": "positive", **base, **fields})


def problems(rules: PairRules = RULES, starter: StarterIndex = INDEX, **fields) -> list[str]:
    return TEXT_CLASSIFICATION.check_pair(pair(**fields), starter=starter, rules=rules)[1]


# --- Texts ------------------------------------------------------------------------------


def test_normalization_composes_unicode_and_collapses_whitespace():
    assert normalize_text("  Cafe\u0301\tcrème \n brûlée  ") == "Café crème brûlée"


# --- The BACKGROUND.md pairs --------------------------------------------------------------


@pytest.mark.parametrize(("original_id", "variant", "label"), BACKGROUND_PAIRS)
def test_every_background_pair_passes_with_the_default_rules(original_id, variant, label):
    checked, reasons = TEXT_CLASSIFICATION.check_pair(
        pair(original_id=original_id, variant_text=variant, variant_label=label),
        starter=INDEX,
        rules=RULES,
    )
    assert reasons == []
    assert checked.variant_text == variant
    assert checked.original.external_id == original_id


def test_the_widest_background_pair_is_three_edits_within_a_limit_of_four():
    checked, _ = TEXT_CLASSIFICATION.check_pair(
        pair(variant_text="I'm mad for this movie!"), starter=INDEX, rules=RULES
    )
    assert checked.edit_distance == 3
    assert RULES.edit_limit(len(tokenize("I love this movie!"))) == 4


# --- Each check fails where it should -----------------------------------------------------


def test_it_refuses_an_identical_variant():
    assert problems(variant_text=" I love   this movie! ") == [
        "the variant is identical to the original"
    ]


def test_it_refuses_a_variant_that_differs_only_in_spacing():
    assert problems(variant_text="I love this movie !") == [
        "the variant has the same tokens as the original (only spacing differs)"
    ]


def test_it_refuses_a_variant_that_shares_less_than_half_its_tokens():
    # Four edits are within the limit, but only "!" of the variant's four tokens is shared.
    assert problems(variant_text="We adore it!") == [
        "the variant shares 25% of its tokens with the original; at least 50% must be shared"
    ]
    assert problems(variant_text="I adore it!") == []


def test_it_refuses_a_variant_too_many_token_edits_away():
    starter = TEXT_CLASSIFICATION.starter_index(
        [StarterExample(id=9, external_id="long", text=LONG, label="positive")]
    )
    # 16 tokens: the limit is max(4, 0.35 * 16 = 5.6) = 5 edits.
    five = LONG.replace("slow", "dull").replace("quiet", "loud").replace("oddly", "never")
    five = five.replace("grief", "joy").replace("memory", "loss")
    six = five.replace("study", "essay")
    assert problems(starter=starter, original_id="long", variant_text=five) == []
    assert problems(starter=starter, original_id="long", variant_text=six) == [
        "the variant is 6 token edits away from the original; at most 5 are allowed "
        "(the larger of 4 and 35% of the original's 16 tokens)"
    ]


def test_the_edit_limits_are_the_tasks():
    strict = dataclasses.replace(RULES, max_edit_distance=1, max_edit_ratio=0.1)
    assert problems(rules=strict, variant_text="I'm mad for this movie!") == [
        "the variant is 3 token edits away from the original; at most 1 are allowed "
        "(the larger of 1 and 10% of the original's 5 tokens)"
    ]
    lenient = dataclasses.replace(RULES, min_shared_token_ratio=0.2)
    assert problems(rules=lenient, variant_text="I truly and deeply adore this film") != []
    assert problems(rules=lenient, variant_text="I truly adore this film!") == []


def test_it_refuses_a_label_outside_the_label_set():
    assert problems(variant_label="neutral") == [
        "the variant's label 'neutral' is not one of this task's labels (negative, positive); "
        "give a label map to translate the file's labels, e.g. 0=negative,1=positive"
    ]
    assert problems(variant_label=" ") == ["the variant has no label"]


def test_a_label_map_translates_the_files_labels_however_integers_are_signed():
    lookup = LabelLookup.build({"+1": "positive"}, labels=RULES.labels)
    for spelling in ("+1", "1", "01"):
        checked, reasons = TEXT_CLASSIFICATION.check_pair(
            pair(variant_label=spelling), starter=INDEX, rules=RULES, labels=lookup
        )
        assert reasons == []
        assert checked.variant_label == "positive"


def test_a_label_map_to_a_label_outside_the_task_refuses_the_whole_set():
    with pytest.raises(ValidationError) as raised:
        TEXT_CLASSIFICATION.check_pairs(
            [pair()], starter=INDEX, rules=RULES, label_map={"1": "pos"}
        )
    assert raised.value.messages == [
        "The label map turns '1' into 'pos', which is not one of this task's labels "
        "(negative, positive)."
    ]


def test_it_refuses_a_missing_rationale_only_where_the_task_requires_one():
    required = dataclasses.replace(RULES, require_rationale=True)
    assert problems(rules=required, rationale="  ") == [
        "this task requires a rationale for every pair"
    ]
    assert problems(rules=required, rationale="an idiom") == []
    assert problems(rationale="") == []


def test_it_refuses_an_original_id_not_in_the_starter_set():
    assert problems(original_id="d1") == ["the original id 'd1' is not in the starter set"]


def test_it_refuses_a_pair_that_names_no_original():
    assert problems(original_id="") == [
        "the pair names no original: give its starter-set id (or its text)"
    ]


def test_a_given_original_text_must_match_the_example_after_normalization():
    assert problems(original_text="I  love this\u00a0movie!\n") == []
    assert problems(original_text="I love this film!") == [
        "the original text does not match starter example 's1': it is 'I love this movie!'"
    ]


def test_an_original_can_be_named_by_its_text_alone():
    checked, reasons = TEXT_CLASSIFICATION.check_pair(
        pair(original_id="", original_text="I love this movie!"), starter=INDEX, rules=RULES
    )
    assert reasons == []
    assert checked.original.external_id == "s1"
    assert problems(original_id="", original_text="I hate this movie!") == [
        "the original text is not a sentence of the starter set"
    ]


def test_a_given_original_label_must_be_the_examples():
    assert problems(original_label="positive") == []
    assert problems(original_label="negative") == [
        "the original's label is 'positive' in the starter set, not 'negative'"
    ]


def test_it_refuses_a_text_over_the_length_limit():
    short = dataclasses.replace(RULES, max_text_chars=15)
    assert problems(rules=short) == ["the variant has 19 characters; this task allows at most 15"]


def test_it_refuses_an_empty_variant_and_control_characters():
    assert problems(variant_text="  \n ") == ["the variant is empty"]
    assert problems(variant_text="I adore\x00 this movie!") == [
        "the variant has an invisible character: U+0000 (a control character)"
    ]


# The probe's invisible edits of "I love this movie!": each keeps the label and looks the same.
INVISIBLE_EDITS = [
    ("I love this mo\u200bvie!", "U+200B ZERO WIDTH SPACE"),
    ("I love this mo\u00advie!", "U+00AD SOFT HYPHEN"),
    ("I love this \ufeffmovie!", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("I love this \u202emovie!", "U+202E RIGHT-TO-LEFT OVERRIDE"),
    ("I love this mo\u2060vie!", "U+2060 WORD JOINER"),
]


@pytest.mark.parametrize(("variant", "name"), INVISIBLE_EDITS)
def test_it_refuses_a_variant_that_differs_by_an_invisible_character(variant, name):
    assert problems(variant_text=variant, variant_label="positive") == [
        f"the variant has an invisible character: {name}"
    ]


def test_it_refuses_latin_letters_swapped_for_cyrillic_look_alikes():
    assert problems(variant_text="I l\u043eve this m\u043evie!") == [
        "the variant has words that mix Latin and Cyrillic letters: "
        "'l\u043eve' (\u043e is U+043E CYRILLIC SMALL LETTER O), "
        "'m\u043evie' (\u043e is U+043E CYRILLIC SMALL LETTER O)"
    ]


def test_a_given_original_text_with_an_invisible_character_is_named_as_such():
    assert problems(original_id="", original_text="I love this movie!\u200b") == [
        "the original text has an invisible character: U+200B ZERO WIDTH SPACE"
    ]


def test_a_rationale_may_quote_a_look_alike_but_hold_no_invisible_character():
    assert problems(rationale="the Cyrillic \u043e in 'm\u043evie' looks Latin") == []
    assert problems(rationale="swap\u202e") == [
        "the rationale has an invisible character: U+202E RIGHT-TO-LEFT OVERRIDE"
    ]


@pytest.mark.parametrize(
    "variant",
    [
        "I love this naïve movie!",
        "Zoë loves this movie!",
        "I love this фильм!",
        "I love this ταινία!",
        "I love this movie! 👩\u200d💻",
        "I love this 映画 (えいが)!",
        "I love this 5µm COVID-19 movie!",
    ],
)
def test_accented_latin_other_scripts_and_emoji_pass(variant):
    assert problems(variant_text=variant) == []


def test_tags_come_from_the_tasks_vocabulary():
    checked, reasons = TEXT_CLASSIFICATION.check_pair(
        pair(tags=("Semantics", "world knowledge", "semantics")), starter=INDEX, rules=RULES
    )
    assert reasons == []
    assert checked.tags == ("semantics", "world_knowledge")
    assert problems(tags=("sarcasm",)) == [
        "the tag 'sarcasm' is not one of morphosyntax, semantics, pragmatics, "
        "world_knowledge, other"
    ]


# --- A whole set --------------------------------------------------------------------------


def test_it_refuses_the_same_variant_twice_in_one_set():
    pairs = [pair(row=2), pair(row=3, original_id="s1"), pair(row=4, variant_text="I adore it!")]
    checked, errors = TEXT_CLASSIFICATION.check_pairs(pairs, starter=INDEX, rules=RULES)
    assert [(e.line, e.reason) for e in errors] == [(3, "the same variant as row 2")]


def test_it_lists_every_failing_pair_with_its_row_in_order():
    pairs = [
        pair(row=2, variant_label="meh"),
        pair(row=3, variant_text="I adore the movie!"),
        pair(row=4, original_id="nope", variant_text="I adore that movie!"),
    ]
    _, errors = TEXT_CLASSIFICATION.check_pairs(pairs, starter=INDEX, rules=RULES)
    assert [e.line for e in errors] == [2, 4]


def test_a_draft_checks_against_the_variants_it_already_has():
    _, errors = TEXT_CLASSIFICATION.check_pairs(
        [pair(row=7)], starter=INDEX, rules=RULES, taken_variants={("I adore this movie!",): 3}
    )
    assert [(e.line, e.reason) for e in errors] == [(7, "the same variant as row 3")]


# --- Edits that systems may not see (a warning, not a problem) -------------------------------


@pytest.mark.parametrize(
    ("variant", "warned_at"),
    [
        ("a b c d e X g h", None),  # token 6: the last one surely read
        ("a b c d e f X h", 7),
        ("a b c d e f g h i", 9),  # appended: the texts differ only past the cut
        ("X b c d e f g h", None),
    ],
)
def test_an_edit_past_the_sequence_length_is_warned_of_by_where_it_begins(variant, warned_at):
    rules = dataclasses.replace(RULES, max_sequence_length=12)
    starter = TEXT_CLASSIFICATION.starter_index(
        [StarterExample(id=9, external_id="x", text="a b c d e f g h", label="positive")]
    )
    checked, found = TEXT_CLASSIFICATION.check_pair(
        pair(original_id="x", variant_text=variant), starter=starter, rules=rules
    )
    assert found == []
    if warned_at is None:
        assert checked.warnings == ()
    else:
        [warning] = checked.warnings
        assert warning.startswith(f"the edit begins at token {warned_at}, past the first 6 tokens")
