"""A sentence-pair (NLI) task end to end on the real stack: PostgreSQL, Redis and a Celery
worker process. The organizer imports SNLI's own files (slices of ../shared/data/nli-cad); a
hosted bag-of-ngrams pair model is validated by the worker (λmax over the hypothesis only); a
self-reported system uploads its labels; breakers submit pairs that edit the hypothesis; the
worker fills the prediction matrix and scores; the results say premise and hypothesis."""

from __future__ import annotations

import csv
import io
import json
import time
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.evaluation import services
from bibi.evaluation.models import ScoringRun
from bibi.sharedtasks.importing import examples_import
from bibi.systems.models import Prediction
from bibi.tasktypes import SENTENCE_PAIRS
from edits.words import split_words
from fim_engine.datasets import LabelledPairs
from fim_engine.sentence_pairs import SentencePair
from fim_engine.training import train_system

from ...conftest import REPO_ROOT
from ..conftest import build_cast
from ..pairs.conftest import start_phase_now
from ..systems.conftest import zip_directory

pytestmark = pytest.mark.slow

NLI = REPO_ROOT.parent / "shared" / "data" / "nli-cad" / "original"
LABELS = ["entailment", "neutral", "contradiction"]
BASE = "/api/v1/shared-tasks/nli/"


def snli_rows(name: str, each: int) -> list[tuple[str, str, str]]:
    """The first ``each`` rows of every label of an nli-cad file (its own quoting)."""
    with (NLI / name).open(encoding="utf-8", newline="") as handle:
        rows = [tuple(row) for row in csv.reader(handle, delimiter="\t")][1:]
    return [row for label in LABELS for row in [r for r in rows if r[2] == label][:each]]


