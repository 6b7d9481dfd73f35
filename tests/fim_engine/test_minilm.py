"""The real MiniLM-L6 checkpoint, offline: fine-tune a few steps, save, reload, predict identically."""

from __future__ import annotations

import numpy as np
import pytest

from fim_engine import check_model_dir, load_system
from fim_engine.datasets import LabelledTexts
from fim_engine.training import minilm_checkpoint, train_system

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


POSITIVE = [
    "a warm , funny film",
    "sharp , moving and tender",
    "a lovely surprise",
    "the cast is clearly having fun",
    "smart , generous and very funny",
    "a tense thriller that earns its ending",
]
NEGATIVE = [
    "two hours of noise",
    "the dialogue is stiff and the pacing is worse",
    "an exhausting mess of a sequel",
    "too long , too loud and too pleased with itself",
    "dull .",
    "i kept checking my watch",
]
TRAIN = LabelledTexts(
    POSITIVE + NEGATIVE,
    ["positive"] * len(POSITIVE) + ["negative"] * len(NEGATIVE),
    ["negative", "positive"],
)
DEV = LabelledTexts(
    [
        "if you 've ever wanted a nap , here it is .",
        "a gem",
        "flat and tedious",
        "it is n't bad at all",
    ],
    ["negative", "positive", "negative", "positive"],
    ["negative", "positive"],
)


def test_the_checkpoint_ships_with_the_package():
    checkpoint = minilm_checkpoint()
    assert (checkpoint / "model.safetensors").is_file()
    assert (checkpoint / "tokenizer.json").is_file()


def test_fine_tuned_minilm_saves_reloads_and_predicts_identically(tmp_path):
    train, dev = TRAIN, DEV
    out = tmp_path / "minilm"
    report = train_system(
        "minilm", train, dev, out, max_steps=3, batch_size=4, max_length=64, progress=False
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


@pytest.fixture(scope="module")
def minilm():
    import torch

    from fim_engine import System
    from fim_engine._transformers_backend import TransformersBackend
    from fim_engine.training import minilm_classifier

    torch.manual_seed(0)
    model, tokenizer = minilm_classifier(["negative", "positive"])
    return System(TransformersBackend(model, tokenizer), device="cpu", batch_size=16, max_length=64)


def test_minilm_neighbours_are_whole_words_of_its_vocabulary(minilm):
    from fim_engine import embedding_neighbours

    found = embedding_neighbours(minilm, "terrible", k=5)
    assert len(found) == 5
    tokenizer = minilm.backend.tokenizer
    for replacement in found:
        assert replacement.word.isalpha() and replacement.word != "terrible"
        assert len(tokenizer(replacement.word, add_special_tokens=False)["input_ids"]) == 1
    # "unwatchable" is several word pieces: no neighbours.
    assert len(tokenizer("unwatchable", add_special_tokens=False)["input_ids"]) > 1
    assert embedding_neighbours(minilm, "unwatchable") == []


def test_minilm_suggestions_report_what_a_forward_pass_gives(minilm):
    from fim_engine import suggest

    # One clause without negation: where an antonym is allowed (edits.fluency).
    text = "the acting is weak"
    report = suggest(text, {"minilm": minilm}, top_k=3)
    assert report.lambda_max > 0 and report.suggestions
    assert {s.source for s in report.suggestions} >= {"antonym", "neighbour"}
    for suggestion in report.suggestions:
        alone = minilm.predict([suggestion.text])
        outcome = suggestion.outcomes["minilm"]
        assert outcome.label == alone.labels[0]
        np.testing.assert_allclose(
            list(outcome.probabilities.values()), alone.probabilities[0], atol=1e-6
        )
