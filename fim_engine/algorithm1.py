"""Algorithm 1 of the FIM paper, as written: dense G and a full eigendecomposition.

    p = f(x);  J = ∇ₓ log p  (C × n·d);  G = Σ_y p_y J_yᵀ J_y  (n·d × n·d);  λ, v = eig(G)

This is the slow reference the exact (C−1)×(C−1) method in :mod:`fim_engine.fisher` replaces: it costs
C backward passes plus an O((n·d)³) eigendecomposition per sentence. The benchmark times it;
it also serves as an independent cross-check of λmax and of the top eigenvector.

Example:
    >>> reference = dense_fisher(system, "a gorgeous, witty film")
    >>> reference.lambda_max, reference.token_norms.shape
    (0.0123, torch.Size([5]))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch
from torch.autograd.functional import jacobian

from fim_engine.sentence_pairs import TextItem


class Encoding(Protocol):
    """What :func:`dense_fisher` reads of an encoded batch (B×L tensors): the text's own
    tokens (``editable``) and every real one (``attention_mask``)."""

    editable: torch.Tensor
    attention_mask: torch.Tensor


class DenseModel(Protocol):
    """What Algorithm 1 needs of a classifier (:class:`fim_engine.System` is one). The batch a
    model's ``encode`` returns is what ``logits_from_embeddings`` takes."""

    @property
    def num_labels(self) -> int: ...

    def encode(self, texts: Sequence[TextItem], *, editable: str | None = None) -> Encoding: ...

    def input_embeddings(self, batch: Any) -> torch.Tensor: ...

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: Any) -> torch.Tensor: ...


@dataclass(frozen=True)
class DenseFisher:
    """λmax and the top eigenvector of the dense G of one text.

    ``token_norms`` (n,) are the per-token norms of the unit top eigenvector reshaped n×d, for
    the n positions considered (the editable ones unless ``editable_only=False``).
    """

    lambda_max: float
    token_norms: torch.Tensor
    size: int


def dense_fisher(
    system: DenseModel,
    text: TextItem,
    *,
    editable_only: bool = True,
    dtype: torch.dtype = torch.float64,
    editable: str | None = None,
) -> DenseFisher:
    """Build G for ``text`` from the full Jacobian of log p and eigendecompose it.

    Args:
        system: a loaded :class:`fim_engine.System`, or any :class:`DenseModel`.
        text: one string or sentence pair.
        editable_only: restrict x to the text's own tokens (what :meth:`System.fisher` measures);
            False uses every position, [CLS], [SEP] included, as the paper's algorithm does.
        editable: for a sentence pair, the segment(s) whose tokens count, as for
            :meth:`System.fisher` (with ``editable_only``).
        dtype: dtype of G and of the eigendecomposition.

    Returns:
        :class:`DenseFisher`; ``size`` is n·d, the side of G.
    """
    batch = system.encode([text], editable=editable)
    with torch.inference_mode(False), torch.enable_grad():
        embeds = system.input_embeddings(batch).detach()[0]
        positions = batch.editable[0] if editable_only else batch.attention_mask[0].bool()
        index = positions.nonzero().squeeze(-1)

        def log_probs(x: torch.Tensor) -> torch.Tensor:
            full = embeds.index_put((index,), x)
            return torch.log_softmax(
                system.logits_from_embeddings(full.unsqueeze(0), batch)[0], dim=-1
            )

        x = embeds[index]
        if x.shape[0] == 0:
            return DenseFisher(0.0, torch.zeros(0, dtype=dtype), 0)
        jac = jacobian(log_probs, x).reshape(system.num_labels, -1).to(dtype)  # C × n·d
        with torch.no_grad():
            p = log_probs(x).exp().to(dtype)
    gram = jac.T @ (p.unsqueeze(1) * jac)  # G = Σ_y p_y J_yᵀ J_y
    evals, evecs = torch.linalg.eigh(gram)
    top = evecs[:, -1].reshape(x.shape[0], -1)
    return DenseFisher(float(evals[-1]), top.norm(dim=1), gram.shape[0])
