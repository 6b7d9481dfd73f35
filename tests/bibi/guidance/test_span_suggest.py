"""Suggestions and draft checks for a span task (QA-SRL) through the API: in-process on the
embedded default and through a real worker on the ``interactive`` queue. Every answer a
system is said to give is reproduced by a separate forward pass of the model, and every break
by the scoring library's answer rule and break rule."""

from __future__ import annotations

import time
from collections import Counter

import pandas as pd
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from bibi.sharedtasks.models import Example

from ..pairs.conftest import start_phase_now
from ..systems.span_cast import UCD, build_span_cast, upload_and_validate
from ..web.conftest import page_client
from ..web.test_page_queries import MAX_QUERIES
from .guidance_conftest import an_interactive_worker
from .test_guidance_suggest import ask

SUGGEST = "/api/v1/shared-tasks/qasrl/guidance/suggest/"


def ask_span(client, body):
    return ask(client, body, url=SUGGEST)


def span_task(qa_dir):
    cast = build_span_cast()
    version = upload_and_validate(cast, qa_dir, name="qa")
    assert version.status == "ready"
    start_phase_now(cast.shared_task, "break")
    # "who beat someone ?" asks about token 10, "beating": no suggestion may edit it.
    Example.objects.filter(dataset=cast.starter, external_id="s1").update(
        predicate_index=10, predicate="beating"
    )
    return cast


def right(answer, gold):
    """Whether ``answer`` is right against ``gold`` by the task's default mode (token F1 at
    least 0.5), computed by ``scoring`` directly."""
    from scoring.answers import answer_scores

    frame = pd.DataFrame([("qa", 0, answer["text"], answer["start"], answer["end"])])
    frame.columns = ["system", "item", "text", "start", "end"]
    golds = pd.DataFrame([(0, g["text"], g["start"], g["end"]) for g in gold])
    golds.columns = ["item", "text", "start", "end"]
    return bool(answer_scores(frame, golds, mode="token_f1")["correct"].iloc[0])


def assert_span_suggestions_and_drafts(cast, qa_dir):
    import fim_engine

    client = cast.client("breaker")
    question = "who beat someone ?"
    gold = [{"start": 0, "end": 3, "text": "UCD"}]

    body = ask_span(client, {"original_id": "s1", "top_k": 3}).json()

    assert body["task_type"] == "span_extraction" and body["answer_mode"] == "token_f1"
    assert body["original"] == {"id": "s1", "text": UCD, "question": question, "answers": gold}
    suggestions = body["suggestions"]
    assert suggestions and {s["keeps_answer"] for s in suggestions} == {True, False}
    assert all(" beating " in s["text"] for s in suggestions)
    model = fim_engine.load_span_system(qa_dir)
    fresh = model.predict(
        [question] * (len(suggestions) + 1), [UCD] + [s["text"] for s in suggestions]
    )
    [prediction] = body["predictions"]
    assert prediction["answer"]["text"] == fresh[0].text
    assert prediction["right"] is right(prediction["answer"], gold)
    for suggestion, after in zip(suggestions, fresh[1:], strict=True):
        [outcome] = suggestion["outcomes"]
        assert outcome["original"]["text"] == fresh[0].text
        assert outcome["variant"] == {"start": after.start, "end": after.end, "text": after.text}
        assert suggestion["label_unverified"] is (not suggestion["keeps_answer"])
        if suggestion["keeps_answer"]:
            # The gold answer moved with the edit, still the same words of the variant.
            [moved] = suggestion["variant_answers"]
            assert suggestion["text"][moved["start"] : moved["end"]] == "UCD"
            assert outcome["right_variant"] is right(outcome["variant"], [moved])
            assert outcome["breaks"] is (outcome["right_original"] != outcome["right_variant"])
            assert suggestion["breaks"] == int(outcome["breaks"])
        else:  # meant to move the answer: no gold answer known, no break claimed
            assert suggestion["variant_answers"] == []
            assert outcome["right_variant"] is None and outcome["breaks"] is None
            assert suggestion["breaks"] is None

    assert_the_pages_show_the_item_and_its_suggestions(page_client(cast, "breaker"), suggestions)

    # The answer-keeping suggestion as a draft: its moved answer is found without being given,
    # and giving it changes nothing.
    keeping = next(s for s in suggestions if s["keeps_answer"])
    moved = ask_span(client, {"original_id": "s1", "variant_text": keeping["text"]}).json()
    given = ask_span(
        client,
        {
            "original_id": "s1",
            "variant_text": keeping["text"],
            "variant_answers": [
                {"start": a["start"], "end": a["end"]} for a in keeping["variant_answers"]
            ],
            "question": question,
        },
    ).json()
    assert moved["answers_from"] == "moved" and given["answers_from"] == "given"
    for draft in (moved, given):
        assert draft["verified"] and draft["variant_answers"] == keeping["variant_answers"]
        assert draft["breaks"] == keeping["breaks"]
        assert draft["outcomes"][0]["variant"] == keeping["outcomes"][0]["variant"]

    # An edit of the answer itself: unverified until the breaker says what the answer is.
    variant = UCD.replace("UCD", "Dublin University", 1)
    touched = ask_span(client, {"original_id": "s1", "variant_text": variant}).json()
    assert not touched["verified"] and touched["answers_from"] is None
    assert touched["breaks"] is None and "touches a gold answer" in touched["unverified_reason"]
    assert touched["edit"]["original"] == "UCD"
    named = ask_span(
        client,
        {"original_id": "s1", "variant_text": variant, "variant_answers": ["Dublin University"]},
    ).json()
    assert named["verified"] and named["variant_answers"] == [
        {"start": 0, "end": 17, "text": "Dublin University"}
    ]
    [outcome] = named["outcomes"]
    assert outcome["right_variant"] is right(outcome["variant"], named["variant_answers"])


