"""Exact λmax of the Fisher information metric w.r.t. input word embeddings, and token hints.

For logits z(x) and p = softmax(z), the Fisher metric of p(y | x) with respect to the input
embeddings x (n·d coordinates) is

    G = Σ_y p_y ∇log p_y ∇log p_yᵀ = Jᵀ S J,   J = ∂z/∂x (C × n·d),   S = diag(p) − p pᵀ.

G has rank ≤ C − 1 and its nonzero eigenvalues are those of the C×C matrix S^½ J Jᵀ S^½, so G
is never formed: C backward passes give J (one for two classes), K = J Jᵀ is C×C, and the small
symmetric eigenproblem is solved in float64. With u its top eigenvector, the top eigenvector of
G is v = Jᵀ S^½ u / √λmax; reshaped n×d, the norm of each row says how strongly an edit at that
token moves the prediction (the token hint). Two classes need one backward pass:
λmax = p₀p₁‖∇(z₁ − z₀)‖², v ∝ ∇(z₁ − z₀), with p₀p₁ = exp(log p₀ + log p₁) so it does not
round to 0 when the model is confident.

Only editable positions count (the columns of J of the text's own tokens): special tokens and
padding are masked out, which keeps the result exact for the sub-metric of editable positions.

This module is the algorithm; :meth:`fim_engine.System.fisher` runs it over batches of texts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch


@dataclass(frozen=True)
class FisherResult:
    """λmax and token hints for one text.

    ``hints`` lists every word of the (possibly truncated) text in order as ``(word, score)``;
    scores are the norms of the word's block of the unit top eigenvector of G, so their squares
    sum to 1 (all zero when λmax is 0). ``probabilities`` follow the system's label order.
    """

    lambda_max: float
    hints: list[tuple[str, float]]
    truncated: bool
    label: str
    probabilities: np.ndarray


def fisher_lambda_max(
    logits: torch.Tensor,
    embeddings: torch.Tensor,
    editable: torch.Tensor,
    *,
    token_scores: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """λmax of the Fisher metric per row, and optionally per-token norms of its top eigenvector.

    Args:
        logits: B×C logits computed from ``embeddings``; row b must depend on row b only.
        embeddings: B×L×d input embeddings with ``requires_grad``, part of the graph of ``logits``.
        editable: B×L bool, the positions that count (the text's own tokens).
        token_scores: also return the B×L per-token norms of the unit top eigenvector.

    Returns:
        ``(lambda_max, scores)``: float64 tensors of shape (B,) and (B×L) (or ``None``).

    Example:
        >>> embeds = model.embed(ids).detach().requires_grad_(True)
        >>> lam, scores = fisher_lambda_max(model.head(embeds), embeds, ids != pad_id)
    """
    num_classes = logits.shape[-1]
    keep = editable.unsqueeze(-1).to(embeddings.dtype)
    log_p = torch.log_softmax(logits.detach().double(), dim=-1)
    if num_classes == 1:
        zeros = torch.zeros(logits.shape[0], dtype=torch.float64, device=logits.device)
        return zeros, (
            torch.zeros(editable.shape, dtype=torch.float64, device=logits.device)
            if token_scores
            else None
        )
    if num_classes == 2:
        (grad,) = torch.autograd.grad((logits[:, 1] - logits[:, 0]).sum(), embeddings)
        grad = (grad * keep).double()
        p0p1 = torch.exp(log_p[:, 0] + log_p[:, 1])
        squared = grad.square().sum(dim=-1)
        lam = p0p1 * squared.sum(dim=-1)
        if not token_scores:
            return lam, None
        return lam, _unit_row_norms(squared)

    grads = []
    for c in range(num_classes):
        (grad,) = torch.autograd.grad(
            logits[:, c].sum(), embeddings, retain_graph=c < num_classes - 1
        )
        grads.append((grad * keep).double())
    jac = torch.stack(grads, dim=1)  # B×C×L×d
    gram = torch.einsum("bcld,bkld->bck", jac, jac)  # K = J Jᵀ, B×C×C
    p = log_p.exp()
    s = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
    s_evals, s_evecs = torch.linalg.eigh(s)
    s_half = s_evecs @ torch.diag_embed(s_evals.clamp(min=0).sqrt()) @ s_evecs.transpose(-1, -2)
    m = s_half @ gram @ s_half
    m = 0.5 * (m + m.transpose(-1, -2))
    evals, evecs = torch.linalg.eigh(m)
    lam = evals[:, -1].clamp(min=0)
    if not token_scores:
        return lam, None
    weights = (s_half @ evecs[:, :, -1:]).squeeze(-1)  # S^½ u, B×C
    direction = torch.einsum("bc,bcld->bld", weights, jac)  # Jᵀ S^½ u, unnormalised v
    return lam, _unit_row_norms(direction.square().sum(dim=-1))


def _unit_row_norms(squared: torch.Tensor) -> torch.Tensor:
    """Per-token norms of a vector given its per-token squared norms (B×L), scaled to unit length."""
    total = squared.sum(dim=-1, keepdim=True)
    scale = torch.where(total > 0, total, torch.ones_like(total))
    return torch.sqrt(squared / scale)
