"""λmax of the Fisher metric of an extractive QA model, matrix-free (Lanczos).

The model. An extractive QA model gives start logits a and end logits b over the L positions
of its input; the answer's start and end are read from p = softmax(a) and q = softmax(b) over
the *candidate* positions (the sentence's own tokens: the answer is a span of the sentence;
the question, special tokens and padding get probability 0). We treat start and end as
independent, p(s, e | x) = p_s q_e, so the Fisher metric with respect to the input embeddings x
is the sum of the two softmax metrics:

    G = J_aᵀ (diag p − p pᵀ) J_a + J_bᵀ (diag q − q qᵀ) J_b = Jᵀ S J,

with J = [J_a; J_b] (2L × n·d) and S = diag(S_p, S_q). Each softmax metric has rank ≤ n − 1 on
n candidates, so G has rank ≤ 2(n − 1): too many classes for one backward pass per class. Its
nonzero eigenvalues are those of the 2L × 2L matrix M = S^½ J Jᵀ S^½, and M w costs one
vector-Jacobian product (Jᵀ S^½ w) and one Jacobian-vector product (J y). We run Lanczos with
full reorthogonalisation on M, batched over texts (G is block-diagonal across a batch), until
the top Ritz pair's residual is below ``tol`` relative to it; the top eigenvector of G is then
v = Jᵀ S^½ u / √λmax.

As for labels (:mod:`fim_engine.fisher`), x is restricted to the editable positions, the
sentence's own tokens: the question is never edited, and special tokens and padding are not
text. The Jacobian-vector product is the derivative of a vector-Jacobian product (double
backward), so the model must be twice differentiable: transformers models are loaded with the
eager attention implementation, whose backward pass is differentiable. :func:`span_fisher` takes
what it needs of a system as a Protocol (:class:`SpanModel`); this module never imports the
loaders (:class:`fim_engine.SpanSystem` calls it).

Example:
    >>> embeds = model.get_input_embeddings()(ids).detach().requires_grad_(True)
    >>> out = model(inputs_embeds=embeds, attention_mask=mask)
    >>> lam, v, steps = span_lambda_max(out.start_logits, out.end_logits, embeds,
    ...                                 editable=context, candidates=context)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from fim_engine.fisher import WordDirections

# Residual of the top Ritz pair relative to λmax. λmax's error is quadratic in it (far below
# 1e-6 here) and the eigenvector's linear, so hints and leverage agree with the dense
# eigenvector to about 1e-6 / (relative gap); pass a smaller tol for exactness checks.
DEFAULT_TOL = 1e-6

# Probability of each of the start and end softmaxes that :func:`span_lambda_max_by_mass` may
# leave out. Measured against the tight Lanczos value (``bench-span``, README): see there.
DEFAULT_MASS_TOL = 1e-4
# Memory the mass path may hold its Jacobian rows in before :func:`span_fisher` uses Lanczos.
MASS_MAX_BYTES = 1 << 30
# Jacobian rows past which :func:`span_fisher` uses Lanczos instead. On CPU a row of the
# batched vector-Jacobian product measured about 2.7 forward passes and a Lanczos step about
# 2.4 (README, bench-span), and Lanczos takes 9-17 steps: the rows win only when fewer.
MASS_MAX_ROWS = 8


def span_lambda_max(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    embeddings: torch.Tensor,
    *,
    editable: torch.Tensor,
    candidates: torch.Tensor,
    tol: float = DEFAULT_TOL,
    max_steps: int | None = None,
    seed: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """λmax of G per text and the unit top eigenvector of G.

    Args:
        start_logits, end_logits: B×L, computed from ``embeddings``; row b depends on row b only.
        embeddings: B×L×d with ``requires_grad``, in the graph of the logits.
        editable: B×L bool, the positions x is restricted to.
        candidates: B×L bool, the positions the answer may start or end at (at least one per row).
        tol: stop when every row's top Ritz residual is at most ``tol`` × its Ritz value.
        max_steps: Lanczos steps at most (default: 2L, where Lanczos is exact).
        seed: of the starting vectors.

    Returns:
        ``(lambda_max, v, steps)``: float64 (B,), float64 B×L×d (zero outside ``editable``, a
        zero row where λmax is 0), and the number of Lanczos steps taken.
    """
    s_half = _s_half(start_logits, end_logits, candidates)  # B×2L×2L
    apply_j, apply_jt = _jacobian_products(start_logits, end_logits, embeddings, editable)

    def apply_m(w: torch.Tensor) -> torch.Tensor:
        half = torch.einsum("bij,bj->bi", s_half, w)
        back = apply_jt(half)
        return torch.einsum("bij,bj->bi", s_half, apply_j(back))

    batch, width = start_logits.shape
    generator = torch.Generator().manual_seed(seed)
    start = torch.randn(batch, 2 * width, generator=generator, dtype=torch.float64)
    start = start.to(s_half.device) * torch.cat([candidates, candidates], dim=1)
    lam, u, steps = lanczos_top(apply_m, start, tol=tol, max_steps=max_steps or 2 * width)
    direction = apply_jt(torch.einsum("bij,bj->bi", s_half, u))
    root = lam.clamp(min=0).sqrt()
    scale = torch.where(root > 0, root, torch.ones_like(root))
    v = torch.where(root[:, None, None] > 0, direction / scale[:, None, None], 0.0)
    return lam.clamp(min=0), v, steps


def span_lambda_max_by_mass(
    start_logits: torch.Tensor,
    end_logits: torch.Tensor,
    embeddings: torch.Tensor,
    *,
    editable: torch.Tensor,
    candidates: torch.Tensor,
    mass_tol: float = DEFAULT_MASS_TOL,
    rows_per_pass: int = 16,
    max_bytes: int | None = None,
    max_rows: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int] | None:
    """λmax of G per text from the rows of J at the positions that carry the probability mass.

    Each softmax metric is a covariance, G_p = Σ_i p_i (g_i − ḡ)(g_i − ḡ)ᵀ with g_i = ∇a_i and
    ḡ = Σ_i p_i g_i = Jᵀp. Keeping the most probable positions of p (and of q) until what is
    left weighs at most ``mass_tol`` drops only PSD terms, so the kept sum L ⪯ G and λmax(L) is
    a lower bound of λmax(G); with ``mass_tol=0`` every candidate is kept and L = G. The
    nonzero eigenvalues of L are those of the Gram matrix of its k vectors √p_i (g_i − ḡ),
    which needs the k rows g_i and the two means, all from one batched vector-Jacobian
    product, and a k×k eigenproblem: no Lanczos and no Jacobian-vector product.

    Args:
        start_logits, end_logits, embeddings, editable, candidates: as :func:`span_lambda_max`.
        mass_tol: probability of each softmax that may be left out, per text.
        rows_per_pass: Jacobian rows per batched backward pass (bounds memory).
        max_bytes: give up (return None) when the kept rows would take more memory than this
            (they are all held at once, in float64, for their Gram matrix).
        max_rows: give up (return None) when more Jacobian rows than this are needed.

    Returns:
        ``(lambda_max, v, dropped, rows)``: λmax (B,) and the unit top eigenvector of L
        (B×L×d), both float64 as in :func:`span_lambda_max`; ``dropped`` (B,) the larger of the
        two left-out masses of each text; ``rows`` the number of Jacobian rows computed per text.
        None when the rows would not fit in ``max_bytes``.
    """
    directions, weights, dropped = _mass_rows(start_logits, end_logits, candidates, mass_tol)
    k = (len(directions) - 2) // 2
    too_big = max_bytes is not None and len(directions) * embeddings.numel() * 8 > max_bytes
    if too_big or (max_rows is not None and len(directions) > max_rows):
        return None
    logits = torch.cat([start_logits, end_logits], dim=1)
    keep_x = editable.unsqueeze(-1).to(embeddings.dtype)
    grads = []
    for first in range(0, len(directions), rows_per_pass):
        part = directions[first : first + rows_per_pass].to(logits.dtype)
        grads.append(_batched_vjp(logits, embeddings, part) * keep_x)
    g = torch.cat(grads).double().flatten(2).transpose(0, 1)  # B×(2k+2)×(L·d)
    means = g[:, 2 * k :]  # Jᵀp, Jᵀq
    centred = torch.cat(
        [g[:, :k] - means[:, :1], g[:, k : 2 * k] - means[:, 1:]], dim=1
    ) * weights.sqrt().unsqueeze(-1)
    evals, evecs = torch.linalg.eigh(centred @ centred.mT)
    lam = evals[:, -1].clamp(min=0)
    root = lam.sqrt()
    scale = torch.where(root > 0, root, torch.ones_like(root))
    v = torch.einsum("bk,bkn->bn", evecs[:, :, -1], centred) / scale[:, None]
    v = torch.where(root[:, None] > 0, v, 0.0).reshape(embeddings.shape)
    return lam, v, dropped, len(directions)


def _mass_rows(
    start: torch.Tensor, end: torch.Tensor, candidates: torch.Tensor, mass_tol: float
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The output directions whose Jacobian rows :func:`span_lambda_max_by_mass` needs
    ((2k + 2)×B×2L: k one-hot rows per softmax, zero past a text's own kept count, then p and q),
    the probability of each kept row (B×2k), and each text's larger left-out mass (B,)."""
    batch, width = start.shape
    probs, order, keeps = [], [], []
    for logits in (start, end):
        masked = logits.detach().double().masked_fill(~candidates, float("-inf"))
        p = torch.nan_to_num(torch.softmax(masked, dim=-1), nan=0.0)
        sorted_p, index = p.sort(dim=-1, descending=True)
        # Keep position j of a sorted row while the mass before it leaves more than mass_tol.
        before = sorted_p.cumsum(-1) - sorted_p
        probs.append(p)
        order.append((sorted_p, index))
        keeps.append(((1.0 - before > mass_tol) | (mass_tol <= 0)) & (sorted_p > 0))
    k = max(1, max(int(keep.sum(-1).max()) for keep in keeps))
    directions = start.new_zeros(2 * k + 2, batch, 2 * width, dtype=torch.float64)
    weights = start.new_zeros(batch, 2 * k, dtype=torch.float64)
    rows = torch.arange(batch, device=start.device)
    for side, ((sorted_p, index), keep, p) in enumerate(zip(order, keeps, probs, strict=True)):
        offset = side * width
        for j in range(k):
            kept = keep[:, j]
            directions[side * k + j, rows, offset + index[:, j]] = kept.double()
            weights[:, side * k + j] = torch.where(kept, sorted_p[:, j], 0.0)
        directions[2 * k + side, :, offset : offset + width] = p
    dropped = torch.stack(
        [(sorted_p * ~keep).sum(-1) for (sorted_p, _), keep in zip(order, keeps, strict=True)]
    ).amax(0)
    return directions, weights, dropped


