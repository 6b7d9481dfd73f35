"""Suggestions and draft variants through the API: on the embedded default (in-process) and
through a real worker process on the ``interactive`` queue (a request that did not wait long
enough follows its job); every reported outcome reproduced by a separate forward pass."""

from __future__ import annotations

import time

import pytest

from .guidance_conftest import an_interactive_worker, assert_claims_nothing, build_geometry_task

SUGGEST = "/api/v1/shared-tasks/sst/guidance/suggest/"


def ask(client, body, url=SUGGEST):
    """The answer to a POST, following a 202 to its job until it is no longer waiting."""
    response = client.post(url, body, format="json")
    deadline = time.monotonic() + 180
    while response.status_code == 202 and time.monotonic() < deadline:
        time.sleep(0.2)
        response = client.get(response["Location"])
    return response


def separate_forward_pass(model_dir, texts):
    """What the model says about ``texts``, loaded afresh in this process."""
    import fim_engine

    batch = fim_engine.load_system(model_dir).predict(list(texts))
    return dict(zip(texts, batch.labels, strict=True))


def assert_suggestions_are_reproduced(task):
    client = task.cast.client("breaker")

    response = ask(client, {"original_id": "mild-pos", "top_k": 3})

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["original"] == {"id": "mild-pos", "text": "the film is good", "label": "positive"}
    assert max(body["leverage"], key=lambda pair: pair[1])[0] == "good"
    suggestions = body["suggestions"]
    assert suggestions, body
    # Label-changing edits and probes (which claim nothing: keeps_label None) on this text.
    assert {False, None} <= {s["keeps_label"] for s in suggestions} <= {True, False, None}
    # "bad" for "good": the antonym of the decisive word flips both systems, which breaks
    # neither (both follow the flip to the label the breaker means).
    antonym = next(s for s in suggestions if s["text"] == "the film is bad")
    assert antonym["source"] == "antonym" and antonym["variant_label"] == "negative"
    assert antonym["changed"] == 2 and antonym["breaks"] == 0
    # Label-changing suggestions are unverified; embedding neighbours are probes with no label.
    for suggestion in suggestions:
        if suggestion["probe"]:
            assert suggestion["variant_label"] is None and suggestion["breaks"] is None
            assert_claims_nothing(suggestion)
        else:
            assert suggestion["label_unverified"] is (not suggestion["keeps_label"])
    guide_confidence = max(body["predictions"][0]["probabilities"].values())
    assert body["uncertainty"] == pytest.approx(1 - guide_confidence)
    assert "16%" in body["notes"]["transfer"] and "1 − confidence" in body["notes"]["lambda_max"]

    fresh = separate_forward_pass(task.model_dir, [s["text"] for s in suggestions])
    for suggestion in suggestions:
        assert len(suggestion["outcomes"]) == 2
        for outcome in suggestion["outcomes"]:
            assert outcome["label"] == fresh[suggestion["text"]], suggestion
        if suggestion["probe"]:
            continue  # a probe means no label to check a draft with
        # The same text as a draft variant, with the label the suggestion means: same answer.
        draft = ask(
            client,
            {
                "original_id": "mild-pos",
                "variant_text": suggestion["text"],
                "variant_label": suggestion["variant_label"],
            },
        ).json()
        assert {o["system_id"]: o["variant"]["label"] for o in draft["outcomes"]} == {
            o["system_id"]: o["label"] for o in suggestion["outcomes"]
        }
        assert draft["breaks"] == suggestion["breaks"]
        assert draft["changed"] == suggestion["changed"]


def assert_a_draft_reports_breaks_by_the_intended_labels(task):
    client = task.cast.client("breaker")
    draft = {"original_id": "mild-pos", "variant_text": "the film is bad"}

    kept = ask(client, {**draft, "variant_label": "positive"}).json()
    flipped = ask(client, {**draft, "variant_label": "negative"}).json()

    # Both systems move to negative: a break if the breaker says the label stays.
    assert kept["keeps_label"] and kept["breaks"] == 2 and kept["changed"] == 2
    assert not flipped["keeps_label"] and flipped["breaks"] == 0
    for outcome in kept["outcomes"]:
        assert outcome["original"]["label"] == "positive"
        assert outcome["variant"]["label"] == "negative"
        assert outcome["variant_lambda_max"] > 0 and outcome["breaks"] is True
        assert set(outcome["variant"]["probabilities"]) == {"negative", "positive"}


