"""The prediction matrix: which cells exist, which are computed, and how (in-process)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from bibi.evaluation import compute, services
from bibi.evaluation.matrix import pair_matrix
from bibi.evaluation.models import CellChunk, CellFailure
from bibi.systems.models import Prediction
from bibi.tasktypes.items import text_digest

from ..conftest import STARTER
from ..systems.conftest import TINY_MODELS
from .conftest import (
    OSU_PAIRS,
    build_scored_task,
    cell_of,
    hosted_version,
    resubmit_osu,
    score_now,
    upload_self_reported_pairs,
)

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

VARIANTS = sorted(
    {pair["variant_text"] for pair in OSU_PAIRS}
    | {
        "I'm mad for this movie!",
        "[Bettis] has a smoldering, humorless intensity that's hilarious.",
        "It's not harmless, sure, but it's also not charmless.",
        'Russell is "terrific" as coach Herb Brooks.',
    }
)


def request_and_advance(task, trigger: str = "organizer"):
    run = services.scoring_run_request(shared_task=task.shared_task, trigger=trigger, send=False)
    return services.scoring_run_advance(run_id=run.id, send=False)


def pair_cells(version) -> dict[str, Prediction]:
    return {p.text: p for p in version.predictions.filter(source=Prediction.Source.PAIRS)}


def test_starter_originals_known_from_validation_are_reused_not_recomputed(scored_task):
    starter_before = {
        version.id: dict(
            version.predictions.filter(source="starter").values_list("id", "lambda_max")
        )
        for version in scored_task.hosted_versions
    }

    run = request_and_advance(scored_task)

    chunks = CellChunk.objects.filter(run=run)
    assert sorted(text for chunk in chunks for text in chunk.items) == sorted(VARIANTS * 2)
    for chunk in chunks:
        compute.cell_chunk_compute(chunk_id=chunk.id)
    for version in scored_task.hosted_versions:
        assert sorted(pair_cells(version)) == VARIANTS
        starter_after = dict(
            version.predictions.filter(source="starter").values_list("id", "lambda_max")
        )
        assert starter_after == starter_before[version.id]
    matrix = pair_matrix(shared_task=scored_task.shared_task)
    assert matrix.cells_missing == 0
    assert matrix.cells_needed == 2 * (len(VARIANTS) + len(STARTER))


def test_missing_cells_are_cut_into_chunks_of_one_version_each(scored_task, settings):
    settings.EVALUATION_CHUNK_SIZE = 3

    run = request_and_advance(scored_task)

    chunks = list(CellChunk.objects.filter(run=run).order_by("id"))
    assert [chunk.size for chunk in chunks] == [3, 3, 1, 3, 3, 1]
    assert {chunk.system_version_id for chunk in chunks[:3]} == {scored_task.hosted_versions[0].id}
    assert run.status == "waiting_for_cells"
    assert (run.cells_needed, run.cells_done) == (22, 8)


def test_a_cell_computed_twice_is_written_once_with_the_same_values(scored_task):
    run = request_and_advance(scored_task)
    chunk = CellChunk.objects.filter(run=run).first()
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == chunk.size
    first = {
        p.text: (p.id, p.label, p.lambda_max) for p in Prediction.objects.filter(source="pairs")
    }

    # A redelivered message finds the chunk done; a resend after the cells were written
    # (the worker died before marking it) finds every cell there and writes none.
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == 0
    CellChunk.objects.filter(id=chunk.id).update(done_at=None)
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == 0

    again = {
        p.text: (p.id, p.label, p.lambda_max) for p in Prediction.objects.filter(source="pairs")
    }
    assert again == first


def test_the_upsert_replaces_a_cell_on_its_key_instead_of_adding_one(scored_task):
    run = request_and_advance(scored_task)
    chunk = CellChunk.objects.filter(run=run).first()
    compute.cell_chunk_compute(chunk_id=chunk.id)
    version = chunk.system_version
    stale = Prediction.objects.filter(system_version=version, source="pairs").first()
    Prediction.objects.filter(id=stale.id).update(lambda_max=None, label="stale")

    # The cell lost its λmax, so it is missing again; computing it overwrites the same row.
    run = request_and_advance(scored_task)
    redo = CellChunk.objects.get(run=run, system_version=version, done_at__isnull=True)
    assert redo.items == [stale.text]
    compute.cell_chunk_compute(chunk_id=redo.id)

    fresh = Prediction.objects.get(system_version=version, source="pairs", text=stale.text)
    assert fresh.id == stale.id and fresh.label != "stale" and fresh.lambda_max is not None


def test_two_runs_asked_at_once_share_the_cells_instead_of_computing_them_twice(scored_task):
    first = request_and_advance(scored_task)
    # The first run is scoring something else by now; a second one is asked for.
    services.scoring_run_request(
        shared_task=scored_task.shared_task, trigger="organizer", send=False
    )
    from bibi.evaluation.models import ScoringRun

    ScoringRun.objects.filter(id=first.id).update(status="scoring")
    # A change (a version became ready) needs a run that has yet to read the data: a new one.
    second = request_and_advance(scored_task, trigger="version_ready")

    assert second.id != first.id
    assert not CellChunk.objects.filter(run=second).exists()
    assert second.status == "waiting_for_cells"
    for chunk in CellChunk.objects.all():
        compute.cell_chunk_compute(chunk_id=chunk.id)
    assert services.scoring_run_advance(run_id=second.id, send=False).status == "scoring"


def test_a_request_while_a_run_waits_for_cells_is_that_run(scored_task):
    first = services.scoring_run_request(
        shared_task=scored_task.shared_task, trigger="organizer", send=False
    )
    again = services.scoring_run_request(
        shared_task=scored_task.shared_task, trigger="adjudication", send=False
    )

    assert again.id == first.id


def test_what_truncation_made_identical_is_recorded_per_cell(settings, db):
    settings.SYSTEM_MAX_SEQUENCE_LENGTH = 6
    task = build_scored_task()
    pairs = [
        {"original_id": "s4", "variant_text": "Russell is terrific as coach Herb Brooks, sadly.",
         "variant_label": "negative"},
    ]  # fmt: skip
    resubmit_osu(task, pairs)
    upload_self_reported_pairs(task)

    run = score_now(task)

    assert run.status == "done", run.failure_reason
    cnn = task.cnn.versions.get()
    original = cnn.predictions.get(source="starter", text=STARTER[3][1])
    variant = cnn.predictions.get(source="pairs", text=pairs[0]["variant_text"])
    assert original.truncated and variant.truncated
    assert original.input_sha256 == variant.input_sha256 != ""
    item = run.snapshot.items.get(variant_text=pairs[0]["variant_text"])
    assert cell_of(item, task.cnn)["outcome"] == "unseen"
    # The self-reported system read the whole text: it saw the pair.
    assert cell_of(item, task.by_hand)["outcome"] != "unseen"
    builders = {row["system_id"]: row for row in run.snapshot.tables["builders"]}
    assert builders[task.cnn.id]["unseen"] >= 1
    assert builders[task.by_hand.id]["unseen"] == 0


@pytest.fixture
def overflows_on_awful(tmp_path):
    """tiny-cnn whose weights are all finite, but whose outputs are NaN for a text with the
    word "awful": its embedding is the largest float32 and the output layer amplifies it."""
    model = tmp_path / "overflowing-cnn"
    shutil.copytree(TINY_MODELS / "tiny-cnn", model)
    vocabulary = json.loads((model / "vocab.json").read_text())
    weights = load_file(model / "model.safetensors")
    weights["embedding.weight"][vocabulary["awful"]] = np.finfo(np.float32).max
    weights["output.weight"] = weights["output.weight"] * 1000
    save_file(weights, model / "model.safetensors")
    return model


def test_a_text_the_model_fails_on_is_recorded_and_the_rest_of_the_run_completes(
    db, overflows_on_awful
):
    def validate(cast, team, user, name, model):
        return hosted_version(
            cast, team, user, name, overflows_on_awful if name == "cnn" else model
        )

    task = build_scored_task(validate=validate)
    awful = [
        {
            "original_id": "s1",
            "variant_text": "I love this awful movie!",
            "variant_label": "negative",
        }
    ]
    resubmit_osu(task, awful)
    upload_self_reported_pairs(task)

    run = score_now(task)

    assert run.status == "done", run.failure_reason
    failure = CellFailure.objects.get()
    assert failure.text == "I love this awful movie!"
    assert "NaN or infinite" in failure.reason
    assert failure.system_version.system == task.cnn
    assert run.snapshot.failures == [
        {"system_id": task.cnn.id, "text": "I love this awful movie!", "reason": failure.reason}
    ]
    item = run.snapshot.items.get(variant_text="I love this awful movie!")
    assert cell_of(item, task.cnn)["outcome"] == "failed"
    assert cell_of(item, task.bow)["outcome"] != "failed"
    # Every other text of cnn has its cell.
    cnn = task.cnn.versions.get()
    assert len(pair_cells(cnn)) == len(VARIANTS)
    assert text_digest("I love this awful movie!") not in {
        p.text_sha256 for p in cnn.predictions.all()
    }


def test_a_pair_cell_keeps_what_the_engine_gives_for_guidance(scored_task):
    run = request_and_advance(scored_task)
    chunk = CellChunk.objects.filter(run=run).first()

    compute.cell_chunk_compute(chunk_id=chunk.id)

    cell = Prediction.objects.filter(source="pairs").first()
    assert cell.lambda_max > 0 and set(cell.probabilities) == {"negative", "positive"}
    assert [word for word, _ in cell.leverage] == [word for word, _ in cell.hints]
    assert all(score >= 0 for _, score in cell.leverage)
    starter = Prediction.objects.filter(source="starter").first()
    assert starter.leverage and starter.input_sha256
