"""What span λmax costs next to a forward pass of the same batches, and how far the fast
path (:func:`fim_engine.spans.span_lambda_max_by_mass`) lies from the tight Lanczos value.

Example:
    >>> from fim_engine.span_model import load_span_system
    >>> bench_span_lambda(load_span_system("models/minilm-span"), questions, sentences, repeats=3)
    SpanBench(pairs=32, forward_s=0.17, lambda_s=72.7, ratio=428.9, lanczos_s=26.2, ...)
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from fim_engine.span_model import SpanBatch, SpanSystem
from fim_engine.spans import DEFAULT_MASS_TOL, DEFAULT_TOL, span_lambda_max, span_lambda_max_by_mass

# The reference the fast path is measured against: Lanczos run to a residual of 1e-10.
TIGHT_TOL = 1e-10


@dataclass(frozen=True)
class SpanBench:
    """Median seconds (over ``repeats`` interleaved rounds) of the forward passes, of the fast
    λmax (``lambda_s``, with its eigenvector) and of Lanczos at ``tol`` (``lanczos_s``) over the
    same batches, their ratios to the forward pass, the mean Lanczos steps and Jacobian rows
    per batch, the fast path's relative error of λmax against the tight Lanczos value (p50,
    p99, max), the share of pairs whose hints rank words the same (``same_ranking``), and the
    1-minute load average before and after."""

    pairs: int
    forward_s: float
    lambda_s: float
    ratio: float
    lanczos_s: float
    lanczos_ratio: float
    mean_steps: float
    mean_rows: float
    rel_error_p50: float
    rel_error_p99: float
    rel_error_max: float
    same_ranking: float
    load_before: float
    load_after: float


def bench_span_lambda(
    system: SpanSystem,
    questions: Sequence[str],
    sentences: Sequence[str],
    *,
    repeats: int = 1,
    tol: float = DEFAULT_TOL,
    mass_tol: float = DEFAULT_MASS_TOL,
    lanczos: bool = True,
) -> SpanBench:
    """Time ``repeats`` interleaved rounds of forward passes, fast λmax and (``lanczos``)
    Lanczos λmax over the pairs in ``system.batch_size`` batches, after one warm-up round of
    each, then compare the fast λmax and hints with Lanczos at :data:`TIGHT_TOL`."""
    load_before = os.getloadavg()[0]
    batches = [
        system.encode(questions[i : i + system.batch_size], sentences[i : i + system.batch_size])
        for i in range(0, len(questions), system.batch_size)
    ]

    def forward() -> None:
        for batch in batches:
            with torch.inference_mode():
                system.module(input_ids=batch.input_ids, **batch.model_inputs())

    steps: list[int] = []
    rows: list[int] = []

    def run(method: str, batch: SpanBatch, tolerance: float) -> tuple[torch.Tensor, torch.Tensor]:
        lam, v, taken = _lambda(system, batch, method, tolerance, mass_tol)
        (rows if method == "mass" else steps).append(taken)
        return lam, v

    def fast() -> None:
        for batch in batches:
            run("mass", batch, tol)

    def slow() -> None:
        for batch in batches:
            run("lanczos", batch, tol)

    medians = _interleaved_medians([forward, fast, *([slow] if lanczos else [])], repeats)
    errors, same = _errors(system, batches, run)
    ordered = sorted(errors)
    return SpanBench(
        pairs=len(questions),
        forward_s=medians[0],
        lambda_s=medians[1],
        ratio=medians[1] / medians[0],
        lanczos_s=medians[2] if lanczos else float("nan"),
        lanczos_ratio=medians[2] / medians[0] if lanczos else float("nan"),
        mean_steps=statistics.mean(steps) if steps else 0.0,
        mean_rows=statistics.mean(rows),
        rel_error_p50=ordered[len(ordered) // 2],
        rel_error_p99=ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        rel_error_max=ordered[-1],
        same_ranking=sum(same) / len(same),
        load_before=load_before,
        load_after=os.getloadavg()[0],
    )


def _lambda(
    system: SpanSystem, batch: SpanBatch, method: str, tol: float, mass_tol: float
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """λmax, the top eigenvector and the rows (``"mass"``) or Lanczos steps it took."""
    with torch.enable_grad():
        embeds = system.input_embeddings(batch).detach().requires_grad_(True)
        start, end = system.logits_from_embeddings(embeds, batch)
        ctx = batch.context
        if method == "lanczos":
            return span_lambda_max(start, end, embeds, editable=ctx, candidates=ctx, tol=tol)
        found = span_lambda_max_by_mass(
            start, end, embeds, editable=ctx, candidates=ctx, mass_tol=mass_tol
        )
        assert found is not None  # no memory cap here
        return found[0], found[1], found[3]


def _interleaved_medians(rounds: list[Callable[[], None]], repeats: int) -> list[float]:
    """Median seconds of each job over ``repeats`` rounds that run every job in turn, after
    one warm-up run of each (so a change of load weighs on all of them alike)."""
    timings: list[list[float]] = [[] for _ in rounds]
    for job in rounds:
        job()
    for _ in range(repeats):
        for times, job in zip(timings, rounds, strict=True):
            began = time.perf_counter()
            job()
            times.append(time.perf_counter() - began)
    return [statistics.median(times) for times in timings]


def _errors(
    system: SpanSystem,
    batches: list[SpanBatch],
    run: Callable[[str, SpanBatch, float], tuple[torch.Tensor, torch.Tensor]],
) -> tuple[list[float], list[bool]]:
    """Per pair: the fast λmax's relative error against :data:`TIGHT_TOL` Lanczos, and whether
    the two hints rank the sentence's words the same."""
    from fim_engine.fisher import WordDirections

    errors: list[float] = []
    same: list[bool] = []
    for batch in batches:
        rankings = []
        for method in ("mass", "lanczos"):
            lam, v = run(method, batch, TIGHT_TOL)
            embeds = system.input_embeddings(batch).detach()
            num_words = [len(words) for words in batch.words]
            directions = WordDirections.from_batch(lam, v, embeds, batch.word_index, num_words)
            rankings.append(
                [
                    (directions[row].lambda_max, _ranking(directions[row].norms.tolist()))
                    for row in range(len(batch.words))
                ]
            )
        for (fast_lam, fast_rank), (tight_lam, tight_rank) in zip(*rankings, strict=True):
            errors.append(abs(fast_lam - tight_lam) / tight_lam if tight_lam > 0 else 0.0)
            same.append(fast_rank == tight_rank)
    return errors, same


def _ranking(norms: Sequence[float]) -> list[int]:
    """Word indices by hint, largest first; hints within 1e-9 of each other are tied, in word
    order."""
    values = [float(x) for x in norms]
    return sorted(range(len(values)), key=lambda i: (-round(values[i], 9), i))
