"""``python -m fim_engine bench-gpu``: throughput of forward and λmax on one accelerator, per model
size, label count, batch size and precision, within a time budget that fits a short lease.

It needs only this checkout, torch and transformers: the models are BERT-family classifiers
initialised at random from configs (MiniLM-L6-, BERT-base- and BERT-large-sized; timings do not
depend on training), the tokenizer a WordPiece vocabulary built from the texts themselves, and
the texts the SST-2 dev set when it is found (``--data``, ``$BIBI_SST2_DIR``,
``../shared/data/sst2`` or ``shared/data/sst2``), else generated sentences. Nothing is downloaded.

For every (size, labels, batch, precision) it reports sentences/s of :meth:`System.predict` and
of :meth:`System.fisher` with hints, their ratio, and for tf32 and bf16 the agreement of λmax
with fp32 on the same sentences (p50/p99 relative error, Spearman rank correlation). Per size it
also compares fp32 λmax on the device with Algorithm 1 in float64 (dense G) on a few short
sentences. Timed regions are bracketed by CUDA synchronisation; the best of ``repeats`` runs
counts. Whatever does not fit ``budget_s`` is skipped and listed as such.

``--size small`` (the default on CPU) shrinks models (hidden 16 to 64, 1 or 2 layers) and data
(32 sentences, batches of 8 and 32) so that the whole grid runs in about a minute on two cores; ``--size full`` (the default on CUDA) is the grid above.

Example:
    $ PYTHONPATH=. python -m fim_engine bench-gpu --budget-s 240 --json var/bench-gpu.json
"""

from __future__ import annotations

import copy
import os
import platform
import random
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

from fim_engine.algorithm1 import dense_fisher
from fim_engine.bench import builtin_sentences
from fim_engine.datasets import read_texts
from fim_engine.precision import PRECISIONS, check_precision
from fim_engine.system import System, default_device
from fim_engine.wordpiece import wordpiece_tokenizer

# name: (hidden size, layers, attention heads, intermediate size)
FULL_SIZES = {
    "MiniLM-L6": (384, 6, 12, 1536),
    "BERT-base": (768, 12, 12, 3072),
    "BERT-large": (1024, 24, 16, 4096),
}
SMALL_SIZES = {
    "tiny-L1": (16, 1, 2, 32),
    "small-L2": (32, 2, 2, 64),
    "medium-L2": (64, 2, 4, 128),
}
SST2_CANDIDATES = ("../shared/data/sst2", "shared/data/sst2")
COLUMNS = (
    "model",
    "labels",
    "batch",
    "precision",
    "forward sent/s",
    "λmax+hints sent/s",
    "λmax / forward",
    "λmax p50 rel. err",
    "λmax p99 rel. err",
    "Spearman",
)


@dataclass
class Grid:
    """What to measure; ``sizes`` maps a name to (hidden, layers, heads, intermediate)."""

    sizes: dict[str, tuple[int, int, int, int]]
    labels: Sequence[int] = (2, 3, 5)
    batch_sizes: Sequence[int] = (64, 256)
    precisions: Sequence[str] = PRECISIONS
    sentences: int = 872
    max_length: int = 128
    dense_sentences: int = 3
    repeats: int = 2


@dataclass
class _Clock:
    """The time budget: each size may use its share plus whatever earlier sizes left."""

    budget_s: float
    start: float = field(default_factory=time.perf_counter)

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def fits(self, estimate: float, share_end: float) -> bool:
        return self.elapsed() + estimate <= min(share_end, self.budget_s)


def grid_for(size: str, device: torch.device) -> Grid:
    """The full grid on CUDA (or ``size="full"``), a small one on CPU (or ``size="small"``)."""
    if size == "auto":
        size = "full" if device.type == "cuda" else "small"
    if size == "full":
        return Grid(sizes=dict(FULL_SIZES))
    if size == "small":
        return Grid(
            sizes=dict(SMALL_SIZES), batch_sizes=(8, 32), sentences=32, max_length=64, repeats=1
        )
    raise ValueError(f"unknown size {size!r}; choose auto, small or full")


