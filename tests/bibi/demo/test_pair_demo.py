"""The demo's sentence-pair (NLI) task on the embedded default, from slices of
../shared/data/nli-cad.

The whole build (SNLI files imported, two hosted uploads validated, the self-reported
heuristic, the hand-written pairs, scoring, publication) runs for real with small bag-of-ngrams
pair models standing in for the trained ones (training is fim_engine's to test).
"""

from __future__ import annotations

import csv
from io import StringIO

import pytest
from django.core.management import call_command

from bibi.demo import builder, models, pair_builder
from bibi.demo.pair_data import LABELS, PairDemoData
from bibi.sharedtasks.models import Example, Phase
from bibi.systems.models import System
from bibi.tasktypes import SENTENCE_PAIRS
from fim_engine.datasets import LabelledPairs
from fim_engine.sentence_pairs import SentencePair
from fim_engine.training import train_system

from .conftest import FIXTURE_DATA, REPO_ROOT, published_tables

NLI = REPO_ROOT.parent / "shared" / "data" / "nli-cad"
needs_nli = pytest.mark.skipif(
    not (NLI / "original" / "test.tsv").is_file(), reason="../shared/data/nli-cad is not here"
)
PAIRS = REPO_ROOT / "fixtures" / "demo-nli" / "pairs.csv"
NO_SPANS = ("--span-data", str(FIXTURE_DATA))


@pytest.fixture
def tiny_pair_models(monkeypatch, tmp_path):
    """The trained pair models replaced by one tiny bag-of-ngrams pair model (three labels)."""
    data = PairDemoData.find(NLI)
    rows = data.slices["starter"].rows
    pairs = LabelledPairs(
        [SentencePair(p, h) for p, h, _ in rows], [r[2] for r in rows], list(LABELS)
    )
    directory = tmp_path / "tiny-bow-pair"
    train_system("bow-pair", pairs, pairs, directory, max_steps=5, progress=False)
    trained = []

    def stand_in(architecture, data, *, progress=True):
        trained.append(architecture)
        return models.TrainedModel(architecture, directory, 0.4, True)

    monkeypatch.setattr(pair_builder, "pair_model_train", stand_in)
    return trained


@needs_nli
def test_the_slices_are_balanced_distinct_and_hold_the_pairs_originals():
    found = PairDemoData.find(NLI)
    assert found is not None
    counts = {split: len(piece.rows) for split, piece in found.slices.items()}
    assert counts == {"train": 1200, "blind_dev": 60, "starter": 36}
    for piece in found.slices.values():
        labels = [row[2] for row in piece.rows]
        assert {labels.count(label) for label in LABELS} == {len(labels) // 3}
    starter = found.slices["starter"].rows
    with PAIRS.open(encoding="utf-8", newline="") as handle:
        written = list(csv.DictReader(handle))
    # Ids are the starter file's line numbers (SNLI's files have none): 2 is its first row.
    for pair in written:
        premise, hypothesis, _ = starter[int(pair["original_id"]) - 2]
        assert pair["variant_hypothesis"] != hypothesis and pair["variant_label"] in LABELS
    assert found.digest() == PairDemoData.find(NLI).digest()


def test_the_word_overlap_heuristic_reads_words_not_meaning():
    premise = "Two women are petting a small kangaroo."
    assert pair_builder.word_overlap(premise, "Two women are petting a kangaroo") == "entailment"
    assert pair_builder.word_overlap(premise, "Nobody is petting a kangaroo") == "contradiction"
    assert pair_builder.word_overlap(premise, "Two women are at a zoo.") == "neutral"


@needs_nli
@pytest.mark.embedded
@pytest.mark.django_db(transaction=True)
def test_the_pair_task_is_built_scored_published_and_kept(tiny_models, tiny_pair_models, var_dir):
    out = StringIO()
    call_command(
        "demo", "--data", str(FIXTURE_DATA), *NO_SPANS, "--pair-data", str(NLI), stdout=out
    )
    text = out.getvalue()
    task = pair_builder.pair_task()
    assert task is not None and task.kind is SENTENCE_PAIRS and task.editable_text == "second"
    assert task.phase_at().kind == Phase.Kind.RESULTS
    counts = {
        split: Example.objects.filter(dataset__shared_task=task, dataset__split=split).count()
        for split in ("train", "blind_dev", "starter")
    }
    assert counts == {"train": 1200, "blind_dev": 60, "starter": 36}
    assert sorted(tiny_pair_models) == sorted(models.PAIR_TRAINING)
    kinds = dict(System.objects.filter(team__shared_task=task).values_list("name", "kind"))
    assert kinds == {
        "bow-pair": "hosted",
        "minilm-pair": "hosted",
        pair_builder.HEURISTIC: "self_reported",
    }

    builders, breakers = published_tables(task)
    teams = {row["team"]: row["pairs"] for row in breakers}
    written = len(PAIRS.read_text().splitlines()) - 1
    assert teams[builder.BREAKER_TEAM] == written
    assert builder.BASELINE_TEAM in teams or f"{builder.BASELINE_TEAM}: no pairs, " in text
    assert all(row["pairs"] == sum(teams.values()) for row in builders)
    assert f"/tasks/{pair_builder.PAIR_SLUG}/" in text

    again = StringIO()
    call_command(
        "demo", "--data", str(FIXTURE_DATA), *NO_SPANS, "--pair-data", str(NLI), stdout=again
    )
    assert "The sentence-pair task is built" in again.getvalue()
    assert pair_builder.pair_task().id == task.id
    assert len(tiny_pair_models) == len(models.PAIR_TRAINING)


@needs_nli
def test_the_demo_trains_a_pair_model_through_its_own_path(var_dir, monkeypatch):
    """``pair_model_train`` for real, bounded to a few steps: trained once, then cached."""
    monkeypatch.setitem(models.PAIR_TRAINING, "bow-pair", {"max_steps": 3, "max_length": 64})
    data = PairDemoData.find(NLI)
    first = models.pair_model_train("bow-pair", data, progress=False)
    assert not first.cached and (first.directory / "model.safetensors").is_file()
    assert 0.0 <= first.dev_accuracy <= 1.0
    second = models.pair_model_train("bow-pair", data, progress=False)
    assert second.cached and second.directory == first.directory
