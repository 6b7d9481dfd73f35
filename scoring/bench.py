"""Benchmark: score synthetic systems × pairs end to end, from files to JSON.

    python -m scoring bench [--systems 50] [--pairs 50000] [--teams 4] [--seed 0]

Prints the seconds of each phase (read the CSV files, score, build the JSON-ready dict,
encode it as `python -m scoring` does) and the peak memory: the process's peak resident
set size, and the peak of memory allocated while scoring as traced by tracemalloc (numpy
and pandas buffers included) in a second, untimed run.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from scoring._io import read_pairs, read_predictions, read_weights
from scoring.report import score

STRATEGIES = ("morphosyntactic", "semantic", "pragmatic", "world_knowledge")


def synthetic_task(
    systems: int = 50, pairs: int = 50_000, teams: int = 4, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A random binary shared task: (pairs, predictions with lambda_max, weights).

    Five pairs per starter original on average (originals are shared, as in 2017), 70% of
    variants flip the label, each system is right with its own probability (0.6-0.9) and
    answers `0`, outside the label set, on 0.5% of texts.

    >>> pairs, predictions, weights = synthetic_task(systems=2, pairs=10)
    >>> len(pairs), sorted(predictions.system.unique()), len(weights)
    (10, ['system_00', 'system_01'], 2)
    """
    rng = np.random.default_rng(seed)
    n_originals = max(pairs // 5, 1)
    original_label = rng.choice(np.array([-1, 1]), n_originals)
    original = rng.integers(0, n_originals, pairs)
    flipped = rng.random(pairs) < 0.7
    pair_frame = pd.DataFrame(
        {
            "pair_id": np.arange(1, pairs + 1),
            "team": np.char.add("team_", rng.integers(0, teams, pairs).astype(str)),
            "original_id": original,
            "original_text": np.char.add("starter sentence ", original.astype(str)),
            "original_label": original_label[original],
            "variant_text": np.char.add("edited sentence ", np.arange(pairs).astype(str)),
            "variant_label": np.where(flipped, -original_label[original], original_label[original]),
            "tags": np.asarray(STRATEGIES)[rng.integers(0, len(STRATEGIES), pairs)],
        }
    )
    texts = pd.concat(
        [
            pair_frame[["original_text", "original_label"]]
            .drop_duplicates("original_text")
            .set_axis(["text", "gold"], axis=1),
            pair_frame[["variant_text", "variant_label"]].set_axis(["text", "gold"], axis=1),
        ],
        ignore_index=True,
    )
    n_texts = len(texts)
    names = np.array([f"system_{index:02d}" for index in range(systems)])
    skill = rng.uniform(0.6, 0.9, systems)
    gold = np.tile(texts["gold"].to_numpy(), systems)
    right = rng.random(systems * n_texts) < np.repeat(skill, n_texts)
    label = np.where(right, gold, -gold)
    label[rng.random(systems * n_texts) < 0.005] = 0
    predictions = pd.DataFrame(
        {
            "system": np.repeat(names, n_texts),
            "text": np.tile(texts["text"].to_numpy(), systems),
            "label": label,
            "lambda_max": rng.lognormal(0.0, 1.0, systems * n_texts),
        }
    )
    weights = pd.DataFrame({"system": names, "weight": np.round(skill, 4)})
    return pair_frame, predictions, weights


def _peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux (bytes on macOS, where this reads 1024 times too high).
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(systems: int, pairs: int, teams: int, seed: int) -> dict[str, float]:
    """Write a synthetic task to CSV files, then time reading, scoring and JSON output."""
    pair_frame, predictions, weights = synthetic_task(systems, pairs, teams, seed)
    figures: dict[str, float] = {"predictions": float(len(predictions))}
    with tempfile.TemporaryDirectory() as directory:
        folder = Path(directory)
        pair_frame.to_csv(folder / "pairs.csv", index=False)
        predictions.to_csv(folder / "predictions.csv", index=False)
        weights.to_csv(folder / "weights.csv", index=False)
        del pair_frame, predictions, weights
        figures["rss_before_mb"] = _peak_rss_mb()

        start = time.perf_counter()
        inputs = (
            read_pairs(folder / "pairs.csv"),
            read_predictions(folder / "predictions.csv"),
            read_weights(folder / "weights.csv"),
        )
        read_done = time.perf_counter()
        report = score(inputs[0], inputs[1], weights=inputs[2])
        score_done = time.perf_counter()
        document = report.to_dict()
        dict_done = time.perf_counter()
        text = json.dumps(document, ensure_ascii=False, allow_nan=False)
        json_done = time.perf_counter()
        figures.update(
            read_s=read_done - start,
            score_s=score_done - read_done,
            dict_s=dict_done - score_done,
            json_s=json_done - dict_done,
            total_s=json_done - start,
            json_mb=len(text) / 2**20,
            peak_rss_mb=_peak_rss_mb(),
        )
        del report, document, text

        tracemalloc.start()
        score(inputs[0], inputs[1], weights=inputs[2])
        figures["score_traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    return figures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scoring bench",
        description="Time scoring a synthetic shared task end to end.",
    )
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--pairs", type=int, default=50_000)
    parser.add_argument("--teams", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args(argv)
    if min(options.systems, options.pairs, options.teams) < 1:
        parser.error("--systems, --pairs and --teams must be at least 1")
    figures = run(options.systems, options.pairs, options.teams, options.seed)
    print(
        f"{options.systems} systems × {options.pairs} pairs ({options.teams} teams, "
        f"{int(figures['predictions'])} predictions)\n"
        f"  read CSV files     {figures['read_s']:7.2f} s\n"
        f"  score()            {figures['score_s']:7.2f} s\n"
        f"  to_dict()          {figures['dict_s']:7.2f} s\n"
        f"  json.dumps()       {figures['json_s']:7.2f} s  ({figures['json_mb']:.0f} MB of JSON)\n"
        f"  end to end         {figures['total_s']:7.2f} s\n"
        f"  peak RSS           {figures['peak_rss_mb']:7.0f} MB "
        f"(after generating the data: {figures['rss_before_mb']:.0f} MB)\n"
        f"  score() allocated  {figures['score_traced_peak_mb']:7.0f} MB at peak (tracemalloc)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
