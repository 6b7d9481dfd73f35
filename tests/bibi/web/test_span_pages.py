"""The pages of a span task (QA-SRL): the pair editor and the single-pair form, where the
variant's answer is picked by its offsets (what the page's script sends for a selection) or
typed, and the item explorer, where the gold answers and each system's answer are marked in
both sentences."""

from __future__ import annotations

import html
import re
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils.html import strip_tags

from bibi.celery import app
from bibi.evaluation import compute
from bibi.evaluation import services as results_services
from bibi.guidance.suggest import SuggestRequest, suggest_start
from bibi.pairs.models import Pair

from ..evaluation.test_span_flow import pairs_predict, span_task  # noqa: F401 (a fixture)
from ..guidance.test_span_suggest import right
from ..pairs.conftest import start_phase_now
from ..spancast import UCD, build_span_cast
from ..systems.span_cast import upload_and_validate
from .conftest import WORKER_BOUND_MS, page_client

pytestmark = pytest.mark.django_db

EDITOR = "/tasks/qasrl/guidance/s1/edit/"
# s1 asks "who beat someone?" (UCD). In this variant UCD beats its own second team, so "UCD"
# occurs twice: typed, it names no span; selected, the first is the one meant.
TWICE = UCD.replace("St Vincents", "UCD B")
SECOND_UCD = TWICE.index("UCD", 1)


@pytest.fixture
def breaker():
    cast = build_span_cast()
    return cast, page_client(cast, "breaker")


def draft_pairs(cast):
    return list(Pair.objects.filter(pair_set__team=cast.breaker_team))


def test_the_editor_shows_the_question_and_the_gold_answer_and_no_label(breaker):
    _, client = breaker
    page = client.get(EDITOR).content.decode()
    assert '<dd id="question">who beat someone?</dd>' in page
    assert (
        '<mark class="answer answer-start answer-end"><span class="visually-hidden">[gold answer: </span>UCD'
        '<span class="visually-hidden">]</span></mark>' in page
    )
    assert 'name="variant_answer"' in page and 'name="answer_start"' in page
    assert "data-span-answer" in page and "span_answer.js" in page
    assert 'name="variant_label"' not in page


def test_a_selected_answer_is_stored_at_its_offsets_in_the_stored_variant(breaker):
    cast, client = breaker
    # Typed with doubled spaces: the selection was measured in what was typed, and lands on
    # the same words of the variant as stored (one space between words).
    typed = TWICE.replace(" , by", "  ,  by")
    start = typed.index("UCD", 1)
    response = client.post(
        EDITOR,
        {
            "action": "add",
            "original_id": "s1",
            "variant_text": typed,
            "variant_answer": "UCD",
            "answer_start": start,
            "answer_end": start + 3,
            "tags": ["semantics"],
        },
    )
    assert response.status_code == 302, response.content.decode()[-3000:]
    (pair,) = draft_pairs(cast)
    assert pair.variant_text == TWICE
    assert pair.question == "who beat someone?"
    assert pair.variant_answers == [{"start": SECOND_UCD, "end": SECOND_UCD + 3, "text": "UCD"}]
    assert pair.variant_label == "" and pair.tags == ["semantics"]


def test_a_typed_answer_is_found_in_the_variant(breaker):
    cast, client = breaker
    variant = UCD.replace("St Vincents", "Kilmacud")
    response = client.post(
        EDITOR,
        {"action": "add", "original_id": "s1", "variant_text": variant, "variant_answer": "UCD"},
    )
    assert response.status_code == 302
    (pair,) = draft_pairs(cast)
    assert pair.variant_answers == [{"start": 0, "end": 3, "text": "UCD"}]


