"""The demo's QA-SRL span task on the embedded default, from slices of ../shared/data/qasrl.

The whole build (import, hosted upload and validation, the self-reported heuristic, the
hand-written pairs, scoring, publication) runs for real with a tiny random QA model standing
in for the fine-tuned one; one test fine-tunes MiniLM for two steps through the demo's own
training path (``span_model_train``).
"""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from bibi.demo import builder, models, span_builder, span_data
from bibi.demo.span_data import SpanDemoData
from bibi.sharedtasks.models import Example, Phase, SharedTask
from bibi.systems.models import System, SystemVersion
from bibi.tasktypes import SPAN_EXTRACTION

from ..systems.span_cast import tiny_qa_model
from .conftest import FIXTURE_DATA, REPO_ROOT, published_tables

QASRL = REPO_ROOT.parent / "shared" / "data" / "qasrl"
needs_qasrl = pytest.mark.skipif(
    not (QASRL / "wiki1.dev.qa").is_file(), reason="../shared/data/qasrl is not here"
)
PAIRS = REPO_ROOT / "fixtures" / "demo-qasrl" / "pairs.jsonl"
# The sentence-pair task (test_pair_demo.py) is left out: this directory holds no nli-cad files.
NO_PAIRS = ("--pair-data", str(FIXTURE_DATA))


@pytest.fixture
def tiny_span_model(monkeypatch, tmp_path):
    """The fine-tuned span model replaced by a tiny random QA model."""
    trained = []
    directory = tiny_qa_model(tmp_path / "tiny-qa")

    def stand_in(data, *, progress=True):
        trained.append(data.directory)
        return models.TrainedSpanModel(
            models.SPAN_ARCHITECTURE,
            directory,
            {"exact": 0.0, "token_f1": 0.0, "overlap_2017": 0.0, "mean_token_f1": 0.0},
            0,
            0.0,
            cached=True,
        )

    monkeypatch.setattr(span_builder, "span_model_train", stand_in)
    return trained


@needs_qasrl
def test_the_slices_are_bounded_distinct_and_hold_the_pairs_originals(tmp_path):
    found = SpanDemoData.find(QASRL)
    assert found is not None
    counts = {split: piece.questions for split, piece in found.slices.items()}
    assert counts["train"] >= span_data.TRAIN_QUESTIONS
    assert span_data.BLIND_DEV_QUESTIONS <= counts["blind_dev"] < 400
    assert 40 <= counts["starter"] <= 60
    starter, blind_dev = (set(found.slices[split].blocks) for split in ("starter", "blind_dev"))
    assert not starter & blind_dev
    starter_ids = {block.split("\t")[0] for block in starter}
    originals = {json.loads(line)["original_id"] for line in PAIRS.read_text().splitlines()}
    assert {original.rsplit(".", 2)[0] for original in originals} <= starter_ids
    assert found.digest() == SpanDemoData.find(QASRL).digest()
    assert SpanDemoData.find(tmp_path) is None


def test_the_heuristic_answers_with_the_opening_words():
    assert span_builder.opening_words("On one occasion the lamps went out .") == "On one occasion"
    assert span_builder.opening_words("Porter , in 1980 , wrote .") == "Porter"
    assert span_builder.opening_words("`` Quoted '' words") == "``"