def assert_the_pages_show_the_item_and_its_suggestions(client, suggestions):
    ranking = client.get("/tasks/qasrl/guidance/")
    assert ranking.status_code == 200
    html = ranking.content.decode()
    assert "<q>who beat someone ?</q>" in html and "<mark>UCD</mark>" in html
    assert "/tasks/qasrl/guidance/s1/suggestions/" in html

    page = "/tasks/qasrl/guidance/s1/suggestions/"
    response = client.post(page)
    deadline = time.monotonic() + 180
    while response.status_code == 202 and time.monotonic() < deadline:
        job = response.context["job"]
        time.sleep(0.2)
        if client.get(job["poll"]).status_code != 202:
            response = client.get(job["result"])
    assert response.status_code == 200, response.content
    # The page as the ranking links it costs what every page may (test_page_queries).
    with CaptureQueriesContext(connection) as queries:
        assert client.get(page).status_code == 200
    assert len(queries) <= MAX_QUERIES, [query["sql"] for query in queries]
    html = response.content.decode()
    assert html.count("answer unverified</span>") == sum(not s["keeps_answer"] for s in suggestions)
    for suggestion in suggestions:
        assert escape(suggestion["text"]) in html


@pytest.mark.embedded
def test_span_suggestions_and_drafts_in_process(db, qa_dir, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("in-process only on the embedded default (the worker test covers services)")
    assert_span_suggestions_and_drafts(span_task(qa_dir), qa_dir)


@pytest.mark.slow
def test_span_suggestions_and_drafts_through_a_real_interactive_worker(
    transactional_db, qa_dir, tmp_path, settings
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there are no workers")
    cast = span_task(qa_dir)
    with an_interactive_worker(tmp_path, settings.REDIS_URL) as interactive:
        assert_span_suggestions_and_drafts(cast, qa_dir)
        assert interactive.received("gpu.guidance_suggest") >= 5


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            {
                "original_id": "s1",
                "variant_text": UCD.replace("final", "last"),
                "variant_label": "x",
            },
            "variant_label",
            "A span task has no labels",
        ),
        (
            {
                "original_id": "s1",
                "variant_text": UCD.replace("final", "last"),
                "question": "why ?",
            },
            "question",
            "The question must stay the original's: it is 'who beat someone ?'",
        ),
        (
            {
                "original_id": "s1",
                "variant_text": UCD.replace("UCD", "Dublin"),
                "variant_answers": ["UCD"],
            },
            "variant_answers",
            "the answer 'UCD' is not a span of the sentence (the variant sentence)",
        ),
        (
            {
                "original_id": "s1",
                "variant_text": UCD.replace("final", "last"),
                "variant_answers": [{"start": 3, "end": 500}],
            },
            "variant_answers",
            "not a span of the sentence",
        ),
        (
            {"original_id": "s1", "variant_answers": ["UCD"]},
            "variant_answers",
            "Answers go with a draft variant_text",
        ),
        (
            {"original_id": "s1", "variant_text": UCD + "  "},
            "variant_text",
            "The variant is the original unchanged.",
        ),
        (
            {"original_id": "s1", "variant_text": UCD.replace(" ", "  \t", 2)},
            "variant_text",
            "The variant is the original unchanged.",
        ),
        ({"original_id": "zz", "variant_text": "x"}, "original_id", "not an original"),
    ],
)
def test_bad_span_requests_are_refused_before_any_model_runs(db, body, field, message):
    cast = build_span_cast()
    start_phase_now(cast.shared_task, "break")

    response = cast.client("breaker").post(SUGGEST, body, format="json")

    assert response.status_code == 400, response.content
    assert message in str(response.json()[field])


class CountingSpanSystem:
    """A span system that counts, per sentence, how many times it was asked to answer it."""

    def __init__(self, system):
        self.system = system
        self.asked = Counter()

    def predict(self, questions, sentences):
        self.asked.update(sentences)
        return self.system.predict(questions, sentences)

    def fisher(self, questions, sentences):
        return self.system.fisher(questions, sentences)


def test_each_system_answers_the_original_once_for_its_suggestions(db, qa_dir, monkeypatch):
    from bibi.guidance import compute

    cast = build_span_cast()
    versions = [upload_and_validate(cast, qa_dir, name=name) for name in ("qa", "qa2")]
    counted: dict[int, CountingSpanSystem] = {}

    def counting(version):
        counted[version.id] = CountingSpanSystem(real(version))
        return counted[version.id]

    real = compute.version_span_system
    monkeypatch.setattr(compute, "version_span_system", counting)
    example = Example.objects.get(dataset=cast.starter, external_id="s1")

    payload = compute.span_guidance_compute(
        version_ids=[version.id for version in versions],
        sentence=example.text,
        variant=None,
        top_k=3,
        question=example.question,
        answers=list(example.answers),
        variant_answers=None,
        mode="token_f1",
        threshold=0.5,
    )

    assert payload["suggestions"], payload
    for version in versions:
        asked = counted[version.id].asked
        assert asked[example.text] == 1, asked
        # Every suggestion's variant was answered too, once each.
        assert {text for text in asked if text != example.text} == {
            suggestion["text"] for suggestion in payload["suggestions"]
        }
        original = payload["predictions"][str(version.id)]["answer"]
        for suggestion in payload["suggestions"]:
            assert suggestion["outcomes"][str(version.id)]["original"] == original