@pytest.mark.parametrize(
    ("variant", "answer", "message"),
    [
        (TWICE, "UCD", "The answer &#x27;UCD&#x27; occurs 2 times in the variant sentence"),
        (TWICE, "Dublin champs", "The answer &#x27;Dublin champs&#x27; is not in the variant"),
        # No answer given: the checks look for the original's, which the edit removed.
        (
            UCD.replace("UCD", "Kilmacud"),
            "",
            "the original&#x27;s answer &#x27;UCD&#x27; is not in the variant sentence",
        ),
    ],
)
def test_an_answer_that_names_no_one_span_is_refused_with_its_reason(
    breaker, variant, answer, message
):
    cast, client = breaker
    response = client.post(
        EDITOR,
        {"action": "check", "original_id": "s1", "variant_text": variant, "variant_answer": answer},
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not draft_pairs(cast)


def test_a_selection_that_disagrees_with_the_typed_answer_is_refused(breaker):
    cast, client = breaker
    response = client.post(
        EDITOR,
        {
            "action": "add",
            "original_id": "s1",
            "variant_text": TWICE,
            "variant_answer": "St Vincents",
            "answer_start": 0,
            "answer_end": 3,
        },
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "The answer typed (&#x27;St Vincents&#x27;) is not the one selected" in page
    response = client.post(
        EDITOR,
        {"action": "add", "original_id": "s1", "variant_text": TWICE, "answer_start": 5},
    )
    assert "The selected answer is not a part of the variant" in response.content.decode()
    assert not draft_pairs(cast)


def test_the_editor_checks_a_span_pair_without_storing_it(breaker):
    cast, client = breaker
    variant = UCD.replace("St Vincents", "Kilmacud")
    fields = {"original_id": "s1", "variant_text": variant, "variant_answer": "UCD"}
    passed = client.post(EDITOR, {**fields, "action": "check"})
    assert passed.status_code == 200
    assert "The pair passes every check." in passed.content.decode()
    # Trying it needs a hosted system: this task has none (the hosted ones are below).
    assert 'value="try"' in passed.content.decode()
    refused = client.post(EDITOR, {**fields, "action": "try"})
    assert refused.status_code == 400
    assert "This task has no ready hosted system" in refused.content.decode()
    assert not draft_pairs(cast)


def test_the_single_pair_form_adds_a_span_pair_and_the_draft_is_submitted(breaker):
    cast, client = breaker
    form = client.get("/tasks/qasrl/pairs/?original=s1").content.decode()
    assert "the question: <strong>who beat someone?</strong>" in form
    assert 'name="variant_label"' not in form and 'name="variant_answer"' in form
    refused = client.post(
        "/tasks/qasrl/pairs/draft/add/",
        {"original_id": "s1", "variant_text": TWICE, "variant_answer": "UCD"},
    )
    assert refused.status_code == 400
    assert "occurs 2 times in the variant sentence" in refused.content.decode()
    added = client.post(
        "/tasks/qasrl/pairs/draft/add/",
        {
            "original_id": "s1",
            "variant_text": TWICE,
            "variant_answer": "UCD",
            "answer_start": SECOND_UCD,
            "answer_end": SECOND_UCD + 3,
        },
    )
    assert added.status_code == 302
    draft = client.get("/tasks/qasrl/pairs/").content.decode()
    assert "<td>who beat someone?</td>" in draft
    answer = '<mark class="answer answer-start answer-end"><span class="visually-hidden">[answer: </span>UCD'
    assert f"UCD finished the 2006 championship as Dublin champions , by beating {answer}" in draft
    submitted = client.post("/tasks/qasrl/pairs/draft/submit/")
    pair_set_page = client.get(submitted["Location"]).content.decode()
    assert "who beat someone?" in pair_set_page and answer in pair_set_page


@pytest.fixture
def published(span_task):  # noqa: F811 (the fixture imported above)
    cast, strong, weak = span_task
    pairs_predict(cast, strong, weak)
    run = results_services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    run = compute.scoring_run_complete(run_id=run.id)
    results_services.snapshot_publish(snapshot=run.snapshot, actor=cast.organizer)
    start_phase_now(cast.shared_task, "results")
    return cast, strong, weak


def test_the_item_explorer_marks_gold_and_system_answers_in_both_sentences(published):
    cast, strong, weak = published
    page = Client().get("/tasks/qasrl/results/items/", {"system": weak.id}).content.decode()
    gold = (
        '<mark class="answer answer-start answer-end"><span class="visually-hidden">[gold answer: '
    )
    mine = (
        '<mark class="answer answer-start answer-end"><span class="visually-hidden">[its answer: '
    )
    # s1's variant: Kilmacud is added (the word diff) and the gold answer (both marks kept).
    hidden = '<span class="visually-hidden">]</span>'
    assert (
        f'<ins><span class="visually-hidden">[added: </span>{gold}</span>Kilmacud{hidden}</mark>'
        f"{hidden}</ins>" in page
    )
    # The weak system answered "UCD" on the original (right) and "St Vincents" on the variant.
    assert f"{mine}</span>UCD" in page and f"{mine}</span>St Vincents" in page
    assert '“St Vincents” <strong class="verdict-wrong">wrong</strong>' in page
    assert "an answer is right by Token F1" in page and "(token_f1)" in page
    # Span pairs have no label to keep or change, and no label validation to filter by.
    assert 'name="label"' not in page and 'name="validation"' not in page


def test_the_results_pages_filter_span_pairs_and_speak_of_answers(published):
    cast, strong, weak = published
    client = Client()
    boards = client.get("/tasks/qasrl/results/").content.decode()
    assert "Answer accuracy" in boards and "Mean token F1" in boards
    assert "<dt>A right answer</dt>" in boards
    assert "label kept" not in client.get("/tasks/qasrl/results/matrix/").content.decode()
    system = page_client(cast, "builder").get(f"/tasks/qasrl/systems/{weak.id}/")
    assert "<dt>Dev mean token F1</dt><dd>0.500</dd>" in system.content.decode()
    broken = client.get("/tasks/qasrl/results/items/", {"system": weak.id, "broken": "yes"})
    assert "2 pairs</h2>" in broken.content.decode()
    unbroken = client.get("/tasks/qasrl/results/items/", {"system": strong.id, "broken": "yes"})
    assert "0 pairs</h2>" in unbroken.content.decode()
    tagged = client.get("/tasks/qasrl/results/items/", {"tag": "semantics"})
    assert "1 pair</h2>" in tagged.content.decode()


@pytest.fixture
def hosted(db, qa_dir, settings):
    """The span task with a hosted QA system (a tiny random model), and the model loaded
    apart to say what it answers; in-process on the embedded default only (the guidance
    API's tests cover a real worker)."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the model in-process; the guidance API's tests use a real worker")
    from fim_engine import load_span_system

    cast = build_span_cast(current_phase="build")
    upload_and_validate(cast, qa_dir)
    start_phase_now(cast.shared_task, "break")
    return cast, page_client(cast, "breaker"), load_span_system(qa_dir)


def try_variant(client, variant, **fields):
    response = client.post(
        EDITOR, {"action": "try", "original_id": "s1", "variant_text": variant, **fields}
    )
    assert response.status_code == 200, response.content.decode()[-3000:]
    return response.context["check"], html.unescape(response.content.decode())


def judged_row(model, check, page, variant, gold):
    """The page's row for the one system, against the model's own answers on both sentences
    and the scoring library's answer rule (``gold``: the variant's answers, None unknown)."""
    before, after = model.predict(["who beat someone?"] * 2, [UCD, variant])
    [outcome] = check["outcomes"]
    assert outcome["original"]["text"] == before.text and outcome["variant"]["text"] == after.text
    was_right = right(outcome["original"], [{"start": 0, "end": 3, "text": "UCD"}])
    row = page[page.index(f"<td>{outcome['system']}</td>") :]
    row = row[: row.index("</tr>")]
    assert f"“{before.text}” {'right' if was_right else 'wrong'}" in strip_tags(row)
    if gold is None:
        assert "not judged" in row and "(unverified)" in row
        return None
    is_right = right(outcome["variant"], gold)
    assert f"“{after.text}” {'right' if is_right else 'wrong'}" in strip_tags(row)
    assert ("<strong>yes</strong>" in row) is (was_right != is_right)
    return was_right != is_right


@pytest.mark.embedded
def test_trying_a_span_variant_shows_each_systems_answer_and_whether_it_breaks(hosted):
    cast, client, model = hosted
    # An edit outside the gold answer, no answer picked: the gold answer moves with the edit.
    kept = UCD.replace("St Vincents", "Kilmacud")
    check, page = try_variant(client, kept)
    assert check["answers_from"] == "moved"
    breaks = judged_row(model, check, page, kept, [{"start": 0, "end": 3, "text": "UCD"}])
    assert f"{int(breaks)} of 1 system would break" in page
    assert "the original's, moved with your edit" in page
    # The variant's gold answer boxed, and the system's answer in both sentences.
    assert '<span class="visually-hidden">[answer: </span>UCD' in page
    assert page.count("[its answer: ") == 2

    # The answer picked by its offsets (the second "UCD"): judged against it, and kept in the
    # form for the next try.
    check, page = try_variant(
        client, TWICE, variant_answer="UCD", answer_start=SECOND_UCD, answer_end=SECOND_UCD + 3
    )
    assert check["answers_from"] == "given"
    gold = [{"start": SECOND_UCD, "end": SECOND_UCD + 3, "text": "UCD"}]
    breaks = judged_row(model, check, page, TWICE, gold)
    assert f"{int(breaks)} of 1 system would break" in page
    assert f'name="answer_start" value="{SECOND_UCD}"' in page
    # A job's own page (what guidance_job.js fetches once a worker has answered) fills the
    # form again: the variant, and the answer the breaker gave.
    outcome = suggest_start(
        shared_task=cast.shared_task,
        user=cast.breaker,
        request=SuggestRequest(
            original_id="s1",
            variant_text=TWICE,
            variant_answers=({"start": SECOND_UCD, "end": SECOND_UCD + 3},),
        ),
    )
    followed = client.get(EDITOR, {"job": outcome.job_id})
    assert followed.context["check"] == check
    page = followed.content.decode()
    assert f">\n{TWICE}</textarea>" in page
    assert f'name="answer_start" value="{SECOND_UCD}"' in page and 'value="UCD"' in page

    # An edit of the answer itself with no answer picked: nothing is claimed.
    touched = UCD.replace("UCD", "Dublin University", 1)
    check, page = try_variant(client, touched)
    assert check["verified"] is False and check["breaks"] is None
    judged_row(model, check, page, touched, None)
    assert "Unverified: no break is claimed." in page and "would break" not in page
    assert not draft_pairs(cast)


@pytest.mark.embedded
def test_the_editor_suggests_span_edits_and_asks_the_answer_of_an_answer_moving_one(hosted):
    cast, client, _ = hosted
    response = client.post(EDITOR, {"action": "suggest"})
    assert response.status_code == 200
    suggestions = response.context["suggestions"]["suggestions"]
    page = html.unescape(response.content.decode())
    assert page.count("answer unverified</span>") == sum(not s["keeps_answer"] for s in suggestions)
    keeping = next(s for s in suggestions if s["keeps_answer"])
    moving = next(s for s in suggestions if not s["keeps_answer"])
    # "Try" on an answer-keeping edit carries its moved answer; on an answer-moving one the
    # machine's text, so that the editor can ask for the answer.
    [moved] = keeping["variant_answers"]
    row = page[page.index(f"<td>{keeping['text']}</td>") :][:2000]
    assert f'name="answer_start" value="{moved["start"]}"' in row.split("</tr>")[0]
    row = page[page.index(f"<td>{moving['text']}</td>") :].split("</tr>")[0]
    assert f'name="machine_text" value="{moving["text"]}"' in row
    assert 'name="answer_start"' not in row

    tried = client.post(
        EDITOR,
        {
            "action": "try",
            "original_id": "s1",
            "variant_text": keeping["text"],
            "variant_answer": moved["text"],
            "answer_start": moved["start"],
            "answer_end": moved["end"],
        },
    )
    assert tried.context["check"]["breaks"] == keeping["breaks"]
    assert tried.context["check"]["answers_from"] == "given"

    fields = {"original_id": "s1", "variant_text": moving["text"], "machine_text": moving["text"]}
    assert client.post(EDITOR, {**fields, "action": "try"}).context["check"]["breaks"] is None
    refused = client.post(EDITOR, {**fields, "action": "add"})
    assert refused.status_code == 400
    assert "meant to move the answer" in html.unescape(refused.content.decode())
    assert not draft_pairs(cast)


@pytest.mark.slow
def test_a_span_variant_tried_through_a_real_worker_is_followed_to_its_answer(
    transactional_db, worker, qa_dir, settings
):
    """The editor answers 202 at once (no wait) with the job to follow; once the session's
    worker has run it, the job's page shows each system's answer, judged, and the form as the
    breaker left it."""
    from fim_engine import load_span_system

    if worker is None:
        pytest.skip("in-process on the embedded default: the answer comes with the page")
    settings.GUIDANCE_SUGGEST_WAIT = 0
    cast = build_span_cast(current_phase="build")
    upload_and_validate(cast, qa_dir)
    start_phase_now(cast.shared_task, "break")
    client = page_client(cast, "breaker")
    fields = {"variant_answer": "UCD", "answer_start": SECOND_UCD, "answer_end": SECOND_UCD + 3}

    response = client.post(
        EDITOR, {"action": "try", "original_id": "s1", "variant_text": TWICE, **fields}
    )

    assert response.status_code == 202, response.content.decode()[-3000:]
    waiting = response.content.decode()
    assert 'id="job-waiting"' in waiting and "waiting for a model worker" in waiting
    follow = html.unescape(re.search(r'data-result-url="([^"]+)"', waiting).group(1))
    job_id = parse_qs(urlsplit(follow).query)["job"][0]
    # Wait on the job's own state in the result backend, not on the clock.
    app.AsyncResult(job_id).get(timeout=WORKER_BOUND_MS / 1000, propagate=False)
    assert app.AsyncResult(job_id).state == "SUCCESS"
    followed = client.get(follow)
    assert followed.status_code == 200, followed.content.decode()[-3000:]
    check = followed.context["check"]
    assert check["answers_from"] == "given" and check["verified"] is True
    page = html.unescape(followed.content.decode())
    gold = [{"start": SECOND_UCD, "end": SECOND_UCD + 3, "text": "UCD"}]
    breaks = judged_row(load_span_system(qa_dir), check, page, TWICE, gold)
    assert f"{int(breaks)} of 1 system would break" in page
    assert 'id="job-waiting"' not in page
    assert f">\n{TWICE}</textarea>" in page and f'name="answer_start" value="{SECOND_UCD}"' in page
    # The session's worker ran it, not this process.
    assert f"gpu.guidance_suggest[{job_id}]" in worker.log()
    assert not draft_pairs(cast)


def test_trying_a_span_variant_is_refused_where_the_guidance_or_the_variant_says_no(breaker):
    # Refused before any system is looked for: this task has none.
    cast, client = breaker
    unchanged = client.post(EDITOR, {"action": "try", "original_id": "s1", "variant_text": UCD})
    assert unchanged.status_code == 400
    assert "The variant is the original unchanged." in unchanged.content.decode()
    cast.shared_task.guidance_visibility = "organizers"
    cast.shared_task.save(update_fields=["guidance_visibility"])
    closed = client.post(
        EDITOR, {"action": "try", "original_id": "s1", "variant_text": TWICE, "variant_answer": ""}
    )
    assert closed.status_code == 403
    assert 'value="try"' not in closed.content.decode()


def test_the_span_predictions_form_speaks_of_answers_and_has_no_label_map(db):
    from bibi.systems import services as system_services

    cast = build_span_cast(current_phase="build")
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="by hand", kind="self_reported"
    )
    page = page_client(cast, "builder").get(f"/tasks/qasrl/systems/{system.id}/")
    text = strip_tags(page.content.decode())
    assert "id,answer or id,start,end" in text
    assert "text,question,answer" in text
    assert "id,label" not in text and "text,label" not in text
    assert 'name="label_map"' not in page.content.decode()
    assert "Label map" not in text
    # The 2017 layout is a label file's: a span task does not offer it.
    assert 'value="2017"' not in page.content.decode()
