"""Hosted extractive QA systems on a span task, validated in-process: the archive and model
checks, the blind dev answers and their scores, and span λmax on every starter item."""

from __future__ import annotations

import pickle
import shutil

import numpy as np
import pandas as pd
import pytest

from bibi.systems.models import Prediction
from bibi.tasktypes.items import item_key
from fim_engine.span_model import load_span_system
from scoring.answers import answer_scores

from ..spancast import (
    PLAN,
    QA_BLIND_DEV,
    QA_ITEMS,
    QA_STARTER,
    RAIN,
    answers_of,
    build_span_cast,
    upload_and_validate,
)
from .conftest import TINY_MODELS

pytestmark = pytest.mark.django_db


def test_a_qa_model_answers_the_blind_dev_set_and_is_scored_by_the_task_rule(qa_dir):
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    version = upload_and_validate(cast, qa_dir)
    assert version.status == "ready", version.failure_detail
    assert version.model_format == "transformers" and version.label_mapping == {}

    direct = load_span_system(qa_dir, device="cpu").predict(
        [q for _, _, q, *_ in QA_BLIND_DEV], [s for _, s, _, *_ in QA_BLIND_DEV]
    )
    cells = {
        c.example.external_id: c
        for c in version.predictions.filter(source="blind_dev").select_related("example")
    }
    assert sorted(cells) == ["d1", "d2", "d3"]
    for (eid, sentence, question, *_), answer in zip(QA_BLIND_DEV, direct, strict=True):
        cell = cells[eid]
        assert (cell.answer_start, cell.answer_end) == (answer.start, answer.end)
        assert cell.answer_text == sentence[answer.start : answer.end] == answer.text
        assert cell.question == question and cell.label == "" and cell.probabilities is None
        assert cell.text_sha256 == item_key((sentence, question))
        assert cell.lambda_max is None
    # The scores, counted here with scoring.answers directly under the default mode.
    expected = answer_scores(
        pd.DataFrame(
            {
                "system": "qa",
                "item": [eid for eid, *_ in QA_BLIND_DEV],
                "text": [a.text for a in direct],
            }
        ),
        pd.DataFrame(
            [(eid, text) for eid, *_, texts in QA_BLIND_DEV for text in texts],
            columns=["item", "text"],
        ),
        mode="token_f1",
    )
    assert version.dev_count == 3
    assert version.dev_accuracy == pytest.approx(expected["correct"].mean())
    assert version.dev_token_f1 == pytest.approx(expected["token_f1"].mean())
    assert version.dev_macro_f1 is None


def test_every_starter_item_gets_span_lambda_max_with_word_hints_and_leverage(qa_dir):
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    version = upload_and_validate(cast, qa_dir)
    assert version.status == "ready", version.failure_detail
    cells = list(version.predictions.filter(source="starter").select_related("example"))
    # Two questions about one sentence are two cells.
    assert sorted(c.example.external_id for c in cells) == ["s1", "s2", "s3"]
    assert len({c.text_sha256 for c in cells}) == 3

    system = load_span_system(qa_dir, device="cpu")
    direct = system.fisher([q for _, _, q, *_ in QA_STARTER], [s for _, s, _, *_ in QA_STARTER])
    by_id = {c.example.external_id: c for c in cells}
    for (eid, sentence, *_), result in zip(QA_STARTER, direct, strict=True):
        cell = by_id[eid]
        assert cell.lambda_max > 0
        assert cell.lambda_max == pytest.approx(result.lambda_max, rel=1e-4)
        assert [word for word, _ in cell.hints] == sentence.split()
        assert [word for word, _ in cell.leverage] == sentence.split()
        norms = np.array([score for _, score in cell.hints])
        assert float((norms**2).sum()) == pytest.approx(1.0, abs=1e-6)
        assert cell.input_sha256 and not cell.truncated


