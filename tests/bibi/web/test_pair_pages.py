"""The guidance pages of a sentence-pair task (NLI): the ranking shows both texts and shades
the words of the one breakers may edit, the pair editor edits and diffs that text, tries the
whole pair on the systems, offers suggestions that carry their pair, and adds what a machine
made as label unverified; the item explorer diffs each text."""

from __future__ import annotations

import copy
import html
from types import SimpleNamespace

import pytest
from django.db import connection
from django.template import Context, Engine
from django.test.utils import CaptureQueriesContext

from bibi.pairs.models import Pair
from bibi.sharedtasks.models import SharedTask
from bibi.tasktypes import SENTENCE_PAIRS
from bibi.web.diff import text_diffs

from ..nlicast import build_nli_task
from .conftest import page_client
from .test_page_queries import MAX_QUERIES

pytestmark = pytest.mark.embedded

GUIDANCE = "/tasks/snli/guidance/"
EDITOR = "/tasks/snli/guidance/n1/edit/"
PREMISE, HYPOTHESIS = "the film is fun", "it is good"


@pytest.fixture(scope="module")
def module_nli(kept_rows, tmp_path_factory):
    root = tmp_path_factory.mktemp("nli")
    return kept_rows(lambda: build_nli_task(root)[0])


@pytest.fixture
def nli(module_nli, db):
    """The NLI task with its two hosted pair models (``nlicast.build_nli_task``), built once
    for the module; each test has a copy, and what it changes is undone after it."""
    return copy.deepcopy(module_nli)


def post(cast, action: str, **fields):
    body = {"original_id": "n1", "variant_label": "entailment", "action": action, **fields}
    return page_client(cast, "breaker").post(EDITOR, body)


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def paragraph(text: str, marker: str) -> str:
    """The paragraph of ``text`` that holds ``marker``."""
    at = text.index(marker)
    return text[text.rindex("<p", 0, at) : text.index("</p>", at)]


def test_the_ranking_shows_both_texts_and_shades_the_hypothesis_only(nli):
    response = page_client(nli, "breaker").get(GUIDANCE)

    assert response.status_code == 200
    text = text_of(response)
    premise = paragraph(text, "Premise:</span> the film is fun")
    after = text.index("Hypothesis:</span>", text.index(premise))
    hypothesis = text[after : text.index("</p>", after)]
    assert "shade-" not in premise
    assert '<span class="shade-4"' in hypothesis and ">good</span>" in hypothesis
    assert "Most leverage: “good”" in text


def test_the_editor_edits_and_diffs_the_hypothesis(nli):
    client = page_client(nli, "breaker")
    with CaptureQueriesContext(connection) as queries:
        page = client.get(EDITOR)
    assert page.status_code == 200
    assert len(queries) <= MAX_QUERIES, [query["sql"] for query in queries]
    text = text_of(page)
    assert 'name="variant_text_b"' in text and 'name="variant_text"' not in text
    assert "Variant hypothesis" in text and "Variant premise" not in text
    assert 'id="original-text" data-text="the film is fun"' in text
    assert 'id="original-text_b" data-text="it is good"' in text
    assert 'data-diff-field="variant_text_b" data-text="it is good"' in text

    checked = post(nli, "check", variant_text_b="it is bad", variant_label="contradiction")

    assert checked.status_code == 200
    text = text_of(checked)
    assert "The pair passes every check." in text
    assert "[removed: </span>good<" in text and "[added: </span>bad<" in text
    assert not Pair.objects.filter(pair_set__team=nli.breaker_team).exists()


def test_with_both_texts_editable_each_has_its_field_and_diff(nli):
    SharedTask.objects.filter(id=nli.shared_task.id).update(editable_text="both")

    response = post(
        nli, "check", variant_text="", variant_text_b="it is bad", variant_label="contradiction"
    )

    assert response.status_code == 200
    text = text_of(response)
    assert "The pair passes every check." in text
    assert "Variant premise" in text and "Variant hypothesis" in text
    # A text left empty is the original's: its diff shows no change.
    premise = paragraph(text, 'id="diff-variant-text"')
    assert "<ins>" not in premise and "the film is fun" in premise
    assert "[added: </span>bad<" in paragraph(text, 'id="diff-variant-text_b"')
    assert "data-blank-is-original" in text


def test_trying_a_draft_runs_the_whole_pair_on_the_systems(nli, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process; the browser test uses a real worker")

    response = post(nli, "try", variant_text_b="it is bad")

    assert response.status_code == 200
    text = text_of(response)
    assert "What the systems do with your variant" in text
    assert "Premise:</span> the film is fun<br>" in text and "Hypothesis:</span> it is bad" in text
    # Both systems move to contradiction: a break of each if the label is kept.
    assert "2 of 2 systems would break" in text and "contradiction" in text


def test_suggestions_edit_the_hypothesis_and_carry_their_pair(nli, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process; the browser test uses a real worker")

    response = page_client(nli, "breaker").post(EDITOR, {"action": "suggest"})

    assert response.status_code == 200
    text = text_of(response)
    assert "One word of the hypothesis replaced" in text
    row = text[text.index('<span class="muted">Hypothesis:</span> it is bad</td>') :][:1500]
    assert "label unverified" in row
    assert 'name="variant_text" value="the film is fun"' in row
    assert 'name="variant_text_b" value="it is bad"' in row
    assert 'name="machine_text_b" value="it is bad"' in row
    # Three labels: the antonym claims none, so "Try" starts from the original's.
    assert 'name="variant_label" value="entailment"' in row


@pytest.mark.parametrize(
    ("hypothesis", "unverified"), [("it is bad", True), ("it is awful", False)]
)
def test_a_machines_pair_with_a_new_label_is_added_label_unverified(nli, hypothesis, unverified):
    response = post(
        nli,
        "add",
        variant_text_b=hypothesis,
        variant_label="contradiction",
        machine_text="the film is fun",
        machine_text_b="it is bad",
    )

    assert response.status_code == 302, text_of(response)[:2000]
    (pair,) = Pair.objects.filter(pair_set__team=nli.breaker_team)
    assert (pair.variant_text, pair.variant_text_b) == (PREMISE, hypothesis)
    assert pair.label_unverified is unverified


def test_the_explorer_diffs_each_text_of_a_pair():
    item = SimpleNamespace(
        original_text=PREMISE,
        original_text_b=HYPOTHESIS,
        variant_text=PREMISE,
        variant_text_b="it is bad",
        original_label="entailment",
        variant_label="contradiction",
    )
    texts = text_diffs(SENTENCE_PAIRS, *SENTENCE_PAIRS.pair_items(item), ("text", "text_b"))
    template = Engine.get_default().get_template("web/tasktypes/label/explorer_texts.html")

    page = template.render(Context({"entry": {"item": item, "texts": texts}}))

    original, variant = page.split("<dt>Variant")
    assert '<span class="muted">Premise:</span> the film is fun' in original
    assert '<br><span class="muted">Hypothesis:</span> it is' in original
    assert "[removed: </span>good<" in original
    assert "[added: </span>bad<" in variant and "<del>" not in variant
