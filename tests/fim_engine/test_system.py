"""The System interface: labels, batched predict, truncation reporting, devices."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fim_engine import LabelCountError, PaddingSensitiveModelError, load_system

TEXTS = [
    "a gorgeous film",
    "flat , tedious and awful ; the story is a mess",
    "",
    "fun",
    "not good at all",
]


@pytest.mark.parametrize("family", ["bow", "cnn", "bilstm", "bert"])
def test_predict_returns_probabilities_in_input_order(model_dir, family):
    system = load_system(model_dir(family, 3), batch_size=2, device="cpu")
    batch = system.predict(TEXTS)
    assert batch.probabilities.shape == (len(TEXTS), 3)
    np.testing.assert_allclose(batch.probabilities.sum(axis=1), 1.0)
    assert batch.labels == [system.labels[i] for i in batch.probabilities.argmax(axis=1)]
    for text, row in zip(TEXTS, batch.probabilities, strict=True):
        np.testing.assert_allclose(system.predict([text]).probabilities[0], row, atol=1e-6)
    assert batch.truncated == [False] * len(TEXTS)


def test_labels_come_in_model_label_index_order(model_dir):
    system = load_system(model_dir("bert", 3))
    assert system.labels == ["class_0", "class_1", "class_2"]
    assert system.num_labels == 3
    assert system.format == "transformers"
    assert system.architecture == "BertForSequenceClassification"


def test_predict_is_deterministic(model_dir):
    system = load_system(model_dir("bilstm", 2))
    first = system.predict(TEXTS).probabilities
    second = system.predict(list(reversed(TEXTS))).probabilities[::-1]
    np.testing.assert_array_equal(first, system.predict(TEXTS).probabilities)
    np.testing.assert_allclose(first, second, atol=1e-6)


@pytest.mark.parametrize("family", ["bow", "bert"])
def test_no_texts_give_empty_results(model_dir, family):
    system = load_system(model_dir(family, 2))
    batch = system.predict([])
    assert batch.probabilities.shape == (0, 2)
    assert len(batch) == 0
    assert system.fisher([]) == []
    assert system.attributions([]) == []


@pytest.mark.parametrize("family", ["bilstm", "cnn", "bert"])
def test_a_text_without_words_has_zero_lambda_max_and_no_hints(model_dir, family):
    system = load_system(model_dir(family, 3))
    for result in system.fisher(["", "   "]):
        assert result.lambda_max == 0.0
        assert result.hints == []
        assert result.probabilities.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("family", ["cnn", "bert"])
def test_truncation_is_reported_never_silent(model_dir, family):
    # bert: [CLS] + 3 pieces + [SEP] fit in 5; native: 3 words fit in 3.
    limit = 5 if family == "bert" else 3
    system = load_system(model_dir(family, 2), max_length=limit)
    long_text, short_text = "the film is good and fun", "good fun"
    assert system.predict([long_text, short_text]).truncated == [True, False]
    result, short = system.fisher([long_text, short_text])
    assert result.truncated and not short.truncated
    assert [word for word, _ in result.hints] == ["the", "film", "is"]
    # The truncated text scores like its kept prefix.
    (prefix,) = system.fisher(["the film is"])
    assert result.lambda_max == pytest.approx(prefix.lambda_max, rel=1e-5)


def test_max_length_never_exceeds_the_models_position_table(model_dir):
    system = load_system(model_dir("bert", 2), max_length=10_000)
    assert system.max_length == 64
    assert system.predict([" ".join(["good"] * 200)]).truncated == [True]


def test_expected_label_count_is_enforced(model_dir):
    with pytest.raises(LabelCountError, match="shared task has 3"):
        load_system(model_dir("cnn", 2), expected_num_labels=3)
    assert load_system(model_dir("cnn", 2), expected_num_labels=2).num_labels == 2


def test_the_device_defaults_to_cpu_without_cuda(model_dir):
    system = load_system(model_dir("bow", 2))
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert system.device.type == expected


def test_fisher_works_inside_inference_mode(model_dir):
    system = load_system(model_dir("cnn", 2))
    expected = system.fisher(["a gorgeous film"])[0].lambda_max
    with torch.inference_mode():
        assert system.fisher(["a gorgeous film"])[0].lambda_max == pytest.approx(expected)


def test_fisher_without_hints_leaves_them_empty(model_dir):
    system = load_system(model_dir("bert", 2))
    with_hints, without = (
        system.fisher(["a gorgeous film"]),
        system.fisher(["a gorgeous film"], hints=False),
    )
    assert without[0].hints == []
    assert without[0].lambda_max == pytest.approx(with_hints[0].lambda_max)


def test_a_model_that_reads_the_last_position_is_refused(tmp_path, builders):
    from transformers import GPT2Config, GPT2ForSequenceClassification

    tokenizer = builders.tiny_tokenizer()
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_embd=8,
        n_layer=1,
        n_head=2,
        n_positions=64,
        num_labels=2,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    GPT2ForSequenceClassification(config).save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    with pytest.raises(PaddingSensitiveModelError, match="padded"):
        load_system(tmp_path)
