"""The real MiniLM-L6 checkpoint, offline: fine-tune a few steps, save, reload, predict identically."""

from __future__ import annotations

import numpy as np
import pytest

from fim_engine import check_model_dir, load_system
from fim_engine.datasets import LabelledTexts, read_labelled
from fim_engine.training import minilm_checkpoint, train_system

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def subset(data: LabelledTexts, n: int) -> LabelledTexts:
    return LabelledTexts(data.texts[:n], data.labels[:n], data.label_names)


def test_the_checkpoint_ships_with_the_package():
    checkpoint = minilm_checkpoint()
    assert (checkpoint / "model.safetensors").is_file()
    assert (checkpoint / "tokenizer.json").is_file()


def test_fine_tuned_minilm_saves_reloads_and_predicts_identically(tmp_path, sst2_dev):
    train = subset(read_labelled(sst2_dev.with_name("stsa.binary.train")), 48)
    dev = subset(read_labelled(sst2_dev), 24)
    out = tmp_path / "minilm"
    report = train_system(
        "minilm", train, dev, out, max_steps=3, batch_size=16, max_length=64, progress=False
    )

    assert report.steps == 3
    assert check_model_dir(out).architecture == "BertForSequenceClassification"
    assert sorted(p.suffix for p in out.iterdir()) == [".json", ".json", ".json", ".safetensors"]
    system = load_system(out, max_length=64, expected_num_labels=2)
    assert system.labels == ["negative", "positive"]
    np.testing.assert_allclose(
        system.predict(dev.texts).probabilities, report.dev_probabilities, atol=1e-6
    )
    assert 0.0 <= report.dev_accuracy <= 1.0

    results = system.fisher(dev.texts[:4])
    for text, result in zip(dev.texts[:4], results, strict=True):
        assert np.isfinite(result.lambda_max) and result.lambda_max > 0
        # Words are the tokenizer's words ("'ve" is two), each made of one or more pieces.
        assert "".join(word for word, _ in result.hints) == "".join(text.split())
        assert sum(score**2 for _, score in result.hints) == pytest.approx(1.0)
