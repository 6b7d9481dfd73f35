"""The C×C reduction on hand-made models with known answers."""

from __future__ import annotations

import math

import pytest
import torch

from fim_engine import fisher_lambda_max


def linear_logits(weights: torch.Tensor, embeds: torch.Tensor) -> torch.Tensor:
    """Logits of a linear model on the flattened embeddings: weights C×(L·d), embeds B×L×d."""
    return embeds.flatten(1) @ weights.T


def test_two_classes_match_the_closed_form():
    torch.manual_seed(0)
    weights = torch.randn(2, 3 * 4, dtype=torch.float64)
    embeds = torch.randn(1, 3, 4, dtype=torch.float64, requires_grad=True)
    logits = linear_logits(weights, embeds)
    lam, scores = fisher_lambda_max(logits, embeds, torch.ones(1, 3, dtype=torch.bool))
    p = torch.softmax(logits.detach(), dim=-1)[0]
    expected = p[0] * p[1] * (weights[1] - weights[0]).square().sum()
    assert lam.item() == pytest.approx(expected.item(), rel=1e-12)
    direction = (weights[1] - weights[0]).view(3, 4)
    torch.testing.assert_close(scores[0], direction.norm(dim=1) / direction.norm())


def test_a_confident_two_class_prediction_keeps_its_tiny_lambda_max():
    # With a logit gap of 60, p1 rounds to 1 in float32 and p0·(1 − p1) would be 0.
    weights = torch.zeros(2, 2)
    weights[1, 0] = 1.0
    embeds = torch.tensor([[[60.0], [0.0]]], requires_grad=True)
    logits = linear_logits(weights, embeds)
    lam, _ = fisher_lambda_max(
        logits, embeds, torch.ones(1, 2, dtype=torch.bool), token_scores=False
    )
    assert torch.softmax(logits.detach(), dim=-1)[0, 1].item() == 1.0
    expected = math.exp(-60) / (1 + math.exp(-60)) ** 2
    assert lam.item() == pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("num_classes", [3, 4, 7])
def test_many_classes_match_the_dense_metric_of_a_linear_model(num_classes):
    torch.manual_seed(num_classes)
    length, dim = 5, 3
    weights = torch.randn(num_classes, length * dim, dtype=torch.float64)
    embeds = torch.randn(2, length, dim, dtype=torch.float64, requires_grad=True)
    editable = torch.tensor([[False, True, True, True, False], [False, True, True, False, False]])
    logits = linear_logits(weights, embeds)
    lam, scores = fisher_lambda_max(logits, embeds, editable)
    for row in range(2):
        columns = editable[row].repeat_interleave(dim)
        jac = weights[:, columns]  # ∂z/∂x over the editable coordinates
        p = torch.softmax(logits.detach()[row], dim=-1)
        dense = jac.T @ (torch.diag(p) - torch.outer(p, p)) @ jac
        evals, evecs = torch.linalg.eigh(dense)
        assert lam[row].item() == pytest.approx(evals[-1].item(), rel=1e-10)
        kept = editable[row].nonzero().squeeze(-1)
        expected = torch.zeros(length, dtype=torch.float64)
        expected[kept] = evecs[:, -1].view(len(kept), dim).norm(dim=1)
        torch.testing.assert_close(scores[row], expected)


def test_no_editable_position_means_zero():
    embeds = torch.randn(1, 2, 3, requires_grad=True)
    logits = torch.stack([embeds.sum(), -embeds.sum(), embeds[0, 0, 0]]).unsqueeze(0)
    lam, scores = fisher_lambda_max(logits, embeds, torch.zeros(1, 2, dtype=torch.bool))
    assert lam.item() == 0.0
    assert scores is not None and scores.abs().sum().item() == 0.0


def test_rows_of_a_batch_do_not_mix():
    torch.manual_seed(1)
    weights = torch.randn(3, 8, dtype=torch.float64)
    embeds = torch.randn(4, 2, 4, dtype=torch.float64, requires_grad=True)
    editable = torch.ones(4, 2, dtype=torch.bool)
    lam, _ = fisher_lambda_max(linear_logits(weights, embeds), embeds, editable, token_scores=False)
    for row in range(4):
        single = embeds[row : row + 1].detach().clone().requires_grad_(True)
        alone, _ = fisher_lambda_max(
            linear_logits(weights, single), single, editable[:1], token_scores=False
        )
        assert lam[row].item() == pytest.approx(alone.item(), rel=1e-12)


@pytest.mark.parametrize("family", ["bilstm", "bert"])
def test_the_batched_contrast_gradients_equal_one_backward_pass_per_contrast(
    float64_system, family
):
    from fim_engine.fisher import autograd_vjp, contrasts

    system = float64_system(family, 5)
    batch = system.encode(["a gorgeous , witty film", "flat"])
    embeds = system.input_embeddings(batch).detach().requires_grad_(True)
    logits = system.logits_from_embeddings(embeds, batch)
    batched = autograd_vjp(logits, embeds)(contrasts(logits))
    one_by_one = autograd_vjp(logits, embeds, batched=False)(contrasts(logits))
    assert batched.shape == (4, *embeds.shape)
    torch.testing.assert_close(batched, one_by_one, rtol=1e-12, atol=1e-14)
    (first,) = torch.autograd.grad((logits[:, 1] - logits[:, 0]).sum(), embeds)
    torch.testing.assert_close(batched[0], first, rtol=1e-12, atol=1e-14)