def _batched_vjp(
    logits: torch.Tensor, embeddings: torch.Tensor, rows: torch.Tensor
) -> torch.Tensor:
    """``Jᵀ w`` for each w of ``rows`` (R×B×2L) → R×B×L×d, in one batched backward pass when
    vmap can batch the model's backward, one pass per row otherwise."""
    try:
        (grad,) = torch.autograd.grad(
            logits, embeddings, rows, retain_graph=True, is_grads_batched=True
        )
        return grad
    except RuntimeError:
        return torch.stack(
            [torch.autograd.grad(logits, embeddings, w, retain_graph=True)[0] for w in rows]
        )


def _s_half(start: torch.Tensor, end: torch.Tensor, candidates: torch.Tensor) -> torch.Tensor:
    """S^½ for S = diag(S_p, S_q), S_p = diag p − p pᵀ over the candidates (B×2L×2L, float64)."""
    blocks = []
    for logits in (start, end):
        masked = logits.detach().double().masked_fill(~candidates, float("-inf"))
        # A row without candidates (an empty sentence) has no distribution: all zeros.
        p = torch.nan_to_num(torch.softmax(masked, dim=-1), nan=0.0)
        s = torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
        evals, evecs = torch.linalg.eigh(s)
        blocks.append(evecs @ torch.diag_embed(evals.clamp(min=0).sqrt()) @ evecs.mT)
    batch, width = start.shape
    out = start.new_zeros(batch, 2 * width, 2 * width, dtype=torch.float64)
    out[:, :width, :width] = blocks[0]
    out[:, width:, width:] = blocks[1]
    return out


