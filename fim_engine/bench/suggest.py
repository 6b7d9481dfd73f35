"""``python -m fim_engine bench-suggest``: what suggestions cost, and how often they break.

1. **Systems.** Trains bow, cnn and MiniLM (by default) on SST-2 train with
   :func:`fim_engine.train_system` (MiniLM fine-tuned for ``minilm_steps`` steps of 16 sentences
   of at most 64 tokens; the others at their defaults) and caches them
   under ``models_dir``; a rerun reuses every directory that :func:`fim_engine.check_model_dir`
   accepts. Prints each system's SST-2 dev accuracy.
2. **Latency** of :func:`fim_engine.suggest` per original, one original at a time, on the first
   ``latency_originals`` SST-2 test sentences, with MiniLM as the guide: verified on MiniLM
   alone and on every system. The one-time costs (loading WordNet, the guide's
   neighbour table) are timed apart.
3. **Flip rates.** For each system as the guide, the SST-2 test originals in the top and the
   bottom decile of its λmax get suggestions (:func:`fim_engine.suggest_many`, ``top_k`` per
   kind), verified on every system. Reported per decile: how many label-preserving suggestions
   (probes, the embedding neighbours, left out)
   there are, the share that flip at least one system and the share that flip the guide; and
   the same two shares for the label-changing ones.

Example:
    $ python -m fim_engine bench-suggest --json var/bench-suggest.json
"""

from __future__ import annotations

import math
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import torch

from edits.wordnet import load_wordnet
from fim_engine.datasets import read_labelled
from fim_engine.errors import ModelFormatError
from fim_engine.formats import check_model_dir
from fim_engine.suggestions import SuggestionReport, suggest, suggest_many
from fim_engine.system import System, load_system
from fim_engine.training import accuracy, train_system

SPLITS = ("train", "dev", "test")
MINILM_TRAINING = {"batch_size": 16, "max_length": 64}


def run_bench_suggest(
    *,
    data_dir: Path,
    models_dir: Path,
    architectures: Sequence[str] = ("bow", "cnn", "minilm"),
    latency_originals: int = 50,
    minilm_steps: int = 250,
    top_k: int = 5,
    batch_size: int = 32,
    max_length: int = 128,
    device: str | None = None,
    out: TextIO = sys.stdout,
) -> dict[str, Any]:
    """Run the benchmark, print its figures to ``out`` and return them as a dict."""
    files = {split: data_dir / f"stsa.binary.{split}" for split in SPLITS}
    missing = [str(path) for path in files.values() if not path.is_file()]
    if missing:
        raise FileNotFoundError(f"SST-2 files not found: {', '.join(missing)} (see --data-dir)")
    train, dev, test = (read_labelled(files[split]) for split in SPLITS)
    print(
        f"fim_engine bench-suggest: torch {torch.__version__}, {torch.get_num_threads()} threads; "
        f"SST-2 {len(train)} train, {len(dev)} dev, {len(test)} test sentences",
        file=out,
    )
    systems: dict[str, System] = {}
    figures: dict[str, Any] = {"systems": {}, "top_k": top_k}
    for arch in architectures:
        path = models_dir / arch
        started = time.perf_counter()
        trained = _train_unless_cached(arch, path, train, dev, minilm_steps, batch_size, max_length)
        system = load_system(path, device=device, batch_size=batch_size, max_length=max_length)
        systems[arch] = system
        dev_accuracy = accuracy(system, dev)
        figures["systems"][arch] = {"path": str(path), "dev_accuracy": dev_accuracy}
        how = f"trained in {time.perf_counter() - started:.0f} s" if trained else "cached"
        print(f"{arch}: dev accuracy {dev_accuracy:.4f} ({how}, {path})", file=out)

    started = time.perf_counter()
    wordnet = load_wordnet()
    figures["wordnet_load_s"] = time.perf_counter() - started
    print(f"WordNet loaded in {figures['wordnet_load_s']:.2f} s (once per process)", file=out)

    if "minilm" in systems:
        figures["latency"] = _latency(systems, test.texts[:latency_originals], wordnet, top_k, out)
    figures["flips"] = {
        guide: _flip_rates(systems, guide, test.texts, wordnet, top_k, out) for guide in systems
    }
    return figures


