"""Span cells (sentence + question items) computed in-process: pair items, reuse of the
starter cells from validation, blind-dev chunks that update the dev scores, and failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from django.conf import settings

from bibi.evaluation import compute
from bibi.evaluation.models import CellChunk, CellFailure
from bibi.sharedtasks.models import Example
from bibi.systems import runner
from bibi.systems.models import Prediction
from bibi.systems.selectors import span_dev_scores
from bibi.tasktypes.items import item_key
from fim_engine.span_model import load_span_system

from ..spancast import PLAN, QA_ITEMS, QA_STARTER, UCD, build_span_cast, upload_and_validate

pytestmark = pytest.mark.django_db

VARIANT = UCD.replace("St Vincents", "Na Fianna")
QUESTION = "who did someone beat ?"


def chunk_of(version, source: str, items: list) -> CellChunk:
    return CellChunk.objects.create(
        shared_task=version.system.shared_task,
        system_version=version,
        source=source,
        items=items,
        size=len(items),
    )


@pytest.fixture
def span_version(qa_dir):
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    version = upload_and_validate(cast, qa_dir)
    assert version.status == "ready", version.failure_detail
    return version


def test_a_pair_item_gets_its_answer_span_and_span_lambda_max(span_version, qa_dir):
    _, original, question, *_ = QA_STARTER[1]
    chunk = chunk_of(span_version, "pairs", [[VARIANT, question], [original, question]])

    # The original's starter cell from validation serves the pair: only the variant is new.
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == 1
    cell = span_version.predictions.get(source="pairs")
    assert (cell.text, cell.question) == (VARIANT, question)
    assert cell.text_sha256 == item_key((VARIANT, question))
    system = load_span_system(qa_dir, device="cpu")
    answer = system.predict([question], [VARIANT])[0]
    fisher = system.fisher([question], [VARIANT])[0]
    assert (cell.answer_start, cell.answer_end, cell.answer_text) == (
        answer.start,
        answer.end,
        answer.text,
    )
    assert cell.lambda_max == pytest.approx(fisher.lambda_max, rel=1e-4)
    assert [w for w, _ in cell.hints] == VARIANT.split()
    assert [w for w, _ in cell.leverage] == VARIANT.split()
    chunk.refresh_from_db()
    assert chunk.done_at is not None and chunk.computed == 1

    # Delivered twice, the chunk writes nothing more.
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == 0
    assert span_version.predictions.filter(source="pairs").count() == 1


def test_one_sentence_asked_two_questions_is_two_cells(span_version):
    items = [[VARIANT, "who beat someone ?"], [VARIANT, QUESTION]]
    assert compute.cell_chunk_compute(chunk_id=chunk_of(span_version, "pairs", items).id) == 2
    cells = span_version.predictions.filter(source="pairs", text=VARIANT)
    assert sorted(cells.values_list("question", flat=True)) == sorted(q for _, q in items)


def test_a_new_blind_dev_item_updates_the_dev_scores(span_version):
    dataset = span_version.system.shared_task.datasets.get(split="blind_dev")
    answer = {"start": PLAN.index("a long debate"), "end": 0, "text": "a long debate"}
    answer["end"] = answer["start"] + len(answer["text"])
    example = Example.objects.create(
        dataset=dataset,
        external_id="d4",
        text=PLAN,
        label="",
        question="when did someone approve something ?",
        answers=[answer],
        position=3,
    )
    chunk = chunk_of(span_version, "blind_dev", [example.id])
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == 1
    span_version.refresh_from_db()
    cells = list(span_version.predictions.filter(source="blind_dev").select_related("example"))
    assert len(cells) == 4 and span_version.dev_count == 4
    figures = span_dev_scores(shared_task=span_version.system.shared_task, cells=cells)
    assert (span_version.dev_accuracy, span_version.dev_token_f1) == (
        figures.accuracy,
        figures.token_f1,
    )
    new = next(c for c in cells if c.example_id == example.id)
    assert new.lambda_max is None and new.question == example.question


def test_an_item_the_model_cannot_be_loaded_for_is_a_failure_under_its_item_key(span_version):
    runner._LOADED.clear()
    # Damaged on this machine (a missing model would be fetched again from its archive).
    model = Path(settings.MODEL_STORE) / span_version.model_dir
    shutil.rmtree(model)
    model.mkdir()
    (model / "config.json").write_text("{not json")
    chunk = chunk_of(span_version, "pairs", [[VARIANT, QUESTION]])
    assert compute.cell_chunk_compute(chunk_id=chunk.id) == 0
    failure = CellFailure.objects.get(system_version=span_version)
    assert failure.text == VARIANT
    assert failure.text_sha256 == item_key((VARIANT, QUESTION))
    assert "could not be loaded" in failure.reason
    assert not Prediction.objects.filter(system_version=span_version, source="pairs").exists()