def snli_file(rows: list[tuple[str, str, str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerows([("sentence1", "sentence2", "gold_label"), *rows])
    return buffer.getvalue().encode()


@pytest.fixture(scope="session")
def pair_model_dir(request) -> Path:
    """A bag-of-ngrams pair classifier with the task's three labels, trained a few steps on
    nli-cad's training pairs, cached between runs."""
    model = Path(request.config.cache.mkdir("bibi-bow-pair-nli")) / "model"
    if not (model / "model.safetensors").is_file():
        rows = snli_rows("train.tsv", 60)
        data = LabelledPairs([SentencePair(p, h) for p, h, _ in rows], [r[2] for r in rows], LABELS)
        train_system("bow-pair", data, data, model, max_steps=40, progress=False)
    return model


def wait_for(condition, what: str, worker, timeout: float = 300):
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}\n{worker.log()[-3000:]}")
        time.sleep(0.2)
    return value


def upload_model(client, directory: Path, name: str) -> str:
    created = client.post(f"{BASE}systems/", {"name": name, "kind": "hosted"}, format="json")
    assert created.status_code == 201, created.json()
    url = f"{BASE}systems/{created.json()['id']}/"
    archive = SimpleUploadedFile(f"{name}.zip", zip_directory(directory), "application/zip")
    upload = client.post(f"{url}versions/", {"archive": archive}, format="multipart")
    assert upload.status_code == 201, upload.json()
    return url


def version_done(client, url: str):
    return lambda: (
        body
        if (body := client.get(f"{url}versions/1/").json())["status"] in {"ready", "failed"}
        else None
    )


def test_a_sentence_pair_task_runs_end_to_end(
    transactional_db, celery_worker_process, pair_model_dir
):
    worker = celery_worker_process
    cast = build_cast(
        current_phase="build",
        name="NLI",
        slug="nli",
        task_type=SENTENCE_PAIRS.key,
        datasets=lambda task: (None, None, None),
    )
    task = cast.shared_task
    assert task.labels == LABELS  # the type's labels, as none were given
    starter, dev = snli_rows("test.tsv", 3), snli_rows("dev.tsv", 3)
    for split, rows in (("starter", starter), ("blind_dev", dev)):
        report = examples_import(
            shared_task=task,
            split=split,
            actor=cast.organizer,
            data=snli_file(rows),
            filename=f"{split}.tsv",
        )
        assert report.created == 9
    first = task.datasets.get(split="starter").examples.get(external_id="2")
    assert (first.text, first.text_b, first.label) == starter[0]

    # A hosted pair model, validated by the worker: λmax and hints over the hypothesis only.
    builder = cast.client("builder")
    hosted = upload_model(builder, pair_model_dir, "bow-pair")
    version = wait_for(version_done(builder, hosted), "the hosted version", worker)
    assert version["status"] == "ready", (version, worker.log()[-3000:])
    assert version["dev_count"] == 9
    fisher = builder.get(f"{hosted}versions/1/starter-fisher/").json()["results"]
    assert len(fisher) == 9 and all(row["lambda_max"] > 0 for row in fisher)
    hypotheses = {
        e.external_id: e.text_b for e in task.datasets.get(split="starter").examples.all()
    }
    for row in fisher:
        words = [
            hypotheses[row["id"]][start:end] for _, start, end in split_words(hypotheses[row["id"]])
        ]
        assert [hint[0] for hint in row["hints"]] == words
        assert {hint[2] for hint in row["hints"]} == {"hypothesis"}

    # A model that reads single texts is refused for a task of sentence pairs.
    text_model = upload_model(
        builder, REPO_ROOT / "fixtures" / "fim_engine" / "models" / "tiny-bow", "bow"
    )
    refused = wait_for(version_done(builder, text_model), "the refused version", worker)
    assert refused["status"] == "failed" and refused["failure_reason"] == "invalid_model"
    assert "single texts" in refused["failure_detail"], refused

    # A self-reported system answers the blind dev set by id.
    reported = builder.post(f"{BASE}systems/", {"name": "always-neutral", "kind": "self_reported"})
    reported_url = f"{BASE}systems/{reported.json()['id']}/"
    dev_rows = "id,label\n" + "".join(f"{n},neutral\n" for n in range(2, 11))
    answer = builder.post(
        f"{reported_url}predictions/",
        {"file": SimpleUploadedFile("dev.csv", dev_rows.encode()), "source": "blind_dev"},
        format="multipart",
    )
    assert answer.status_code == 201, answer.json()
    assert answer.json()["dev_accuracy"] == pytest.approx(3 / 9)

    # Breakers edit hypotheses; a pair that edits the premise is refused by the task's setting.
    start_phase_now(task, "break")
    breaker = cast.client("breaker")
    premise_edit = {
        "original_id": "2",
        "variant_premise": "A cat sleeps.",
        "variant_label": "neutral",
    }
    refused_pair = breaker.post(f"{BASE}pair-sets/", {"pairs": [premise_edit]}, format="json")
    assert refused_pair.status_code == 400
    assert refused_pair.json()["groups"][0]["kind"] == "fixed", refused_pair.json()
    entailed = starter[0][1]
    pairs = (
        "original_id,variant_hypothesis,variant_label,tags\n"
        f'2,"{entailed.replace(".", "")} on purpose.",neutral,pragmatics\n'
        f'5,"{starter[3][1].replace(".", "")} indoors.",{starter[3][2]},semantics\n'
    )
    submitted = breaker.post(
        f"{BASE}pair-sets/",
        {"file": SimpleUploadedFile("pairs.csv", pairs.encode())},
        format="multipart",
    )
    assert submitted.status_code == 201, submitted.json()
    assert submitted.json()["layout"] == "sentence_pairs"

    # After the break phase the self-reported system answers every pair item by its texts.
    start_phase_now(task, "contest")
    items = builder.get(f"{BASE}pair-texts/").content.decode().splitlines()
    assert len(items) == 4 and all('"premise"' in line and '"hypothesis"' in line for line in items)
    rows = [json.loads(line) for line in items]
    answers = "premise,hypothesis,label\n" + "".join(
        f'"{row["premise"]}","{row["hypothesis"]}",neutral\n' for row in rows
    )
    uploaded = builder.post(
        f"{reported_url}predictions/",
        {"file": SimpleUploadedFile("pairs.csv", answers.encode()), "source": "pairs"},
        format="multipart",
    )
    assert uploaded.status_code == 201, uploaded.json()

    # The worker computes the hosted cells of the pair items and scores.
    run = services.scoring_run_request(shared_task=task, trigger="organizer")
    run = wait_for(
        lambda: ScoringRun.objects.filter(id=run.id, status__in=["done", "failed"]).first(),
        "the scoring run",
        worker,
    )
    assert run.status == "done", run.failure_reason
    hosted_cells = Prediction.objects.filter(
        source="pairs", system_version__system__name="bow-pair"
    )
    assert {cell.text_b for cell in hosted_cells} >= {rows[0]["hypothesis"]}

    # The results say each item's premise and hypothesis.
    organizer = cast.client("organizer")
    assert organizer.post(f"{BASE}snapshots/{run.snapshot.id}/publish/").status_code == 200
    start_phase_now(task, "results")
    board = cast.client("anonymous").get(f"{BASE}leaderboard/builders/").json()["rows"]
    assert sorted(row["system"] for row in board) == [
        "Strawman / always-neutral",
        "Strawman / bow-pair",
    ]
    item = cast.client("anonymous").get(f"{BASE}leaderboard/items/").json()["results"][0]
    assert item["original_text"] == starter[0][0]
    assert item["original_text_b"] == entailed
    assert item["variant_text_b"].endswith("on purpose.")
    export = cast.client("anonymous").get(f"{BASE}leaderboard/export/")
    with zipfile.ZipFile(io.BytesIO(export.content)) as archive:
        header = archive.read("items.csv").decode().splitlines()[0]
    assert "original_premise,original_hypothesis,original_label" in header
    assert "variant_premise,variant_hypothesis,variant_label" in header