def _train_unless_cached(
    arch: str,
    path: Path,
    train: Any,
    dev: Any,
    minilm_steps: int,
    batch_size: int,
    max_length: int,
) -> bool:
    try:
        check_model_dir(path, expected_num_labels=2)
        return False
    except ModelFormatError:
        pass
    if arch == "minilm":
        # A short fine-tune keeps the benchmark to minutes on a CPU.
        batch_size, max_length = MINILM_TRAINING["batch_size"], MINILM_TRAINING["max_length"]
    train_system(
        arch,
        train,
        dev,
        path,
        batch_size=batch_size,
        max_length=max_length,
        max_steps=minilm_steps if arch == "minilm" else None,
        progress=False,
    )
    return True


def _latency(
    systems: dict[str, System], texts: list[str], wordnet: Any, top_k: int, out: TextIO
) -> dict[str, Any]:
    figures: dict[str, Any] = {"originals": len(texts)}
    for label, chosen in (
        ("minilm_only", {"minilm": systems["minilm"]}),
        ("all_systems", systems),
    ):
        started = time.perf_counter()
        suggest(texts[0], chosen, guide="minilm", top_k=top_k, wordnet=wordnet)
        first = time.perf_counter() - started
        times, counts = [], []
        for text in texts:
            started = time.perf_counter()
            report = suggest(text, chosen, guide="minilm", top_k=top_k, wordnet=wordnet)
            times.append(time.perf_counter() - started)
            counts.append(len(report.suggestions))
        figures[label] = {
            "systems": list(chosen),
            "first_call_s": first,
            "median_ms": 1000 * statistics.median(times),
            "mean_ms": 1000 * statistics.fmean(times),
            "p90_ms": 1000 * float(np.quantile(times, 0.9)),
            "mean_suggestions": statistics.fmean(counts),
        }
        row = figures[label]
        print(
            f"latency, MiniLM guide, verified on {', '.join(chosen)}: median {row['median_ms']:.0f} ms, "
            f"mean {row['mean_ms']:.0f} ms, p90 {row['p90_ms']:.0f} ms per original "
            f"({len(texts)} originals, {row['mean_suggestions']:.1f} suggestions each; "
            f"first call {row['first_call_s']:.1f} s)",
            file=out,
        )
    return figures


def _flip_rates(
    systems: dict[str, System],
    guide: str,
    texts: list[str],
    wordnet: Any,
    top_k: int,
    out: TextIO,
) -> dict[str, Any]:
    lambdas = np.array([r.lambda_max for r in systems[guide].fisher(texts, hints=False)])
    order = np.argsort(lambdas, kind="stable")
    size = math.ceil(len(texts) / 10)
    figures: dict[str, Any] = {}
    for decile, chosen in (("bottom", order[:size]), ("top", order[-size:])):
        started = time.perf_counter()
        reports = suggest_many(
            [texts[i] for i in chosen], systems, guide=guide, top_k=top_k, wordnet=wordnet
        )
        seconds = time.perf_counter() - started
        row = {
            "originals": len(chosen),
            "lambda_max_range": [float(lambdas[chosen].min()), float(lambdas[chosen].max())],
            "seconds": seconds,
            **_shares(reports, guide, keeps_label=True, prefix="preserving"),
            **_shares(reports, guide, keeps_label=False, prefix="changing"),
        }
        figures[decile] = row
        print(
            f"guide {guide}, {decile} λmax decile ({row['originals']} originals, λmax "
            f"{row['lambda_max_range'][0]:.2e}-{row['lambda_max_range'][1]:.2e}): "
            f"{row['preserving']} label-preserving suggestions, "
            f"{_pct(row['preserving_flip_any'])} flip at least one system, "
            f"{_pct(row['preserving_flip_guide'])} flip the guide; {row['changing']} label-changing, "
            f"{_pct(row['changing_flip_any'])} change at least one system, "
            f"{_pct(row['changing_flip_guide'])} change the guide ({seconds:.0f} s)",
            file=out,
        )
    return figures


def _shares(
    reports: list[SuggestionReport], guide: str, *, keeps_label: bool, prefix: str
) -> dict[str, Any]:
    chosen = [
        s for r in reports for s in r.suggestions if s.keeps_label is keeps_label and not s.probe
    ]
    count = len(chosen)
    return {
        prefix: count,
        f"{prefix}_flip_any": sum(bool(s.changed) for s in chosen) / count if count else None,
        f"{prefix}_flip_guide": (
            sum(s.outcomes[guide].changed for s in chosen) / count if count else None
        ),
    }


def _pct(share: float | None) -> str:
    return "n/a" if share is None else f"{100 * share:.1f}%"
