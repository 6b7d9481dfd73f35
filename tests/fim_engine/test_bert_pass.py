"""The hand-written BERT passes give autograd's gradients and the model's logits, are what λmax
runs on for BERT classifiers, and are refused where they do not cover the model."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from transformers import (
    AutoTokenizer,
    BertConfig,
    BertForQuestionAnswering,
    BertForSequenceClassification,
)

from fim_engine import System, load_system
from fim_engine._transformers_backend import TransformersBackend
from fim_engine.bert_pass import BertPass
from fim_engine.fisher import autograd_vjp, contrasts

TEXTS = [
    "good",
    "It isn't a bad film at all, but the story was unbelievably dull!",
    "a gorgeous , witty and charming movie",
]


def both_gradients(system: System, texts: list[str]) -> tuple[torch.Tensor, ...]:
    """(model logits, pass logits, autograd's contrast gradients, the pass's), editable rows only."""
    exact = system.backend.contrast_pass
    assert exact is not None
    batch = system.encode(texts)
    with torch.enable_grad():
        embeds = system.input_embeddings(batch).detach().requires_grad_(True)
        logits = system.logits_from_embeddings(embeds, batch)
        expected = autograd_vjp(logits, embeds)(contrasts(logits))
    with torch.no_grad():
        got_logits, tape = exact.forward(
            embeds.detach(), batch.attention_mask, batch.token_type_ids
        )
        got = exact.backward(tape, contrasts(got_logits))
    keep = batch.editable[None, :, :, None]
    return logits.detach(), got_logits, expected * keep, got * keep


@pytest.mark.parametrize("num_labels", [2, 3, 5])
@pytest.mark.parametrize("texts", [TEXTS[:1], TEXTS], ids=["one text", "a padded batch"])
def test_the_pass_gives_the_models_logits_and_autograds_gradients(
    float64_system, num_labels, texts
):
    system = float64_system("bert", num_labels)
    logits, got_logits, expected, got = both_gradients(system, texts)
    assert expected.abs().max() > 1e-3, "the tiny model is degenerate; nothing would be compared"
    torch.testing.assert_close(got_logits, logits, rtol=0, atol=1e-12)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-12)


def test_lambda_max_runs_on_the_pass_for_bert_and_on_autograd_for_the_others(float64_system):
    bert = float64_system("bert", 3)
    assert isinstance(bert.backend.contrast_pass, BertPass)
    assert bert.contrast_pass() is bert.backend.contrast_pass
    assert bert.without_contrast_pass().contrast_pass() is None
    cnn = float64_system("cnn", 3)
    assert cnn.backend.contrast_pass is None and cnn.contrast_pass() is None


@pytest.mark.slow
def test_on_minilm_in_float32_the_pass_agrees_with_autograd(minilm_head):
    system = minilm_head(5)
    logits, got_logits, expected, got = both_gradients(system, TEXTS)
    torch.testing.assert_close(got_logits, logits, rtol=0, atol=1e-5)
    scale = expected.abs().max()
    assert (got - expected).abs().max() <= 1e-4 * scale


@pytest.mark.slow
def test_on_minilm_lambda_max_and_hints_equal_autograds(minilm_head):
    system = minilm_head(3)
    fast = system.fisher(TEXTS)
    on_autograd = system.without_contrast_pass()
    assert system.contrast_pass() is not None and on_autograd.contrast_pass() is None
    slow = on_autograd.fisher(TEXTS)
    for a, b in zip(fast, slow, strict=True):
        assert a.lambda_max == pytest.approx(b.lambda_max, rel=1e-4)
        assert [w for w, _ in a.hints] == [w for w, _ in b.hints]
        assert [s for _, s in a.hints] == pytest.approx([s for _, s in b.hints], abs=1e-4)
        assert a.label == b.label


def test_a_pass_that_disagrees_with_the_model_is_refused(float64_system, dense, monkeypatch):
    system = float64_system("bert", 3)
    exact = system.backend.contrast_pass
    assert exact is not None
    forward = exact.forward

    def shifted(*args: object) -> tuple[torch.Tensor, object]:
        logits, tape = forward(*args)  # type: ignore[arg-type]
        return logits + torch.tensor([0.0, 0.01, 0.0], dtype=logits.dtype), tape

    monkeypatch.setattr(exact, "forward", shifted)
    with pytest.warns(RuntimeWarning, match="differs from autograd"):
        (result,) = system.fisher([TEXTS[1]])
    expected, _ = dense(system, TEXTS[1])
    assert result.lambda_max == pytest.approx(expected, rel=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # checked once: no second warning
        system.fisher([TEXTS[0]])


def test_a_pass_that_fails_on_the_device_is_refused(float64_system, dense, monkeypatch):
    system = float64_system("bert", 5)
    exact = system.backend.contrast_pass
    assert exact is not None

    def unsupported(*args: object) -> torch.Tensor:
        raise NotImplementedError("no kernel for this device")

    monkeypatch.setattr(exact, "backward", unsupported)
    with pytest.warns(
        RuntimeWarning, match="fails: NotImplementedError: no kernel for this device"
    ):
        (result,) = system.fisher([TEXTS[1]])
    expected, _ = dense(system, TEXTS[1])
    assert result.lambda_max == pytest.approx(expected, rel=1e-6)


def test_a_pass_with_wrong_gradients_is_refused(float64_system, monkeypatch):
    system = float64_system("bert", 3)
    exact = system.backend.contrast_pass
    assert exact is not None
    backward = exact.backward
    monkeypatch.setattr(exact, "backward", lambda tape, u: backward(tape, u) * 1.001)
    with pytest.warns(RuntimeWarning, match="differs from autograd by 0.001"):
        system.fisher([TEXTS[1]])
    assert system.contrast_pass() is None


class Renamed(torch.nn.Module):
    """A submodule under another attribute path, as a transformers release might rename it:
    the model runs as before, a pass that walks the old path meets an ``AttributeError``."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, *args: object, **kwargs: object) -> object:
        return self.inner(*args, **kwargs)


