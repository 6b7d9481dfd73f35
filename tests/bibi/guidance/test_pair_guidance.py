"""Guidance on a sentence-pair task (NLI): the ranking's words in the text a breaker may edit,
suggestions that edit it and draft checks of the whole pair, in-process on the embedded
default and through a real worker on the ``interactive`` queue. Every outcome is reproduced
by a separate forward pass of the pair, the other text unchanged."""

from __future__ import annotations

import pytest

from ..nlicast import build_nli_cast, build_nli_task
from ..pairs.conftest import start_phase_now
from .guidance_conftest import an_interactive_worker
from .test_guidance_suggest import ask

SUGGEST = "/api/v1/shared-tasks/snli/guidance/suggest/"
RANKING = "/api/v1/shared-tasks/snli/guidance/"


def fresh_labels(model_dir, pairs):
    """What the model says about each (premise, hypothesis), loaded afresh in this process."""
    import fim_engine

    batch = fim_engine.load_system(model_dir).predict([fim_engine.SentencePair(*p) for p in pairs])
    return dict(zip(pairs, batch.labels, strict=True))


def assert_pair_suggestions_and_drafts(cast, model_dir):
    client = cast.client("breaker")
    premise = "the film is fun"

    response = ask(client, {"original_id": "n1", "top_k": 3}, url=SUGGEST)

    assert response.status_code == 200, response.content
    body = response.json()
    assert body["original"] == {
        "id": "n1", "text": premise, "text_b": "it is good", "label": "entailment"
    }  # fmt: skip
    assert [row[2] for row in body["leverage"]] == ["text_b"] * 3
    assert max(body["leverage"], key=lambda row: row[1])[0] == "good"
    suggestions = body["suggestions"]
    assert suggestions
    fresh = fresh_labels(model_dir, [(premise, s["text"]) for s in suggestions])
    for s in suggestions:
        # The hypothesis is edited; the premise stays the original's.
        assert s["segment"] == "text_b"
        assert s["variant"] == {"variant_text": premise, "variant_text_b": s["text"]}
        assert len(s["outcomes"]) == 2
        for outcome in s["outcomes"]:
            assert outcome["label"] == fresh[(premise, s["text"])]
    # "good" -> "bad" turns the entailment into a contradiction, but on a three-label task a
    # label change claims no label (edits.claims): unverified, and no break claimed.
    antonym = next(s for s in suggestions if s["source"] == "antonym")
    assert antonym["text"] == "it is bad" and antonym["changed"] == 2
    assert antonym["label_unverified"] and antonym["variant_label"] is None
    assert antonym["breaks"] is None

    # The same edit as a draft, in the pair's own names (variant_hypothesis).
    draft = {"original_id": "n1", "variant_hypothesis": "it is bad"}
    kept = ask(client, draft, url=SUGGEST).json()
    flipped = ask(client, {**draft, "variant_label": "contradiction"}, url=SUGGEST).json()
    assert kept["variant_text"] == premise and kept["variant_text_b"] == "it is bad"
    assert kept["keeps_label"] and kept["breaks"] == 2 and kept["changed"] == 2
    assert not flipped["keeps_label"] and flipped["breaks"] == 0
    for outcome in kept["outcomes"]:
        assert outcome["original"]["label"] == "entailment"
        assert outcome["variant"]["label"] == fresh[(premise, "it is bad")] == "contradiction"
    same = ask(client, {"original_id": "n1", "variant_text_b": "it is bad"}, url=SUGGEST).json()
    assert same["outcomes"] == kept["outcomes"]


@pytest.mark.embedded
def test_pair_suggestions_and_drafts_in_process(db, tmp_path, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("in-process only on the embedded default (the worker test covers services)")
    cast, _ = build_nli_task(tmp_path)
    assert_pair_suggestions_and_drafts(cast, tmp_path / "agreement-pair-bow")


@pytest.mark.slow
def test_pair_suggestions_and_drafts_through_a_real_interactive_worker(
    transactional_db, tmp_path, settings
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there are no workers")
    cast, _ = build_nli_task(tmp_path)
    with an_interactive_worker(tmp_path, settings.REDIS_URL) as interactive:
        assert_pair_suggestions_and_drafts(cast, tmp_path / "agreement-pair-bow")
        assert interactive.received("gpu.guidance_suggest") >= 4


@pytest.mark.embedded
@pytest.mark.parametrize("editable", ["second", "both"])
def test_the_ranking_shades_the_words_of_the_texts_a_breaker_may_edit(db, tmp_path, editable):
    cast, _ = build_nli_task(tmp_path, editable_text=editable)

    body = cast.client("breaker").get(RANKING, {"page_size": 10}).json()

    by_id = {original["id"]: original for original in body["results"]}
    assert by_id["n1"]["text"] == "the film is fun" and by_id["n1"]["text_b"] == "it is good"
    for original in by_id.values():
        texts = {"text": original["text"], "text_b": original["text_b"]}
        for word in original["words"]:
            assert texts[word["segment"]][word["start"] : word["end"]] == word["text"]
    segments = [w["segment"] for w in by_id["n1"]["words"]]
    if editable == "second":
        assert segments == ["text_b"] * 3
    else:
        assert segments == ["text"] * 4 + ["text_b"] * 3
    decisive = max(by_id["n1"]["words"], key=lambda word: word["leverage"])
    assert decisive["segment"] == "text_b" or editable == "both"
    assert decisive["text"] in {"good", "fun"}


@pytest.mark.embedded
@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        (
            {"original_id": "n1", "variant_text": "the film is dull"},
            "variant_text",
            "This task lets breakers edit only the hypothesis: the premise must stay",
        ),
        (
            {"original_id": "n1", "variant_text_b": " it  is good "},
            "variant_text",
            "The variant is the original unchanged.",
        ),
        (
            {"original_id": "n1", "variant_hypothesis": "it is bad", "variant_label": "maybe"},
            "variant_label",
            "'maybe' is not a label of this task",
        ),
        (
            {"original_id": "n1", "variant_hypothesis": "x" * 3000},
            "variant_text_b",
            "this task allows",
        ),
    ],
)
def test_bad_pair_drafts_are_refused_before_any_model_runs(db, body, field, message):
    cast = build_nli_cast()
    start_phase_now(cast.shared_task, "break")

    response = cast.client("breaker").post(SUGGEST, body, format="json")

    assert response.status_code == 400, response.content
    assert message in str(response.json()[field])


@pytest.mark.embedded
def test_the_bulk_command_edits_the_hypotheses_of_the_top_originals(db, tmp_path):
    import json

    from django.core.management import call_command

    build_nli_task(tmp_path)
    out = tmp_path / "suggestions.jsonl"

    call_command("guidance_suggest", "snli", top=2, out=out, top_k=2, verbosity=0)

    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 2
    pairs = {}
    for line in lines:
        report = line["report"]
        assert set(report["word_segments"]) == {"hypothesis"}
        for s in report["suggestions"]:
            assert s["segment"] == "hypothesis" and s["premise"] == report["premise"]
            pairs[(s["premise"], s["hypothesis"])] = s
    assert pairs
    fresh = fresh_labels(tmp_path / "agreement-pair-bow", list(pairs))
    for pair, s in pairs.items():
        assert {outcome["label"] for outcome in s["outcomes"].values()} == {fresh[pair]}
