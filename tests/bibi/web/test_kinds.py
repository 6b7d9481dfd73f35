"""The pages' parts of each task type (``bibi.web.kinds``): every fragment and word a page
asks for exists for every type, and a labelled type without fragments of its own reads as
the label ones, each of its segments under its title. No database: the types are pure."""

from __future__ import annotations

import math
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.template import Context, Engine
from django.template.loader import select_template

from bibi.tasktypes import SPAN_EXTRACTION, TEXT_CLASSIFICATION, Segment, task_types
from bibi.tasktypes.labelled import LabelledTaskType
from bibi.web.forms import PairAddForm
from bibi.web.kinds import PAGE_KINDS, fragment_names, page_word, variant_initial
from bibi.web.templatetags.bibi_web import percent

TEMPLATES = Path(__file__).resolve().parents[3] / "platform" / "bibi" / "web" / "templates"
ASKED_FRAGMENTS = re.compile(r'kind_include "([a-z_]+)"')
ASKED_WORDS = re.compile(r'kind_word:"([a-z_]+)"')


class TwoTexts(LabelledTaskType):
    """A labelled type of two segments, not registered, with no fragment of its own."""

    key = "two_texts_for_a_test"
    name = "Two texts"
    segments = (
        Segment("text", "Premise", editable="setting"),
        Segment("text_b", "Hypothesis", editable="setting"),
    )


def _asked(pattern: re.Pattern[str]) -> set[str]:
    return {
        name
        for path in TEMPLATES.rglob("*.html")
        for name in pattern.findall(path.read_text(encoding="utf-8"))
    }


def _task(kind, **fields):
    values = {
        "labels": ["entailment", "contradiction"],
        "strategy_tags": ["negation"],
        "editable_text": "",
    }
    return SimpleNamespace(kind=kind, **values | fields)


def _render(source: str, **context) -> str:
    template = Engine.get_default().from_string("{% load bibi_web %}" + source)
    return template.render(Context(context))


def test_every_fragment_a_page_asks_for_exists_for_every_type():
    asked = _asked(ASKED_FRAGMENTS)
    assert {"pair_set_cells", "editor_original", "suggestions"} <= asked
    for kind in [*task_types(), TwoTexts()]:
        for name in asked:
            select_template(fragment_names(kind, name))


def test_every_word_a_page_asks_for_exists_for_every_kind_of_answer():
    asked = _asked(ASKED_WORDS)
    assert {"accuracy", "answer", "pair_column"} <= asked
    for kind in [*task_types(), TwoTexts()]:
        assert asked <= set(PAGE_KINDS.of(kind).words)
    label, span = (PAGE_KINDS.of(kind).words for kind in (TEXT_CLASSIFICATION, SPAN_EXTRACTION))
    assert set(label) == set(span)


def test_a_type_finds_its_own_fragment_first_then_its_answer_kinds():
    assert fragment_names(SPAN_EXTRACTION, "pair_rules") == [
        "web/tasktypes/span_extraction/pair_rules.html",
        "web/tasktypes/span/pair_rules.html",
    ]
    assert fragment_names(TwoTexts(), "pair_rules")[-1] == "web/tasktypes/label/pair_rules.html"


def test_a_word_no_page_kind_has_is_refused_with_the_words_it_has():
    with pytest.raises(LookupError, match="no word 'colour'.*accuracy"):
        page_word(_task(TEXT_CLASSIFICATION), "colour")


def test_the_words_differ_by_what_systems_answer():
    assert page_word(_task(TEXT_CLASSIFICATION), "accuracy") == "accuracy"
    assert page_word(_task(SPAN_EXTRACTION), "accuracy") == "answer accuracy"
    assert page_word(_task(TwoTexts()), "answer") == "label"


def test_a_fragment_reads_inside_a_sentence_without_its_last_line_break():
    page = _render(
        '<p>{% kind_include "task_card" %} · private</p>',
        shared_task=_task(TEXT_CLASSIFICATION, labels=["neg", "pos"]),
    )
    assert page == "<p>Labels: neg, pos · private</p>"


def test_an_item_of_one_text_is_drawn_as_its_text():
    example = SimpleNamespace(text="a <fine> film", label="pos")
    page = _render(
        '<tr>{% kind_include "example_head" %}</tr><tr>{% kind_include "example_cells" %}</tr>',
        shared_task=_task(TEXT_CLASSIFICATION),
        example=example,
        labels_visible=True,
    )
    assert '<th scope="col">Text</th><th scope="col">Label</th>' in page
    assert "<td>a &lt;fine&gt; film</td>" in page and "<td>pos</td>" in page


def test_a_labelled_type_without_fragments_draws_each_segment_under_its_title():
    shared_task = _task(TwoTexts())
    example = SimpleNamespace(text="A man sleeps.", text_b="A man rests.", label="entailment")
    head = _render('{% kind_include "example_head" %}', shared_task=shared_task, labels_visible=1)
    assert head == (
        '<th scope="col">Premise</th><th scope="col">Hypothesis</th><th scope="col">Label</th>'
    )
    cells = _render('{% kind_include "example_cells" %}', shared_task=shared_task, example=example)
    assert "<td>A man sleeps.</td><td>A man rests.</td>" in cells
    pair = SimpleNamespace(
        original_text="A man sleeps.",
        original_text_b="A man rests.",
        variant_text="A man sleeps.",
        variant_text_b="A man <runs>.",
        original_label="entailment",
        variant_label="contradiction",
        effective_label="contradiction",
        label_unverified=False,
    )
    row = _render('{% kind_include "contestable_cells" %}', shared_task=shared_task, pair=pair)
    assert (
        '<td><span class="muted">Premise:</span> A man sleeps.<br>'
        '<span class="muted">Hypothesis:</span> A man &lt;runs&gt;.</td>'
    ) in row
    assert "entailment → contradiction" in row


def test_a_pair_form_asks_for_each_segment_the_task_lets_breakers_edit():
    one = PairAddForm(shared_task=_task(TEXT_CLASSIFICATION))
    assert one.fields["variant_text"].label == "Variant"
    assert "variant_text_b" not in one.fields
    second = PairAddForm(shared_task=_task(TwoTexts(), editable_text="second"))
    assert [name for name in second.fields if name.startswith("variant_")] == [
        "variant_text_b",
        "variant_label",
    ]
    assert second.fields["variant_text_b"].label == "Variant hypothesis"
    both = PairAddForm(shared_task=_task(TwoTexts(), editable_text="both"))
    assert list(both.fields)[:3] == ["original_id", "variant_text", "variant_text_b"]


def test_a_pair_form_starts_from_the_originals_editable_texts():
    example = SimpleNamespace(text="A man sleeps.", text_b="A man rests.")
    assert variant_initial(_task(TwoTexts(), editable_text="second"), example) == {
        "variant_text_b": "A man rests."
    }
    assert variant_initial(_task(SPAN_EXTRACTION), None) == {"variant_text": ""}


def test_a_share_without_a_number_reads_as_a_dash():
    assert percent(math.nan) == "—"
    assert percent(None) == "—"
    assert percent(0.875) == "87.5%"