@needs_qasrl
@pytest.mark.embedded
@pytest.mark.django_db(transaction=True)
def test_the_span_task_is_built_scored_published_and_kept(
    tiny_models, tiny_span_model, var_dir, tmp_path, monkeypatch
):
    """Without the QA-SRL files the demo says so and builds the sentiment tasks; with them it
    builds the span task once (a short training slice: the model is a stand-in), then finds
    it built."""
    monkeypatch.setattr(span_data, "TRAIN_QUESTIONS", 20)
    out = StringIO()
    call_command(
        "demo", "--data", str(FIXTURE_DATA), "--span-data", str(tmp_path), *NO_PAIRS, stdout=out
    )
    assert f"No QA-SRL data in {tmp_path}" in out.getvalue()
    assert SharedTask.objects.filter(slug=builder.SLUG).exists()
    assert span_builder.span_task() is None and tiny_span_model == []

    out = StringIO()
    call_command(
        "demo", "--data", str(FIXTURE_DATA), "--span-data", str(QASRL), *NO_PAIRS, stdout=out
    )
    text = out.getvalue()
    task = span_builder.span_task()
    assert task is not None and task.kind is SPAN_EXTRACTION
    assert task.phase_at().kind == Phase.Kind.RESULTS
    counts = {
        split: Example.objects.filter(dataset__shared_task=task, dataset__split=split).count()
        for split in ("train", "blind_dev", "starter")
    }
    assert 20 <= counts["train"] < 60 and 290 <= counts["blind_dev"] < 400
    assert 40 <= counts["starter"] <= 60
    kinds = dict(System.objects.filter(team__shared_task=task).values_list("name", "kind"))
    assert kinds == {models.SPAN_ARCHITECTURE: "hosted", span_builder.HEURISTIC: "self_reported"}
    heuristic = System.objects.get(team__shared_task=task, name=span_builder.HEURISTIC)
    assert heuristic.active_version.status == SystemVersion.Status.READY
    assert 0 < heuristic.active_version.dev_token_f1 < 0.5

    builders, breakers = published_tables(task)
    assert {row["system"] for row in builders} == {
        f"{builder.BUILDER_TEAM} / {models.SPAN_ARCHITECTURE}",
        f"{builder.BUILDER_TEAM} / {span_builder.HEURISTIC}",
    }
    teams = {row["team"]: row["pairs"] for row in breakers}
    assert teams[builder.BREAKER_TEAM] == len(PAIRS.read_text().splitlines())
    assert builder.BASELINE_TEAM in teams or f"{builder.BASELINE_TEAM}: no pairs, " in text
    # Every system is scored on every team's pairs (the baseline's unverified ones left out).
    assert all(row["pairs"] == sum(teams.values()) for row in builders)
    assert "mean token F1 and answer accuracy" in text
    assert f"/tasks/{span_builder.SPAN_SLUG}/" in text

    again = StringIO()
    call_command(
        "demo", "--data", str(FIXTURE_DATA), "--span-data", str(QASRL), *NO_PAIRS, stdout=again
    )
    assert "The span task is built" in again.getvalue()
    assert span_builder.span_task().id == task.id
    assert "mean token F1 and answer accuracy" in again.getvalue()
    assert len(tiny_span_model) == 1


@needs_qasrl
def test_the_span_model_is_fine_tuned_once_through_the_demo_path(var_dir, monkeypatch):
    """Two steps of MiniLM fine-tuning on a small slice: trained, scored on the blind dev
    slice, cached; the second call finds it."""
    monkeypatch.setattr(span_data, "TRAIN_QUESTIONS", 8)
    monkeypatch.setattr(span_data, "BLIND_DEV_QUESTIONS", 6)
    monkeypatch.setattr(span_data, "STARTER_QUESTIONS", 2)
    tiny = {"epochs": 1, "max_steps": 2, "batch_size": 4, "max_length": 64, "learning_rate": 1e-4}
    monkeypatch.setattr(models, "SPAN_TRAINING", tiny)
    found = SpanDemoData.find(QASRL)
    first = models.span_model_train(found, progress=False)
    assert not first.cached
    assert set(first.dev_scores) == {
        "exact",
        "token_f1",
        "overlap_2017",
        "overlap_longer",
        "mean_token_f1",
    }
    assert 0 < first.dev_questions <= found.slices["blind_dev"].questions
    assert (first.directory / "model.safetensors").is_file()
    again = models.span_model_train(found, progress=False)
    assert again.cached and again.directory == first.directory
    assert again.dev_scores == first.dev_scores
    assert not list(models.cache_dir().glob("*.partial"))
