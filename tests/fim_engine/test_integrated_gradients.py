"""Integrated gradients per word, checked against captum and against completeness."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients

from fim_engine import integrated_gradients

TEXTS = ["Unbelievably witty and charming", "a flat , tedious mess", "fun"]


def captum_token_attributions(system, text: str, target: int, steps: int) -> np.ndarray:
    batch = system.encode([text])
    embeds = system.input_embeddings(batch).detach()
    baseline = embeds * (~batch.editable).unsqueeze(-1).to(embeds.dtype)

    def probability(x: torch.Tensor) -> torch.Tensor:
        rows = x.shape[0]
        repeated = type(batch)(
            input_ids=batch.input_ids.expand(rows, -1),
            attention_mask=batch.attention_mask.expand(rows, -1),
            editable=batch.editable.expand(rows, -1),
            word_index=batch.word_index.expand(rows, -1),
            token_type_ids=None
            if batch.token_type_ids is None
            else batch.token_type_ids.expand(rows, -1),
            words=batch.words * rows,
            truncated=batch.truncated * rows,
            spans=batch.spans * rows,
        )
        return torch.softmax(system.logits_from_embeddings(x, repeated), dim=-1)[:, target]

    attributions = IntegratedGradients(probability).attribute(
        embeds, baselines=baseline, n_steps=steps, method="gausslegendre"
    )
    return attributions.sum(dim=-1)[0].detach().numpy(), batch.word_index[0].numpy()


@pytest.mark.parametrize("family", ["bow", "cnn", "bilstm", "bert"])
def test_word_attributions_match_captum(float64_system, family):
    system = float64_system(family, 3)
    results = integrated_gradients(system, TEXTS, steps=24, internal_batch_size=10)
    for text, result in zip(TEXTS, results, strict=True):
        target = system.labels.index(result.target)
        tokens, word_index = captum_token_attributions(system, text, target, steps=24)
        expected = np.bincount(word_index[word_index >= 0], weights=tokens[word_index >= 0])
        np.testing.assert_allclose([score for _, score in result.attributions], expected, atol=1e-9)


def test_attributions_are_complete(float64_system):
    system = float64_system("bert", 2)
    (result,) = integrated_gradients(system, ["Unbelievably witty and charming"], steps=64)
    assert abs(result.convergence_delta) < 1e-4
    assert [word for word, _ in result.attributions] == ["Unbelievably", "witty", "and", "charming"]


def test_the_default_target_is_the_predicted_label(float64_system):
    system = float64_system("cnn", 3)
    predicted = system.predict(TEXTS).labels
    assert [r.target for r in system.attributions(TEXTS, steps=4)] == predicted


def test_an_explicit_target_flips_the_sign_for_two_classes(float64_system):
    system = float64_system("bilstm", 2)
    negative = system.attributions(TEXTS[:1], steps=16, target=system.labels[0])[0]
    positive = system.attributions(TEXTS[:1], steps=16, target=system.labels[1])[0]
    np.testing.assert_allclose(
        [s for _, s in negative.attributions], [-s for _, s in positive.attributions], atol=1e-12
    )


def test_internal_batching_does_not_change_the_result(float64_system):
    system = float64_system("cnn", 2)
    small = integrated_gradients(system, TEXTS, steps=10, internal_batch_size=1)
    large = integrated_gradients(system, TEXTS, steps=10, internal_batch_size=1000)
    for a, b in zip(small, large, strict=True):
        np.testing.assert_allclose(
            [s for _, s in a.attributions], [s for _, s in b.attributions], atol=1e-12
        )


def test_an_unknown_target_is_refused(float64_system):
    with pytest.raises(ValueError, match="unknown target"):
        integrated_gradients(float64_system("bow", 2), TEXTS, target="neutral")