def _jacobian_products(
    start: torch.Tensor, end: torch.Tensor, embeddings: torch.Tensor, editable: torch.Tensor
) -> tuple[Callable[[torch.Tensor], torch.Tensor], Callable[[torch.Tensor], torch.Tensor]]:
    """``J y`` (B×L×d → B×2L) and ``Jᵀ w`` (B×2L → B×L×d), both float64, for the logits
    restricted to the editable columns of x."""
    logits = torch.cat([start, end], dim=1)
    keep = editable.unsqueeze(-1).to(embeddings.dtype)
    # Jᵀ w is linear in w; differentiating it w.r.t. w at any point gives J (double backward).
    probe = torch.zeros_like(logits, requires_grad=True)
    (linear,) = torch.autograd.grad(logits, embeddings, probe, create_graph=True)

    def apply_jt(w: torch.Tensor) -> torch.Tensor:
        (grad,) = torch.autograd.grad(logits, embeddings, w.to(logits.dtype), retain_graph=True)
        return (grad * keep).double()

    def apply_j(y: torch.Tensor) -> torch.Tensor:
        tangent = (y.to(embeddings.dtype) * keep).detach()
        (jv,) = torch.autograd.grad(linear, probe, tangent, retain_graph=True)
        return jv.double()

    return apply_j, apply_jt