@pytest.mark.embedded
def test_suggestions_and_drafts_in_process(db, tmp_path, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("in-process only on the embedded default (the worker test covers services)")
    task = build_geometry_task(tmp_path)

    assert_suggestions_are_reproduced(task)
    assert_a_draft_reports_breaks_by_the_intended_labels(task)


@pytest.mark.slow
def test_suggestions_and_drafts_through_a_real_interactive_worker(
    transactional_db, tmp_path, settings
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there are no workers")
    task = build_geometry_task(tmp_path)
    with an_interactive_worker(tmp_path, settings.REDIS_URL) as interactive:
        assert_suggestions_are_reproduced(task)
        assert_a_draft_reports_breaks_by_the_intended_labels(task)
        assert interactive.received("gpu.guidance_suggest") >= 2


def test_no_worker_in_time_answers_202_with_a_job_whose_message_expires(
    db, tmp_path, settings, monkeypatch
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process")
    from bibi.guidance.tasks import guidance_suggest_task

    settings.GUIDANCE_SUGGEST_WAIT = 1
    settings.GUIDANCE_SUGGEST_TIMEOUT = 7
    sent = []
    send = guidance_suggest_task.apply_async

    def record(*args, **options):
        sent.append(options)
        # The suite's own worker may be running: to a queue that no worker reads.
        return send(*args, **{**options, "queue": "interactive-nobody-reads"})

    monkeypatch.setattr(guidance_suggest_task, "apply_async", record)
    task = build_geometry_task(tmp_path)

    response = task.cast.client("breaker").post(
        SUGGEST, {"original_id": "on", "variant_text": "the film is good but awful"}, format="json"
    )

    assert response.status_code == 202
    assert response.json()["job_id"] == sent[0]["task_id"]
    assert sent[0]["expires"] == 7 and sent[0]["time_limit"] == 7 + 15


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"original_id": "d1"}, "original_id", "is not an original of the starter set"),
        ({"original_id": "on", "variant_text": "   "}, "variant_text", "The variant is empty"),
        (
            {"original_id": "on", "variant_text": " the film is good but bad "},
            "variant_text",
            "The variant is the original unchanged.",
        ),
        (
            # Only spacing differs: a pair of the two would be refused as unchanged too.
            {"original_id": "on", "variant_text": "the film  is good\tbut bad"},
            "variant_text",
            "The variant is the original unchanged.",
        ),
        (
            {"original_id": "on", "variant_text": "x" * 1001},
            "variant_text",
            "this task allows 1000",
        ),
        (
            {"original_id": "on", "variant_text": "the film", "variant_label": "neutral"},
            "variant_label",
            "not a label of this task",
        ),
        ({"original_id": "on", "systems": [424242]}, "system", "Not a ready hosted system"),
        ({"original_id": "on", "top_k": 0}, "top_k", "greater than or equal to 1"),
        ({}, "original_id", "required"),
    ],
)
def test_bad_requests_are_refused_before_any_model_runs(db, tmp_path, body, field, message):
    task = build_geometry_task(tmp_path)

    response = task.cast.client("breaker").post(SUGGEST, body, format="json")

    assert response.status_code == 400, response.content
    assert message in str(response.json()[field])


@pytest.mark.embedded
def test_without_per_system_guidance_a_draft_gives_counts_only(db, tmp_path, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process (embedded default)")
    task = build_geometry_task(tmp_path)
    task.shared_task.guidance_shows_systems = False
    task.shared_task.save()

    body = (
        task.cast.client("breaker")
        .post(
            SUGGEST, {"original_id": "mild-pos", "variant_text": "the film is bad"}, format="json"
        )
        .json()
    )

    assert body["outcomes"] == [] and body["breaks"] == 2 and body["systems"] == 2


def test_without_per_system_guidance_no_system_can_be_picked(db, tmp_path):
    task = build_geometry_task(tmp_path)
    task.shared_task.guidance_shows_systems = False
    task.shared_task.save()

    response = task.cast.client("breaker").post(
        SUGGEST, {"original_id": "on", "systems": [task.strawman_bow.id]}, format="json"
    )

    assert response.status_code == 403
    assert "ranking only" in response.json()["detail"]


@pytest.mark.embedded
def test_a_model_that_cannot_be_loaded_answers_503_with_the_reason(db, tmp_path, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("runs the models in-process (embedded default)")
    import shutil
    from pathlib import Path

    task = build_geometry_task(tmp_path)
    version = task.strawman_bow.active_version
    # Damaged on this machine (a missing model would be fetched again from its archive).
    model = Path(settings.MODEL_STORE) / version.model_dir
    shutil.rmtree(model)
    model.mkdir()
    (model / "config.json").write_text("{not json")

    response = task.cast.client("breaker").post(
        SUGGEST, {"original_id": "on", "variant_text": "the film is bad"}, format="json"
    )

    assert response.status_code == 503
    assert "A system could not run" in response.json()["detail"]
