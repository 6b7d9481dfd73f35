"""Hosted extractive QA systems: the safe-loading refusals, best-span prediction, and the
MiniLM span baseline trained a few steps on a tiny fixture."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path
from types import ModuleType

import pytest
import torch

from fim_engine.errors import (
    MissingWeightsError,
    PickledWeightsError,
    RemoteCodeError,
    UnknownArchitectureError,
)
from fim_engine.qasrl import read_qa
from fim_engine.span_model import SpanSystem, check_span_model_dir, load_span_system
from fim_engine.span_training import answer_positions, span_examples, train_span_system

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qasrl"
QUESTIONS = ["what is fun ?", "what was dull ?", "what is good ?"]
SENTENCES = ["the film is fun and witty .", "this movie was dull , not charming at all", "good"]


@pytest.fixture(scope="module")
def qa_dir(tmp_path_factory: pytest.TempPathFactory, builders: ModuleType) -> Path:
    from transformers import BertForQuestionAnswering

    torch.manual_seed(5)
    out = tmp_path_factory.mktemp("tiny-qa")
    BertForQuestionAnswering(builders.tiny_bert_config(2)).save_pretrained(out)
    builders.tiny_tokenizer().save_pretrained(out)
    return out


@pytest.fixture(scope="module")
def tiny_qa(qa_dir: Path) -> SpanSystem:
    return load_span_system(qa_dir, device="cpu", batch_size=2, max_answer_tokens=3)


def test_the_best_span_is_the_best_allowed_one_of_the_sentence(tiny_qa: SpanSystem) -> None:
    predictions = tiny_qa.predict(QUESTIONS, SENTENCES)
    batch = tiny_qa.encode(QUESTIONS, SENTENCES)
    with torch.inference_mode():
        out = tiny_qa.module(input_ids=batch.input_ids, **batch.model_inputs())
    for row, (sentence, prediction) in enumerate(zip(SENTENCES, predictions, strict=True)):
        context = batch.context[row].nonzero().squeeze(-1).tolist()
        best = max(
            (float(out.start_logits[row, s] + out.end_logits[row, e]), s, e)
            for s in context
            for e in context
            if 0 <= e - s < 3
        )
        _, s, e = best
        start, end = int(batch.offsets[row, s, 0]), int(batch.offsets[row, e, 1])
        assert (prediction.start, prediction.end) == (start, end)
        assert prediction.text == sentence[start:end] and prediction.text
        assert prediction.score == pytest.approx(best[0], rel=1e-5)
        assert not prediction.truncated


def test_a_batch_predicts_what_each_pair_predicts_alone(tiny_qa: SpanSystem) -> None:
    together = tiny_qa.predict(QUESTIONS, SENTENCES)
    alone = [tiny_qa.predict([q], [s])[0] for q, s in zip(QUESTIONS, SENTENCES, strict=True)]
    assert [(p.start, p.end) for p in together] == [(p.start, p.end) for p in alone]


def test_only_the_sentence_is_context_and_a_long_one_is_cut(tiny_qa: SpanSystem) -> None:
    batch = tiny_qa.encode(["what is fun ?"], ["fun " * 100])
    assert batch.truncated == [True]
    assert batch.words[0][:2] == ["fun", "fun"]
    question_tokens = batch.token_type_ids[0] == 0 if batch.token_type_ids is not None else None
    assert question_tokens is not None and not bool((batch.context[0] & question_tokens).any())


def test_answer_positions_map_character_spans_to_tokens(tiny_qa: SpanSystem) -> None:
    sentence = "the film is unbelievably fun ."
    batch = tiny_qa.encode(["what is fun ?"] * 2, [sentence] * 2)
    a = sentence.index("unbelievably")
    positions = answer_positions(batch, [a, 0], [a + len("unbelievably fun"), len(sentence) + 9])
    start, end = positions[0].tolist()
    offsets = batch.offsets[0]
    assert int(offsets[start, 0]) == a  # "un" of "un ##believ ##ably"
    assert int(offsets[end, 1]) == a + len("unbelievably fun")
    assert positions[1].tolist() == [-1, -1]  # past the sentence's end: cut off


def _copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    return target


def test_unsafe_or_wrong_directories_are_refused(qa_dir: Path, tmp_path: Path) -> None:
    assert check_span_model_dir(qa_dir) == "BertForQuestionAnswering"
    pickled = _copy(qa_dir, tmp_path / "pickled")
    (pickled / "pytorch_model.bin").write_bytes(pickle.dumps({"w": [0.0]}))
    with pytest.raises(PickledWeightsError, match="pytorch_model.bin"):
        load_span_system(pickled)
    remote = _copy(qa_dir, tmp_path / "remote")
    config = json.loads((remote / "config.json").read_text())
    (remote / "config.json").write_text(json.dumps({**config, "auto_map": {"x": "y.Z"}}))
    with pytest.raises(RemoteCodeError, match="auto_map"):
        load_span_system(remote)
    code = _copy(qa_dir, tmp_path / "code")
    (code / "modeling.py").write_text("print('hello')\n")
    with pytest.raises(RemoteCodeError):
        check_span_model_dir(code)
    classifier = _copy(qa_dir, tmp_path / "classifier")
    (classifier / "config.json").write_text(
        json.dumps({**config, "architectures": ["BertForSequenceClassification"]})
    )
    with pytest.raises(UnknownArchitectureError, match="extractive QA"):
        check_span_model_dir(classifier)


def test_a_bare_encoder_without_its_qa_head_is_refused(
    builders: ModuleType, tmp_path: Path
) -> None:
    from transformers import BertForQuestionAnswering, BertModel

    config = builders.tiny_bert_config(2)
    BertModel(config, add_pooling_layer=False).save_pretrained(tmp_path)
    builders.tiny_tokenizer().save_pretrained(tmp_path)
    raw = json.loads((tmp_path / "config.json").read_text())
    raw["architectures"] = [BertForQuestionAnswering.__name__]
    (tmp_path / "config.json").write_text(json.dumps(raw))
    with pytest.raises(MissingWeightsError, match="qa_outputs"):
        check_span_model_dir(tmp_path)


@pytest.mark.slow
def test_the_minilm_span_baseline_trains_saves_and_scores(tmp_path: Path) -> None:
    records = read_qa(FIXTURES / "sample.qa").records
    assert len(span_examples(records)) == 6
    report = train_span_system(
        records, records, tmp_path / "minilm-span", max_steps=3, batch_size=4, progress=False
    )
    assert report.steps == 3 and report.train_examples == 6
    assert report.dev_questions == 4
    assert set(report.dev_scores) == {
        "exact",
        "token_f1",
        "overlap_2017",
        "overlap_longer",
        "mean_token_f1",
    }
    assert all(0.0 <= value <= 1.0 for value in report.dev_scores.values())
    assert check_span_model_dir(report.out_dir) == "BertForQuestionAnswering"
    reloaded = load_span_system(report.out_dir, device="cpu")
    first = records[0]
    answer = reloaded.predict([first.question], [first.text])[0]
    assert answer.text == first.text[answer.start : answer.end]