def lanczos_top(
    apply: Callable[[torch.Tensor], torch.Tensor],
    start: torch.Tensor,
    *,
    tol: float = DEFAULT_TOL,
    max_steps: int,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Top eigenpair of a batch of symmetric positive semi-definite operators.

    ``apply`` maps B×D to B×D, row by row; ``start`` (B×D, float64) are the starting vectors
    (a zero row gives λ = 0). Full reorthogonalisation keeps the basis orthonormal, so after
    ``rank`` steps the answer is exact. Returns ``(λ (B,), u (B×D) unit, steps)``.

    >>> a = torch.diag(torch.tensor([3.0, 1.0, 0.5], dtype=torch.float64))[None]
    >>> lam, u, _ = lanczos_top(lambda w: (a @ w[..., None])[..., 0],
    ...                         torch.ones(1, 3, dtype=torch.float64), max_steps=3)
    >>> round(float(lam[0]), 9), round(abs(float(u[0, 0])), 9)
    (3.0, 1.0)
    """
    norm = start.norm(dim=-1, keepdim=True)
    basis = [torch.where(norm > 0, start / norm.clamp(min=1e-300), 0.0)]
    alphas: list[torch.Tensor] = []
    betas: list[torch.Tensor] = []
    for step in range(1, max_steps + 1):
        w = apply(basis[-1])
        alphas.append((w * basis[-1]).sum(-1))
        stacked = torch.stack(basis, dim=1)  # B×k×D
        # Twice is enough to keep the basis orthogonal in floating point.
        for _ in range(2):
            w = w - torch.einsum("bkd,bk->bd", stacked, torch.einsum("bkd,bd->bk", stacked, w))
        beta = w.norm(dim=-1)
        theta, vectors = _tridiagonal_eigen(alphas, betas)
        top = theta[:, -1]
        residual = beta * vectors[:, -1, -1].abs()
        scale = torch.stack(alphas, dim=1).abs().max(dim=1).values
        exhausted = beta <= 1e-12 * scale.clamp(min=1e-300)
        if bool(((residual <= tol * top.abs()) | exhausted).all()) or step == max_steps:
            u = torch.einsum("bkd,bk->bd", stacked, vectors[:, :, -1])
            return top, u, step
        betas.append(beta)
        basis.append(torch.where(exhausted[:, None], 0.0, w / beta.clamp(min=1e-300)[:, None]))
    raise AssertionError("unreachable: the loop returns on its last step")


def _tridiagonal_eigen(
    alphas: list[torch.Tensor], betas: list[torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    t = torch.diag_embed(torch.stack(alphas, dim=1))
    if betas:
        off = torch.diag_embed(torch.stack(betas, dim=1), offset=1)
        t = t + off + off.mT
    return torch.linalg.eigh(t)


@dataclass(frozen=True)
class SpanFisherResult:
    """Span λmax of one (question, sentence) pair, with per-word hints and leverage.

    ``hints`` lists the sentence's words with the norm of their block of the unit top
    eigenvector of G (squares sum to 1 unless the sentence was cut); ``leverage`` the same
    words with the first-order KL of deleting the word along that eigenvector,
    ½ λmax (Σ_t v_t·(e_pad − e_t))², as :class:`fim_engine.FisherResult` defines it for labels
    (here a lower bound of the whole KL, as for more than two classes).
    """

    lambda_max: float
    hints: list[tuple[str, float]]
    leverage: list[tuple[str, float]]
    truncated: bool
    steps: int  # Lanczos steps, or Jacobian rows on the mass path


class SpanEncoding(Protocol):
    """What :func:`span_fisher` reads of an encoded batch of B (question, sentence) pairs
    (:class:`fim_engine.span_model.SpanBatch` is one): ``context`` (B×L bool) marks the
    sentence's own tokens, ``word_index`` (B×L) numbers its words (-1 elsewhere)."""

    context: torch.Tensor
    word_index: torch.Tensor
    words: list[list[str]]
    truncated: list[bool]


class SpanModel(Protocol):
    """What span λmax needs of an extractive QA system (:class:`fim_engine.SpanSystem` is one):
    batches of pairs, their input embeddings, the start and end logits from embeddings, and the
    pad token's embedding (d,) that a deleted word is replaced by in leverage. The batch a
    model's ``encode`` returns is what its other methods take."""

    batch_size: int

    def encode(self, questions: Sequence[str], sentences: Sequence[str]) -> SpanEncoding: ...

    def input_embeddings(self, batch: Any) -> torch.Tensor: ...

    def logits_from_embeddings(
        self, embeds: torch.Tensor, batch: Any
    ) -> tuple[torch.Tensor, torch.Tensor]: ...

    def pad_embedding(self) -> torch.Tensor: ...


def span_fisher(
    system: SpanModel,
    questions: Sequence[str],
    sentences: Sequence[str],
    *,
    tol: float | None = None,
    mass_tol: float = DEFAULT_MASS_TOL,
    max_rows: int | None = MASS_MAX_ROWS,
) -> list[SpanFisherResult]:
    """λmax, hints and leverage for each (question, sentence) pair, in input order.

    By default from the rows of J at the positions carrying all but ``mass_tol`` of each
    softmax (:func:`span_lambda_max_by_mass`; ``steps`` is then the number of Jacobian rows);
    by Lanczos to the residual ``tol`` when ``tol`` is given, or when those rows would take
    more than :data:`MASS_MAX_BYTES` or number more than ``max_rows``."""
    results: list[SpanFisherResult] = []
    pad = system.pad_embedding().double().cpu().numpy()
    for first in range(0, len(questions), system.batch_size):
        rows = slice(first, first + system.batch_size)
        batch = system.encode(questions[rows], sentences[rows])
        with torch.inference_mode(False), torch.enable_grad():
            embeds = system.input_embeddings(batch).detach().requires_grad_(True)
            start, end = system.logits_from_embeddings(embeds, batch)
            fast = None
            if tol is None:
                fast = span_lambda_max_by_mass(
                    start, end, embeds, editable=batch.context, candidates=batch.context,
                    mass_tol=mass_tol, max_bytes=MASS_MAX_BYTES, max_rows=max_rows,
                )  # fmt: skip
            if fast is not None:
                lam, v, _, steps = fast
            else:
                lam, v, steps = span_lambda_max(
                    start,
                    end,
                    embeds,
                    editable=batch.context,
                    candidates=batch.context,
                    tol=DEFAULT_TOL if tol is None else tol,
                )
        num_words = [len(words) for words in batch.words]
        directions = WordDirections.from_batch(lam, v, embeds.detach(), batch.word_index, num_words)
        for row, words in enumerate(batch.words):
            direction = directions[row]
            kl = direction.kl(direction.projection(pad))
            results.append(
                SpanFisherResult(
                    lambda_max=direction.lambda_max,
                    hints=[(w, float(x)) for w, x in zip(words, direction.norms, strict=True)],
                    leverage=[(w, float(x)) for w, x in zip(words, kl, strict=True)],
                    truncated=batch.truncated[row],
                    steps=steps,
                )
            )
    return results