def run_bench_gpu(
    *,
    grid: Grid,
    data: Path | None = None,
    device: str | None = None,
    budget_s: float = 240.0,
    out: TextIO | None = None,
) -> dict[str, Any]:
    """Run the grid within ``budget_s`` seconds, print Markdown tables to ``out``, return the
    figures (rows, dense-reference checks, skipped cells) as a dict."""
    out = out or sys.stdout
    for precision in grid.precisions:
        check_precision(precision)
    if budget_s <= 0:
        raise ValueError("--budget-s must be positive")
    chosen = torch.device(device) if device else default_device()
    texts, source = _texts(data, grid.sentences)
    tokenizer = build_tokenizer(texts, grid.max_length)
    figures: dict[str, Any] = {
        "device": _device_name(chosen),
        "torch": torch.__version__,
        "transformers": _transformers_version(),
        "data": source,
        "sentences": len(texts),
        "max_length": grid.max_length,
        "budget_s": budget_s,
        "rows": [],
        "dense": [],
        "skipped": [],
    }
    print(
        f"fim_engine bench-gpu: {figures['device']}, torch {figures['torch']}, transformers "
        f"{figures['transformers']}; {len(texts)} sentences from {source}, max {grid.max_length} "
        f"tokens, best of {grid.repeats}, budget {budget_s:.0f} s",
        file=out,
        flush=True,
    )
    clock = _Clock(budget_s)
    for index, (name, shape) in enumerate(grid.sizes.items()):
        share_end = budget_s * (index + 1) / len(grid.sizes)
        _bench_size(name, shape, texts, tokenizer, chosen, grid, clock, share_end, figures)
    figures["elapsed_s"] = clock.elapsed()
    print_tables(figures, out)
    return figures


def _bench_size(
    name: str,
    shape: tuple[int, int, int, int],
    texts: list[str],
    tokenizer: Any,
    device: torch.device,
    grid: Grid,
    clock: _Clock,
    share_end: float,
    figures: dict[str, Any],
) -> None:
    """Every cell of one model size, fp32 first so that the others can be compared with it."""
    model = _random_bert(shape, tokenizer, grid.max_length, max(grid.labels))
    reference: dict[tuple[int, int], np.ndarray] = {}
    if clock.fits(0.0, share_end):
        figures["dense"].append(_dense_check(name, model, tokenizer, texts, device, grid))
    else:
        figures["skipped"].append({"model": name, "reason": "time budget (dense reference)"})
    estimate = 0.0
    for precision in grid.precisions:
        for labels in grid.labels:
            for batch_size in grid.batch_sizes:
                cell = {"model": name, "labels": labels, "batch": batch_size}
                cell["precision"] = precision
                if not clock.fits(estimate, share_end):
                    figures["skipped"].append({**cell, "reason": "time budget"})
                    continue
                started = clock.elapsed()
                system = _system(model, tokenizer, labels, device, batch_size, grid, precision)
                row = _time_cell(system, texts, grid.repeats, cell, figures)
                if row is None:
                    continue
                lam = row.pop("lambda_max")
                if precision == "fp32":
                    reference[(labels, batch_size)] = lam
                elif (labels, batch_size) in reference:
                    row.update(agreement(lam, reference[(labels, batch_size)]))
                figures["rows"].append(row)
                estimate = clock.elapsed() - started


def _time_cell(
    system: System, texts: list[str], repeats: int, cell: dict[str, Any], figures: dict[str, Any]
) -> dict[str, Any] | None:
    """Forward and λmax+hints throughput of one cell, and its λmax values; None when the device
    ran out of memory (recorded as skipped)."""
    try:
        system.predict(texts[: system.batch_size])
        system.fisher(texts[: system.batch_size])
        forward, _ = _best(lambda: system.predict(texts), system.device, repeats)
        fisher, results = _best(lambda: system.fisher(texts), system.device, repeats)
    except torch.OutOfMemoryError:
        torch.cuda.empty_cache()
        figures["skipped"].append({**cell, "reason": "out of memory"})
        return None
    return {
        **cell,
        "forward_per_s": len(texts) / forward,
        "lambda_max_per_s": len(texts) / fisher,
        "lambda_max_over_forward": fisher / forward,
        "lambda_max": np.array([r.lambda_max for r in results]),
    }


