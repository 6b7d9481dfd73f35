"""Integrated gradients per word, on the same input-embedding path as λmax.

The FIM paper uses integrated gradients (Sundararajan et al., 2017) to pick the words to
perturb. For a text with input embeddings x and a baseline x' (x with the text's own token
embeddings set to zero; special tokens keep theirs), the attribution of coordinate i is

    (x_i − x'_i) · ∫₀¹ ∂F(x' + α(x − x')) / ∂x_i dα,

with F the probability of the target label. The integral uses Gauss–Legendre quadrature with
``steps`` nodes; coordinates are summed per token and tokens per word, so a word's score is
its share of F(x) − F(x') (the ``convergence_delta`` reports how far the sum is from it).

Example:
    >>> result = integrated_gradients(system, ["a gorgeous, witty film"], steps=32)[0]
    >>> result.target, max(result.attributions, key=lambda a: a[1])
    ('positive', ('gorgeous', 0.31))
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from fim_engine.sentence_pairs import TextItem


class TokenBatch(Protocol):
    """What integrated gradients reads of a right-padded batch of B texts, a dataclass whose
    fields are B×… tensors and per-text lists (:class:`fim_engine.System`'s batches are):
    ``editable`` (B×L bool) marks the texts' own tokens, ``word_index`` (B×L) the word of each
    token (-1 for none)."""

    editable: torch.Tensor
    word_index: torch.Tensor
    words: list[list[str]]
    truncated: list[bool]

    def __len__(self) -> int: ...


class EmbeddingClassifier(Protocol):
    """What integrated gradients needs of a system (:class:`fim_engine.System` is one). The
    batches a system yields are what its other methods take."""

    @property
    def labels(self) -> list[str]: ...

    batch_size: int

    def batches(
        self, texts: Sequence[TextItem], *, editable: str | None = None
    ) -> Iterator[tuple[list[int], TokenBatch]]: ...

    def input_embeddings(self, batch: Any) -> torch.Tensor: ...

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: Any) -> torch.Tensor: ...


@dataclass(frozen=True)
class WordAttributions:
    """Integrated-gradients attributions of one text.

    ``attributions`` lists every word of the (possibly truncated) text in order as
    ``(word, score)``; positive scores push towards ``target``. For a sentence pair, the words
    are those of the editable segment(s), premise first (as in :class:`fim_engine.FisherResult`).
    """

    target: str
    attributions: list[tuple[str, float]]
    convergence_delta: float
    truncated: bool


def integrated_gradients(
    system: EmbeddingClassifier,
    texts: Sequence[TextItem],
    *,
    steps: int = 50,
    target: str | None = None,
    internal_batch_size: int | None = None,
    editable: str | None = None,
) -> list[WordAttributions]:
    """Integrated-gradients word attributions for each text.

    Args:
        system: a loaded :class:`fim_engine.System`.
        texts: N strings or sentence pairs; for a pair, only the ``editable`` segment(s)
            (``"premise"``, ``"hypothesis"``, ``"both"``; default the system's) move along the
            path from the baseline, the other stays as it is.
        steps: quadrature nodes along the path from the baseline to the input.
        target: label to attribute; default the label the system predicts for each text.
        internal_batch_size: rows per forward pass (texts × nodes); default 4 × ``system.batch_size``.

    Returns:
        N :class:`WordAttributions`, in input order.

    Example:
        >>> integrated_gradients(system, ["flat and tedious"], steps=16)[0].attributions
        [('flat', -0.12), ('and', 0.01), ('tedious', -0.25)]
    """
    if steps < 1:
        raise ValueError("steps must be positive")
    if target is not None and target not in system.labels:
        raise ValueError(
            f"unknown target label {target!r}; the system's labels are {system.labels}"
        )
    path = _Path(steps, internal_batch_size or 4 * system.batch_size)
    results: list[WordAttributions | None] = [None] * len(texts)
    with torch.inference_mode(False), torch.enable_grad():
        for indices, batch in system.batches(list(texts), editable=editable):
            for i, attributions in zip(
                indices, _batch_attributions(system, batch, path, target), strict=True
            ):
                results[i] = attributions
    return [r for r in results if r is not None]


@dataclass(frozen=True)
class _Path:
    """Gauss–Legendre nodes on [0, 1] with their weights, and rows per forward pass."""

    alphas: np.ndarray
    weights: np.ndarray
    rows_per_pass: int

    def __init__(self, steps: int, rows_per_pass: int) -> None:
        nodes, weights = np.polynomial.legendre.leggauss(steps)
        object.__setattr__(self, "alphas", (nodes + 1.0) / 2.0)
        object.__setattr__(self, "weights", weights / 2.0)
        object.__setattr__(self, "rows_per_pass", rows_per_pass)


def _batch_attributions(
    system: EmbeddingClassifier, batch: TokenBatch, path: _Path, target: str | None
) -> list[WordAttributions]:
    """The attributions of one batch, in batch order."""
    embeds = system.input_embeddings(batch).detach()
    keep = batch.editable.unsqueeze(-1).to(embeds.dtype)
    baseline = embeds * (1 - keep)
    with torch.no_grad():
        probs_input = torch.softmax(system.logits_from_embeddings(embeds, batch).double(), dim=-1)
        probs_baseline = torch.softmax(
            system.logits_from_embeddings(baseline, batch).double(), dim=-1
        )
    if target is None:
        targets = probs_input.argmax(dim=-1)
    else:
        targets = torch.full((len(batch),), system.labels.index(target), device=embeds.device)
    total_grad = _path_gradient(system, batch, baseline, embeds, targets, path)
    token_attr = ((embeds - baseline).double() * total_grad).sum(dim=-1) * batch.editable
    gap = probs_input.gather(1, targets.unsqueeze(1)) - probs_baseline.gather(
        1, targets.unsqueeze(1)
    )
    token_rows = token_attr.cpu().numpy()
    word_rows = batch.word_index.cpu().numpy()
    results = []
    for row, words in enumerate(batch.words):
        per_word = word_scores(token_rows[row], word_rows[row], len(words))
        results.append(
            WordAttributions(
                target=system.labels[int(targets[row])],
                attributions=[(w, float(s)) for w, s in zip(words, per_word, strict=True)],
                convergence_delta=float(token_rows[row].sum() - gap[row, 0]),
                truncated=batch.truncated[row],
            )
        )
    return results


def _path_gradient(
    system: EmbeddingClassifier,
    batch: TokenBatch,
    baseline: torch.Tensor,
    embeds: torch.Tensor,
    targets: torch.Tensor,
    path: _Path,
) -> torch.Tensor:
    """Σ_k w_k ∂F(x' + α_k(x − x'))/∂x over the quadrature nodes (B×L×d float64), several
    nodes of the whole batch per forward pass."""
    total_grad = torch.zeros_like(embeds, dtype=torch.float64)
    per_pass = max(1, path.rows_per_pass // len(batch))
    for start in range(0, len(path.alphas), per_pass):
        chunk = path.alphas[start : start + per_pass]
        chunk_weights = path.weights[start : start + per_pass]
        k = len(chunk)
        scale = torch.tensor(chunk, dtype=embeds.dtype, device=embeds.device).repeat_interleave(
            len(batch)
        )
        points = baseline.repeat(k, 1, 1) + scale.view(-1, 1, 1) * (embeds - baseline).repeat(
            k, 1, 1
        )
        points.requires_grad_(True)
        out = system.logits_from_embeddings(points, _repeat(batch, k))
        chosen = torch.softmax(out, dim=-1).gather(1, targets.repeat(k).unsqueeze(1)).sum()
        (grad,) = torch.autograd.grad(chosen, points)
        grad = grad.double().view(k, len(batch), *embeds.shape[1:])
        step = torch.tensor(chunk_weights, dtype=torch.float64, device=embeds.device)
        total_grad += (step.view(-1, 1, 1, 1) * grad).sum(dim=0)
    return total_grad


def _repeat(batch: Any, k: int) -> Any:
    """``batch`` (a dataclass of B×… tensors and per-text lists) stacked ``k`` times along the
    batch axis, in block order as ``Tensor.repeat``; ``None`` fields stay ``None``."""

    def stacked(name: str, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.repeat(k, *[1] * (value.dim() - 1))
        if isinstance(value, list):
            return value * k
        if value is None:
            return None
        raise TypeError(f"cannot stack the batch field {name!r} of type {type(value).__name__}")

    fields = dataclasses.fields(batch)
    return dataclasses.replace(
        batch, **{f.name: stacked(f.name, getattr(batch, f.name)) for f in fields}
    )


def word_scores(token_scores: np.ndarray, word_index: np.ndarray, num_words: int) -> np.ndarray:
    """Sum per-token scores (L,) into per-word scores (num_words,), as integrated-gradients
    attributions add up; tokens with ``word_index < 0`` are ignored."""
    keep = word_index >= 0
    out = np.zeros(num_words, dtype=np.float64)
    np.add.at(out, word_index[keep], token_scores[keep])
    return out
