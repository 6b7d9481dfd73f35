"""The span commands of ``python -m fim_engine`` (QA-SRL): training and λmax timing.

    python -m fim_engine train --arch minilm-span --train wiki1.train.qa --dev wiki1.dev.qa --out DIR
    python -m fim_engine bench-span --model DIR --data wiki1.dev.qa [--pairs N] [--json FILE]

Both read QA-SRL files in either format (``.tsv``: the 2017 TSV, anything else: the ``.qa``
block format, :func:`fim_engine.qasrl.read_qasrl`). Answers that are not a span of their
sentence are counted and left out, as :func:`fim_engine.span_training.train_span_system` leaves
out records without a located answer; a file with no record at all is an error.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from fim_engine.qasrl import QasrlRecord


def read_records(path: Path) -> list[QasrlRecord]:
    """The records of a QA-SRL file; raises ``ValueError`` when it yields none."""
    from fim_engine.qasrl import read_qasrl

    reading = read_qasrl(path)
    if not reading.records:
        first = f": {reading.errors[0]}" if reading.errors else ""
        raise ValueError(f"{path}: no QA-SRL record could be read{first}")
    if reading.errors:
        print(f"{path}: {len(reading.errors)} line(s) left out, first: {reading.errors[0]}")
    return reading.records


def training_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options every ``train`` command passes on to its trainer, from its arguments."""
    return {
        "epochs": args.epochs,
        "batch_size": args.batch_size,
        "learning_rate": args.lr,
        "max_steps": args.max_steps,
        "max_length": args.max_length,
        "seed": args.seed,
        "device": args.device,
    }


def train_span(args: argparse.Namespace) -> int:
    """``train --arch minilm-span``: fine-tune, save, and print the saved model's dev figures."""
    from fim_engine.span_training import train_span_system

    train, dev = read_records(args.train), read_records(args.dev)
    print(f"minilm-span: {len(train)} training and {len(dev)} dev questions")
    report = train_span_system(
        train,
        dev,
        args.out,
        **training_options(args),
    )
    scores = report.dev_scores
    print(
        f"dev ({report.dev_questions} questions with a located answer): "
        f"exact {scores['exact']:.4f}, token F1 >= 0.5 {scores['token_f1']:.4f}, "
        f"2017 overlap (over the true answer) {scores['overlap_2017']:.4f}, overlap over the "
        f"longer span {scores['overlap_longer']:.4f}, mean token F1 {scores['mean_token_f1']:.4f}"
    )
    print(
        f"wrote BertForQuestionAnswering to {report.out_dir} after {report.steps} steps "
        f"({report.train_examples} training answers, {report.seconds:.0f} s)"
    )
    return 0


def add_bench_span(commands: Any) -> None:
    bench = commands.add_parser(
        "bench-span", help="time span λmax against a forward pass of the same QA pairs"
    )
    bench.add_argument("--model", required=True, type=Path, help="a *ForQuestionAnswering dir")
    bench.add_argument("--data", required=True, type=Path, help="QA-SRL .qa or .tsv file")
    bench.add_argument("--pairs", type=int, default=64, help="the first N questions (default 64)")
    bench.add_argument("--repeats", type=int, default=3, help="interleaved timed rounds of each")
    bench.add_argument(
        "--mass-tol", type=float, default=None, help="probability the fast path may leave out"
    )
    bench.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    bench.add_argument("--batch-size", type=int, default=32)
    bench.add_argument("--max-length", type=int, default=128)
    bench.add_argument("--device", help="cpu, cuda, ... (default: cuda when available)")


def bench_span(args: argparse.Namespace) -> int:
    """``bench-span``: print (and optionally write) :class:`fim_engine.bench.span.SpanBench`."""
    from dataclasses import asdict

    from fim_engine.bench.span import bench_span_lambda
    from fim_engine.span_model import load_span_system

    records = read_records(args.data)[: max(args.pairs, 1)]
    system = load_span_system(
        args.model, device=args.device, batch_size=args.batch_size, max_length=args.max_length
    )
    result = bench_span_lambda(
        system,
        [r.question for r in records],
        [r.text for r in records],
        repeats=args.repeats,
        **({} if args.mass_tol is None else {"mass_tol": args.mass_tol}),
    )
    figures = {**asdict(result), "device": str(system.device), "batch_size": system.batch_size}
    print(json.dumps(figures, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0