def test_a_renamed_submodule_falls_back_to_autograd_with_the_reason(
    model_dir, dense, caplog, monkeypatch
):
    system = load_system(model_dir("bert", 3), device="cpu", dtype=torch.float64)
    for layer in system.backend.module.bert.encoder.layer:
        layer.attention = Renamed(layer.attention)
    with pytest.warns(RuntimeWarning, match="fails: AttributeError: .*has no attribute 'self'"):
        results = system.fisher(TEXTS)
    assert system.contrast_pass() is None
    assert any("autograd's passes are used" in r.getMessage() for r in caplog.records)
    for text, result in zip(TEXTS, results, strict=True):
        expected, word_norms = dense(system, text)
        assert result.lambda_max == pytest.approx(expected, rel=1e-6)
        np.testing.assert_allclose([s for _, s in result.hints], word_norms, atol=1e-7)


def test_a_pass_that_cannot_be_set_up_leaves_the_backend_on_autograd(model_dir, dense):
    model = BertForSequenceClassification.from_pretrained(model_dir("bert", 2)).double()
    model.bert.encoder = Renamed(model.bert.encoder)
    tokenizer = AutoTokenizer.from_pretrained(model_dir("bert", 2))
    with pytest.warns(RuntimeWarning, match="cannot be set up: AttributeError"):
        backend = TransformersBackend(model, tokenizer)
    assert backend.contrast_pass is None
    system = System(backend, device=torch.device("cpu"), batch_size=4, max_length=64)
    (result,) = system.fisher([TEXTS[1]])
    assert result.lambda_max == pytest.approx(dense(system, TEXTS[1])[0], rel=1e-6)


def test_the_first_use_check_covers_a_pairs_token_types(float64_system, monkeypatch):
    system = float64_system("bert", 3)
    exact = system.backend.contrast_pass
    assert exact is not None
    forward = exact.forward
    # A pass that reads every token as the first segment: right on texts, wrong on pairs.
    monkeypatch.setattr(exact, "forward", lambda embeds, mask, types: forward(embeds, mask, None))
    fresh = System(system.backend, device=system.device, batch_size=4, max_length=64)
    with pytest.warns(RuntimeWarning, match="differs from autograd"):
        assert fresh.contrast_pass() is None


def tiny_config(**changes: object) -> BertConfig:
    base = dict(
        vocab_size=50,
        hidden_size=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=32,
        num_labels=3,
    )
    return BertConfig(**{**base, **changes})


@pytest.mark.parametrize(
    "model",
    [
        BertForSequenceClassification(tiny_config(hidden_act="relu")),
        BertForSequenceClassification(tiny_config(hidden_act="gelu_new")),
        BertForSequenceClassification(tiny_config(is_decoder=True)),
        BertForQuestionAnswering(tiny_config()),
    ],
    ids=["relu", "tanh GELU", "decoder", "question answering"],
)
def test_models_the_pass_does_not_cover_get_none(model):
    assert BertPass.for_model(model) is None


def test_the_covered_model_gets_a_pass():
    assert isinstance(BertPass.for_model(BertForSequenceClassification(tiny_config())), BertPass)
