"""What span λmax costs next to a forward pass of the same batches.

Example:
    >>> from fim_engine.span_model import load_span_system
    >>> bench_span_lambda(load_span_system("models/minilm-span"), questions, sentences)
    SpanBench(pairs=32, forward_s=0.41, lambda_s=9.8, ratio=23.9, mean_steps=14.0)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from fim_engine.span_model import SpanSystem
from fim_engine.spans import DEFAULT_TOL, span_lambda_max


@dataclass(frozen=True)
class SpanBench:
    """Seconds for the forward passes and for λmax over the same batches, their ratio, and
    the mean number of Lanczos steps per batch."""

    pairs: int
    forward_s: float
    lambda_s: float
    ratio: float
    mean_steps: float


def bench_span_lambda(
    system: SpanSystem,
    questions: Sequence[str],
    sentences: Sequence[str],
    *,
    repeats: int = 1,
    tol: float = DEFAULT_TOL,
) -> SpanBench:
    """Time ``repeats`` rounds of forward passes and of λmax (with its eigenvector) over the
    pairs in ``system.batch_size`` batches, after one warm-up batch of each."""
    batches = [
        system.encode(questions[i : i + system.batch_size], sentences[i : i + system.batch_size])
        for i in range(0, len(questions), system.batch_size)
    ]

    def forward() -> None:
        for batch in batches:
            with torch.inference_mode():
                system.module(input_ids=batch.input_ids, **batch.model_inputs())

    steps: list[int] = []

    def fisher() -> None:
        for batch in batches:
            with torch.enable_grad():
                embeds = system.input_embeddings(batch).detach().requires_grad_(True)
                start, end = system.logits_from_embeddings(embeds, batch)
                _, _, taken = span_lambda_max(
                    start, end, embeds, editable=batch.context, candidates=batch.context, tol=tol
                )
            steps.append(taken)

    forward()
    fisher()
    timings = []
    for run in (forward, fisher):
        began = time.perf_counter()
        for _ in range(repeats):
            run()
        timings.append(time.perf_counter() - began)
    return SpanBench(
        pairs=len(questions),
        forward_s=timings[0],
        lambda_s=timings[1],
        ratio=timings[1] / timings[0],
        mean_steps=sum(steps[len(batches) :]) / max(1, len(steps) - len(batches)),
    )