def _best(run: Callable[[], Any], device: torch.device, repeats: int) -> tuple[float, Any]:
    """The best wall time of ``repeats`` runs, synchronising CUDA around each, and the last
    result."""
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        _synchronize(device)
        start = time.perf_counter()
        result = run()
        _synchronize(device)
        best = min(best, time.perf_counter() - start)
    return best, result


def _synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def agreement(values: np.ndarray, reference: np.ndarray) -> dict[str, float]:
    """p50 and p99 relative error of ``values`` against ``reference``, and Spearman's rank
    correlation (ordinal ranks; ties are rare for continuous λmax)."""
    error = np.abs(values - reference) / np.maximum(np.abs(reference), 1e-300)
    return {
        "p50_relative_error": float(np.percentile(error, 50)),
        "p99_relative_error": float(np.percentile(error, 99)),
        "spearman": spearman(values, reference),
    }


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation of two equally long vectors (NaN for fewer than 2)."""
    if len(a) < 2:
        return float("nan")
    ranks_a = np.argsort(np.argsort(a)).astype(np.float64)
    ranks_b = np.argsort(np.argsort(b)).astype(np.float64)
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])


def _dense_check(
    name: str, model: Any, tokenizer: Any, texts: list[str], device: torch.device, grid: Grid
) -> dict[str, Any]:
    """fp32 λmax on the device against Algorithm 1 (dense G) in float64 on short sentences."""
    short = [t for t in texts if 6 <= len(t.split()) <= 12][: grid.dense_sentences]
    short = short or texts[: grid.dense_sentences]
    labels = grid.labels[0]
    single = _system(model, tokenizer, labels, device, 8, grid, "fp32")
    ours = [r.lambda_max for r in single.fisher(short, hints=False)]
    twin = copy.deepcopy(model).double()
    twin.full_head = tuple(t.double() for t in model.full_head)
    double = _system(twin, tokenizer, labels, device, 8, grid, "fp32")
    dense = [dense_fisher(double, text).lambda_max for text in short]
    del double
    differences = [abs(a - r) / max(abs(r), 1e-300) for a, r in zip(ours, dense, strict=True)]
    return {
        "model": name,
        "labels": labels,
        "sentences": len(short),
        "max_relative_difference": max(differences),
    }


def _system(
    model: Any,
    tokenizer: Any,
    labels: int,
    device: torch.device,
    batch_size: int,
    grid: Grid,
    precision: str,
) -> System:
    """A System over ``model`` with its head cut, in place, to the first ``labels`` classes of
    the full head (kept as ``model.full_head``)."""
    from fim_engine._transformers_backend import TransformersBackend

    weight, bias = model.full_head
    model.classifier = torch.nn.Linear(weight.shape[1], labels).to(weight.device, weight.dtype)
    with torch.no_grad():
        model.classifier.weight.copy_(weight[:labels])
        model.classifier.bias.copy_(bias[:labels])
    model.config.id2label = {i: f"class_{i}" for i in range(labels)}
    model.config.label2id = {f"class_{i}": i for i in range(labels)}
    model.num_labels = labels
    head = model
    return System(
        TransformersBackend(head, tokenizer),
        device=device,
        batch_size=batch_size,
        max_length=grid.max_length,
        precision=precision,
    )


def _random_bert(
    shape: tuple[int, int, int, int], tokenizer: Any, max_length: int, labels: int
) -> Any:
    """A BertForSequenceClassification initialised at random (seed 0). The head's weights are
    scaled so that logits spread over a few units, as a trained model's do, rather than all
    predictions sitting at the uniform distribution."""
    from transformers import BertConfig, BertForSequenceClassification

    hidden, layers, heads, intermediate = shape
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=max(len(tokenizer), 30522),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        max_position_embeddings=max(512, max_length),
        id2label={i: f"class_{i}" for i in range(labels)},
        label2id={f"class_{i}": i for i in range(labels)},
    )
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():
        model.classifier.weight.normal_(0.0, 3.0 / hidden**0.5)
    model.full_head = (model.classifier.weight.detach(), model.classifier.bias.detach())
    return model


def build_tokenizer(texts: Sequence[str], max_length: int) -> Any:
    """A lowercasing BERT WordPiece tokenizer whose vocabulary is the texts' words and
    characters (with ``##`` continuations), so every text tokenizes without [UNK]."""
    words: dict[str, None] = {}
    for text in texts:
        for word in re.findall(r"\w+|[^\w\s]", text.lower()):
            words.setdefault(word, None)
    chars = sorted({c for word in words for c in word})
    tokens = list(words) + [c for c in chars if c not in words] + [f"##{c}" for c in chars]
    return wordpiece_tokenizer(tokens, max_length)


def _texts(data: Path | None, count: int) -> tuple[list[str], str]:
    """The first ``count`` texts of ``data``, else of SST-2 dev where found, else generated."""
    if data is None:
        candidates = [os.environ.get("BIBI_SST2_DIR", ""), *SST2_CANDIDATES]
        found = [Path(c) / "stsa.binary.dev" for c in candidates if c]
        data = next((path for path in found if path.is_file()), None)
    if data is not None:
        texts = [t for t in read_texts(data) if t.strip()][:count]
        if not texts:
            raise ValueError(f"{data}: no texts")
        return texts, str(data)
    return generated_sentences(count), "generated sentences"


def generated_sentences(count: int, seed: int = 0) -> list[str]:
    """``count`` sentences of 3 to 45 words drawn from the words of the built-in benchmark
    sentences (SST-2-like lengths: most between 10 and 30 words)."""
    pool = " ".join(builtin_sentences()).split()
    rng = random.Random(seed)
    lengths = [min(45, max(3, int(rng.gauss(19, 9)))) for _ in range(count)]
    return [" ".join(rng.choices(pool, k=n)) for n in lengths]


def _device_name(device: torch.device) -> str:
    if device.type == "cuda":
        return f"{device} ({torch.cuda.get_device_name(device)})"
    return f"cpu ({platform.processor() or platform.machine()}, {torch.get_num_threads()} threads)"


def _transformers_version() -> str:
    import transformers

    return str(transformers.__version__)


def print_tables(figures: dict[str, Any], out: TextIO) -> None:
    """The throughput table, the dense-reference table and the skipped cells, as Markdown."""
    print("\n| " + " | ".join(COLUMNS) + " |", file=out)
    print("|" + "---|" * len(COLUMNS), file=out)
    for row in figures["rows"]:
        cells = [
            row["model"],
            str(row["labels"]),
            str(row["batch"]),
            row["precision"],
            f"{row['forward_per_s']:,.0f}",
            f"{row['lambda_max_per_s']:,.0f}",
            f"{row['lambda_max_over_forward']:.2f}×",
        ]
        if "spearman" in row:
            cells += [
                f"{row['p50_relative_error']:.1e}",
                f"{row['p99_relative_error']:.1e}",
                f"{row['spearman']:.5f}",
            ]
        else:
            cells += ["", "", ""]
        print("| " + " | ".join(cells) + " |", file=out)
    print(
        "\n| model | labels | sentences | fp32 λmax vs float64 dense G, max rel. diff |", file=out
    )
    print("|---|---|---|---|", file=out)
    for row in figures["dense"]:
        print(
            f"| {row['model']} | {row['labels']} | {row['sentences']} | "
            f"{row['max_relative_difference']:.1e} |",
            file=out,
        )
    for skipped in figures["skipped"]:
        cell = ", ".join(f"{k} {v}" for k, v in skipped.items() if k != "reason")
        print(f"skipped ({skipped['reason']}): {cell}", file=out)
    print(f"\ntotal {figures['elapsed_s']:.0f} s of a {figures['budget_s']:.0f} s budget", file=out)
