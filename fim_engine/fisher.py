"""Exact λmax of the Fisher information metric w.r.t. input word embeddings, and token hints.

For logits z(x) and p = softmax(z), the Fisher metric of p(y | x) with respect to the input
embeddings x (n·d coordinates) is

    G = Σ_y p_y ∇log p_y ∇log p_yᵀ = Jᵀ S J,   J = ∂z/∂x (C × n·d),   S = diag(p) − p pᵀ.

G has rank ≤ C − 1 (S·1 = 0), which the computation uses: with D the C − 1 contrasts
(z_c − z_0 for c ≥ 1), S = Dᵀ A D for A = S[1:, 1:] = diag(p′) − p′p′ᵀ, p′ = p[1:], so
G = J_Dᵀ A J_D with J_D = D J ((C−1) × n·d). Its nonzero eigenvalues are those of the
(C−1)×(C−1) matrix A^½ J_D J_Dᵀ A^½, so G is never formed: one batched backward pass over the
C − 1 contrasts gives J_D (``is_grads_batched``, a vmap over vector-Jacobian products, or for
BERT classifiers the hand-written pass of :mod:`fim_engine.bert_pass`), and the
small symmetric eigenproblem is solved in float64. With u its top eigenvector, the top
eigenvector of G is v = J_Dᵀ A^½ u / √λmax; reshaped n×d, the norm of each row says how strongly
an edit at that token moves the prediction (the token hint). Two classes need one plain backward
pass: λmax = p₀p₁‖∇(z₁ − z₀)‖², v ∝ ∇(z₁ − z₀). p₀p₁, and A in general, are taken from the
log-softmax (1 − p_c as Σ_{k≠c} p_k) so that they do not round to 0 when the model is confident.

Only editable positions count (the columns of J of the text's own tokens): special tokens and
padding are masked out, which keeps the result exact for the sub-metric of editable positions.

Edit leverage. KL(p(x) ‖ p(x + η)) ≈ ½ ηᵀ G η, and along the top eigenvector this is
½ λmax (v·η)². An edit that replaces the embeddings e_t of a word's tokens t by e′ (the pad
token's embedding for a deletion, zero for bibi-native models) is η with blocks e′ − e_t, so its
first-order KL along v is ½ λmax (Σ_t v_t·(e′ − e_t))². For two classes G = λmax v vᵀ and this is
the whole quadratic form; for more classes it is its component along v.

This module is the algorithm; :meth:`fim_engine.System.fisher` runs it over batches of texts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

# Vector-Jacobian products of the logits with respect to the input embeddings: K cotangents on
# the logits (K×B×C) in, K gradients (K×B×L×d) out. Autograd gives one (:func:`autograd_vjp`);
# a model family may bring a faster exact one (:mod:`fim_engine.bert_pass`).
Vjp = Callable[[torch.Tensor], torch.Tensor]


@dataclass(frozen=True)
class FisherResult:
    """λmax, word hints and word leverage for one text.

    ``hints`` lists every word of the (possibly truncated) text in order as ``(word, score)``;
    scores are the norms of the word's block of the unit top eigenvector of G, so their squares
    sum to 1 (all zero when λmax is 0). ``leverage`` lists the same words in the same order with
    the first-order KL of deleting the word, ½ λmax (Σ_t v_t·(e_pad − e_t))² over its tokens t
    (see the module docstring). ``probabilities`` follow the system's label order. For a
    sentence pair, the words are those of the editable segment(s), premise first, and
    ``word_segments`` names the segment of each (``"premise"`` or ``"hypothesis"``); ``None``
    for a single text.
    """

    lambda_max: float
    hints: list[tuple[str, float]]
    truncated: bool
    label: str
    probabilities: np.ndarray
    leverage: list[tuple[str, float]]
    word_segments: list[str] | None = None


def fisher_lambda_max(
    logits: torch.Tensor,
    embeddings: torch.Tensor,
    editable: torch.Tensor,
    *,
    token_scores: bool = True,
    vjp: Vjp | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """λmax of the Fisher metric per row, and optionally per-token norms of its top eigenvector.

    Args:
        logits: B×C logits computed from ``embeddings``; row b must depend on row b only.
        embeddings: B×L×d input embeddings with ``requires_grad``, part of the graph of ``logits``.
        editable: B×L bool, the positions that count (the text's own tokens).
        token_scores: also return the B×L per-token norms of the unit top eigenvector.
        vjp: the logits' vector-Jacobian products with respect to ``embeddings``; default
            autograd's (then ``embeddings`` must require grad).

    Returns:
        ``(lambda_max, scores)``: float64 tensors of shape (B,) and (B×L) (or ``None``).

    Example:
        >>> embeds = model.embed(ids).detach().requires_grad_(True)
        >>> lam, scores = fisher_lambda_max(model.head(embeds), embeds, ids != pad_id)
    """
    lam, direction = _top_eigen(logits, embeddings, editable, direction=token_scores, vjp=vjp)
    if direction is None:
        return lam, None
    return lam, _unit_row_norms(direction.square().sum(dim=-1))


def fisher_top_eigenvector(
    logits: torch.Tensor,
    embeddings: torch.Tensor,
    editable: torch.Tensor,
    *,
    vjp: Vjp | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """λmax per row and the unit top eigenvector v of G, oriented.

    Args:
        logits, embeddings, editable, vjp: as for :func:`fisher_lambda_max`.

    Returns:
        ``(lambda_max, v)``: float64 tensors of shape (B,) and B×L×d. v is zero outside the
        editable positions and where λmax is 0. Its sign is fixed so that a step along +v lowers
        the log-probability of the predicted (argmax) label to first order: v·η > 0 for an edit
        η means "towards the decision boundary".

    Example:
        >>> lam, v = fisher_top_eigenvector(model.head(embeds), embeds, ids != pad_id)
        >>> ((v * (replacement - embeds)).sum(-1) ** 2 * lam[:, None] / 2)  # KL per token edit
    """
    lam, direction = _top_eigen(
        logits, embeddings, editable, direction=True, oriented=True, vjp=vjp
    )
    assert direction is not None
    norm = direction.flatten(1).norm(dim=-1)
    scale = torch.where(norm > 0, norm, torch.ones_like(norm))
    return lam, direction / scale[:, None, None]


def _top_eigen(
    logits: torch.Tensor,
    embeddings: torch.Tensor,
    editable: torch.Tensor,
    *,
    direction: bool,
    oriented: bool = False,
    vjp: Vjp | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """λmax (B,) and, when asked, an unnormalised top eigenvector of G (B×L×d float64).

    ``oriented`` flips each row's vector so that it lowers the predicted label's log-probability:
    with ∇log p_ŷ = Jᵀ(e_ŷ − p), the sign of (e_ŷ − p)ᵀ J v decides.
    """
    num_classes = logits.shape[-1]
    keep = editable.unsqueeze(-1)
    log_p = torch.log_softmax(logits.detach().double(), dim=-1)
    vjp = vjp if vjp is not None else autograd_vjp(logits, embeddings)
    if num_classes == 1:
        zeros = torch.zeros(logits.shape[0], dtype=torch.float64, device=logits.device)
        shape = (*editable.shape, embeddings.shape[-1])
        return zeros, (
            torch.zeros(shape, dtype=torch.float64, device=logits.device) if direction else None
        )
    if num_classes == 2:
        grad = vjp(contrasts(logits))[0].double().mul_(keep)
        p0p1 = torch.exp(log_p[:, 0] + log_p[:, 1])
        lam = p0p1 * grad.square().sum(dim=(1, 2))
        if not direction:
            return lam, None
        if oriented:
            # v ∝ ∇(z₁ − z₀) raises log p₁ and lowers log p₀.
            sign = torch.where(log_p.argmax(dim=-1) == 1, -1.0, 1.0).to(grad.dtype)
            grad = grad * sign[:, None, None]
        return lam, grad

    # S = Dᵀ A D with D the C−1 contrasts z_c − z_0 (S·1 = 0) and A = S[1:, 1:], so
    # G = J_Dᵀ A J_D with J_D = D J: C − 1 gradients, taken in one batched backward pass.
    # One float64 copy, masked in place, viewed B×(C−1)×(L·d) so that K_D and v are batched
    # matrix products (an einsum over the transposed 4-d tensor copied it twice more).
    grads = vjp(contrasts(logits))  # (C−1)×B×L×d
    jac = grads.double().mul_(keep).transpose(0, 1).flatten(2)
    gram = jac @ jac.transpose(1, 2)  # K_D = J_D J_Dᵀ
    a_half = _sqrt_psd(_contrast_covariance(log_p))
    m = a_half @ gram @ a_half
    m = 0.5 * (m + m.transpose(-1, -2))
    evals, evecs = torch.linalg.eigh(m)
    lam = evals[:, -1].clamp(min=0)
    if not direction:
        return lam, None
    weights = (a_half @ evecs[:, :, -1:]).squeeze(-1)  # A^½ u, B×(C−1)
    if oriented:
        # ∇log p_ŷ = Jᵀ(e_ŷ − p) = J_Dᵀ w with w = (e_ŷ − p)[1:], as (e_ŷ − p) sums to 0.
        p = log_p.exp()
        towards = torch.nn.functional.one_hot(log_p.argmax(dim=-1), num_classes).double() - p
        slope = torch.einsum("bc,bck,bk->b", towards[:, 1:], gram, weights)
        weights = weights * torch.where(slope > 0, -1.0, 1.0).to(weights.dtype)[:, None]
    # J_Dᵀ A^½ u, the unnormalised v, B×L×d
    return lam, (weights.unsqueeze(1) @ jac).view(grads.shape[1:])


def contrasts(logits: torch.Tensor) -> torch.Tensor:
    """The C − 1 cotangents of the contrasts z_c − z_0 (c = 1 .. C−1) on B×C logits:
    (C−1)×B×C, row c − 1 holding −1 at label 0 and +1 at label c."""
    num_classes = logits.shape[-1]
    out = torch.zeros(num_classes - 1, *logits.shape, dtype=logits.dtype, device=logits.device)
    out[:, :, 0] = -1.0
    out[torch.arange(num_classes - 1), :, torch.arange(1, num_classes)] = 1.0
    return out


def autograd_vjp(logits: torch.Tensor, embeddings: torch.Tensor, *, batched: bool = True) -> Vjp:
    """Autograd's vector-Jacobian products of ``logits`` with respect to ``embeddings`` (which
    must be in their graph); row b of ``logits`` must depend on row b only. One cotangent is one
    plain backward pass; K of them are one batched backward pass (a vmap over the products). A
    model with a kernel that has no batching rule (vmap refuses it) gets one backward pass per
    cotangent, as does ``batched=False``."""

    def vjp(cotangents: torch.Tensor) -> torch.Tensor:
        if cotangents.shape[0] == 1:
            (grad,) = torch.autograd.grad(logits, embeddings, cotangents[0], retain_graph=True)
            return grad.unsqueeze(0)
        if batched:
            try:
                (grads,) = torch.autograd.grad(
                    logits, embeddings, cotangents, retain_graph=True, is_grads_batched=True
                )
                return grads
            except torch.OutOfMemoryError:
                raise
            except RuntimeError as error:
                # Once per process and message (warnings' default filter): say which path runs.
                warnings.warn(
                    f"λmax: one backward pass per contrast, vmap refused the batched one: "
                    f"{str(error).splitlines()[0][:200]}",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return torch.stack(
            [torch.autograd.grad(logits, embeddings, c, retain_graph=True)[0] for c in cotangents]
        )

    return vjp


def _contrast_covariance(log_p: torch.Tensor) -> torch.Tensor:
    """A = diag(p') − p'p'ᵀ with p' = p[1:] (B×(C−1)×(C−1) float64), from log-probabilities so
    that p_c(1 − p_c) does not round to 0 for a confident model: 1 − p_c = Σ_{k≠c} p_k."""
    rest = log_p[:, 1:]
    pairs = -torch.exp(rest.unsqueeze(-1) + rest.unsqueeze(-2))
    others = torch.stack(
        [
            torch.logsumexp(torch.cat([log_p[:, :c], log_p[:, c + 1 :]], dim=-1), dim=-1)
            for c in range(1, log_p.shape[-1])
        ],
        dim=-1,
    )
    return (
        pairs
        - torch.diag_embed(pairs.diagonal(dim1=-2, dim2=-1))
        + torch.diag_embed(torch.exp(rest + others))
    )


def _sqrt_psd(matrix: torch.Tensor) -> torch.Tensor:
    """The symmetric square root of a batch of positive semi-definite matrices."""
    evals, evecs = torch.linalg.eigh(matrix)
    return evecs @ torch.diag_embed(evals.clamp(min=0).sqrt()) @ evecs.transpose(-1, -2)


def _unit_row_norms(squared: torch.Tensor) -> torch.Tensor:
    """Per-token norms of a vector given its per-token squared norms (B×L), scaled to unit length."""
    total = squared.sum(dim=-1, keepdim=True)
    scale = torch.where(total > 0, total, torch.ones_like(total))
    return torch.sqrt(squared / scale)


@dataclass(frozen=True)
class WordDirections:
    """The top eigenvector v of one text, per word, for hints and first-order edit effects.

    ``sums[w]`` = Σ_t v_t and ``offsets[w]`` = Σ_t v_t·e_t over the tokens t of word w (W×d and
    W, float64), so replacing every token embedding of word w by e′ moves x along v by
    ``projection(e′)[w]`` = Σ_t v_t·(e′ − e_t) = sums[w]·e′ − offsets[w]. ``norms[w]`` is the
    norm of word w's block of v (its hint).
    """

    lambda_max: float
    sums: np.ndarray
    offsets: np.ndarray
    norms: np.ndarray

    @classmethod
    def from_batch(
        cls,
        lambda_max: torch.Tensor,
        direction: torch.Tensor,
        embeddings: torch.Tensor,
        word_index: torch.Tensor,
        num_words: list[int],
    ) -> list[WordDirections]:
        """One per row of a batch: λmax (B,), the unit top eigenvector and the embeddings
        (B×L×d), the token → word map (B×L, -1 for tokens of no word) and each row's number of
        words. Sums run once for the whole batch; rows only slice the result."""
        batch, _, dim = direction.shape
        width = max(num_words, default=0)
        keep = word_index >= 0
        slot = (torch.arange(batch, device=word_index.device)[:, None] * width + word_index)[keep]
        direction = direction.double()
        size = batch * width
        sums = direction.new_zeros(size, dim).index_add_(0, slot, direction[keep])
        offsets = direction.new_zeros(size).index_add_(
            0, slot, (direction * embeddings.double()).sum(dim=-1)[keep]
        )
        squared = direction.new_zeros(size).index_add_(0, slot, direction.square().sum(-1)[keep])
        sums_rows = sums.view(batch, width, dim).cpu().numpy()
        offset_rows = offsets.view(batch, width).cpu().numpy()
        norm_rows = squared.view(batch, width).sqrt().cpu().numpy()
        lam = lambda_max.cpu().numpy()
        return [
            cls(float(lam[row]), sums_rows[row, :n], offset_rows[row, :n], norm_rows[row, :n])
            for row, n in enumerate(num_words)
        ]

    def projection(self, replacement: np.ndarray, word: int | None = None) -> np.ndarray:
        """v·(e′ − e) of replacing word ``word`` (or every word: shape W) by embedding e′ (d,);
        positive moves towards the decision boundary."""
        if word is None:
            return np.asarray(self.sums @ replacement - self.offsets)
        return np.asarray(self.sums[word] @ replacement - self.offsets[word])

    def kl(self, projection: np.ndarray) -> np.ndarray:
        """½ λmax projection²: the first-order KL divergence of edits with these projections."""
        return np.asarray(0.5 * self.lambda_max * np.square(projection))