def test_a_task_answer_mode_decides_the_dev_accuracy(qa_dir):
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    task = cast.shared_task
    task.answer_mode = "overlap_2017"
    task.save(update_fields=["answer_mode"])
    version = upload_and_validate(cast, qa_dir)
    cells = {
        c.example.external_id: c
        for c in version.predictions.filter(source="blind_dev").select_related("example")
    }
    expected = answer_scores(
        pd.DataFrame(
            {
                "system": "qa",
                "item": list(cells),
                "text": [c.answer_text for c in cells.values()],
                "start": [c.answer_start for c in cells.values()],
                "end": [c.answer_end for c in cells.values()],
            }
        ),
        pd.DataFrame(
            [
                (eid, g["text"], g["start"], g["end"])
                for eid, sentence, *_, texts in QA_BLIND_DEV
                for g in answers_of(sentence, texts)
            ],
            columns=["item", "text", "start", "end"],
        ),
        mode="overlap_2017",
    )
    assert version.dev_accuracy == pytest.approx(expected["correct"].mean())


def test_a_sequence_classifier_is_refused_on_a_span_task():
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    version = upload_and_validate(cast, TINY_MODELS / "tiny-bert")
    assert (version.status, version.failure_reason) == ("failed", "invalid_model")
    assert "extractive QA model" in version.failure_detail
    assert not version.counts_against_quota
    assert not Prediction.objects.filter(system_version=version).exists()


def test_a_qa_directory_with_pickled_weights_is_refused_before_loading(qa_dir, tmp_path):
    directory = tmp_path / "qa"
    shutil.copytree(qa_dir, directory)
    (directory / "pytorch_model.bin").write_bytes(pickle.dumps({"w": [1.0]}))
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    version = upload_and_validate(cast, directory)
    assert (version.status, version.failure_reason) == ("failed", "invalid_model")
    assert "pytorch_model.bin" in version.failure_detail


def test_a_qa_directory_asking_for_remote_code_is_refused(qa_dir, tmp_path):
    import json

    directory = tmp_path / "qa"
    shutil.copytree(qa_dir, directory)
    config = json.loads((directory / "config.json").read_text())
    config["auto_map"] = {"AutoModelForQuestionAnswering": "modeling.MyQA"}
    (directory / "config.json").write_text(json.dumps(config))
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    version = upload_and_validate(cast, directory)
    assert (version.status, version.failure_reason) == ("failed", "invalid_model")
    assert "auto_map" in version.failure_detail


def test_a_qa_model_with_a_task_of_labels_is_refused(qa_dir):
    from ..conftest import build_cast

    cast = build_cast(current_phase="build")
    version = upload_and_validate(cast, qa_dir)
    assert (version.status, version.failure_reason) == ("failed", "invalid_model")


def test_two_examples_asking_one_question_of_one_sentence_share_a_cell_counted_once(qa_dir):
    # QA-SRL asks the same question of one sentence for two predicates at times (31 repeats in
    # the 2017 blind dev set): one cell answers both and is scored once, against the union of
    # their gold answers (the dev counting rule of every path: test_span_dev_rule.py).
    from bibi.sharedtasks.models import Example

    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    repeats = (
        (cast.blind_dev, "d4", RAIN, "what flooded something ?", "Heavy rain"),
        (cast.starter, "s4", PLAN, "what did someone approve ?", "the plan"),
    )
    for dataset, eid, sentence, question, answer in repeats:
        start = sentence.index(answer)
        Example.objects.create(
            dataset=dataset,
            external_id=eid,
            text=sentence,
            question=question,
            label="",
            answers=[{"start": start, "end": start + len(answer), "text": answer}],
            position=10,
        )
    version = upload_and_validate(cast, qa_dir)

    assert version.status == "ready", version.failure_detail
    assert version.dev_count == 3
    digests = list(
        version.predictions.filter(source="blind_dev").values_list("text_sha256", flat=True)
    )
    assert len(digests) == len(set(digests)) == 3
    assert version.predictions.filter(source="starter").count() == 3
