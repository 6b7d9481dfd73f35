"""λmax and hints equal the dense-G reference for every family, 2 and 3+ classes, in float64."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fim_engine import dense_fisher, fisher_lambda_max

TEXTS = [
    "good",
    "It isn't a bad film at all, but the story was unbelievably dull!",
    "a gorgeous , witty and charming movie",
    "unbelievably flat",
]
CASES = [(family, c) for family in ("bow", "cnn", "bilstm", "bert") for c in (2, 3, 5)]


def relative_error(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-300)


@pytest.mark.parametrize(("family", "num_labels"), CASES)
def test_lambda_max_equals_the_top_eigenvalue_of_dense_g(float64_system, dense, family, num_labels):
    system = float64_system(family, num_labels)
    results = system.fisher(TEXTS)
    for text, result in zip(TEXTS, results, strict=True):
        expected, _ = dense(system, text)
        assert expected > 1e-12, "the tiny model is degenerate; the comparison would prove nothing"
        assert relative_error(result.lambda_max, expected) <= 1e-6


@pytest.mark.parametrize(("family", "num_labels"), CASES)
def test_hints_equal_the_word_norms_of_the_dense_top_eigenvector(
    float64_system, dense, family, num_labels
):
    system = float64_system(family, num_labels)
    for text, result in zip(TEXTS, system.fisher(TEXTS), strict=True):
        _, word_norms = dense(system, text)
        scores = np.array([score for _, score in result.hints])
        np.testing.assert_allclose(scores, word_norms, atol=1e-7)
        assert np.sum(scores**2) == pytest.approx(1.0)


@pytest.mark.parametrize(("family", "num_labels"), CASES)
def test_a_padded_batch_gives_the_same_values_as_each_text_alone(
    float64_system, family, num_labels
):
    system = float64_system(family, num_labels)
    together = system.fisher(TEXTS)
    for text, batched in zip(TEXTS, together, strict=True):
        (alone,) = system.fisher([text])
        assert relative_error(batched.lambda_max, alone.lambda_max) <= 1e-10
        assert [w for w, _ in batched.hints] == [w for w, _ in alone.hints]
        np.testing.assert_allclose(
            [s for _, s in batched.hints], [s for _, s in alone.hints], atol=1e-10
        )
        np.testing.assert_allclose(batched.probabilities, alone.probabilities, atol=1e-12)
    predicted = system.predict(TEXTS).probabilities
    alone_predicted = np.vstack([system.predict([text]).probabilities for text in TEXTS])
    np.testing.assert_allclose(predicted, alone_predicted, atol=1e-12)


@pytest.mark.parametrize("family", ["cnn", "bert"])
def test_algorithm_1_agrees_with_the_reduction(float64_system, dense, family):
    system = float64_system(family, 3)
    text = TEXTS[1]
    reference = dense_fisher(system, text)
    expected, word_norms = dense(system, text)
    assert relative_error(reference.lambda_max, expected) <= 1e-9
    (result,) = system.fisher([text])
    assert relative_error(result.lambda_max, reference.lambda_max) <= 1e-6
    assert (
        reference.size
        == len(reference.token_norms) * system.input_embeddings(system.encode([text])).shape[-1]
    )


def test_special_tokens_do_not_count(float64_system):
    system = float64_system("bert", 2)
    text = TEXTS[2]
    everything = dense_fisher(system, text, editable_only=False)
    editable = dense_fisher(system, text)
    (result,) = system.fisher([text])
    assert everything.lambda_max > editable.lambda_max
    assert relative_error(result.lambda_max, editable.lambda_max) <= 1e-6


def test_word_pieces_are_aggregated_to_words(float64_system):
    system = float64_system("bert", 2)
    (result,) = system.fisher(["Unbelievably witty!"])
    assert [word for word, _ in result.hints] == ["Unbelievably", "witty", "!"]
    tokens = system.encode(["Unbelievably witty!"]).editable.sum().item()
    assert tokens == 5  # un ##believ ##ably witty !


def test_float32_systems_stay_close_to_the_float64_reference(model_dir, dense):
    from fim_engine import load_system

    single = load_system(model_dir("cnn", 3), device="cpu")
    double = load_system(model_dir("cnn", 3), device="cpu", dtype=torch.float64)
    for text, result in zip(TEXTS, single.fisher(TEXTS), strict=True):
        expected, _ = dense(double, text)
        assert relative_error(result.lambda_max, expected) <= 1e-4


@pytest.mark.parametrize("num_labels", [2, 3])
def test_token_scores_equal_the_per_token_norms_of_the_dense_eigenvector(
    float64_system, dense, num_labels
):
    system = float64_system("bert", num_labels)
    text = "It isn't unbelievably dull!"
    batch = system.encode([text])
    embeds = system.input_embeddings(batch).detach().requires_grad_(True)
    _, scores = fisher_lambda_max(
        system.logits_from_embeddings(embeds, batch), embeds, batch.editable
    )
    _, token_norms = dense(system, text, per_token=True)
    editable = batch.editable[0]
    np.testing.assert_allclose(scores[0][editable].numpy(), token_norms, atol=1e-7)
    assert scores[0][~editable].abs().sum().item() == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("num_labels", [3, 5])
def test_multi_class_lambda_max_and_hints_on_minilm_equal_the_dense_reference(
    minilm_head, dense, num_labels
):
    system = minilm_head(num_labels, dtype=torch.float64, max_length=32)
    texts = ["a gorgeous , witty film", "it is n't bad at all"]
    for text, result in zip(texts, system.fisher(texts), strict=True):
        expected, word_norms = dense(system, text)
        assert expected > 1e-12
        assert relative_error(result.lambda_max, expected) <= 1e-6
        np.testing.assert_allclose([s for _, s in result.hints], word_norms, atol=1e-7)
