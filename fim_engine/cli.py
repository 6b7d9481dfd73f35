"""``python -m fim_engine {predict,train,bench}``.

    python -m fim_engine predict --model DIR --input FILE --output FILE.jsonl [--fisher] [--hints]
    python -m fim_engine train --arch {bow,cnn,bilstm,minilm} --train FILE --dev FILE --out DIR
    python -m fim_engine bench [--model DIR] [--data FILE]

``predict`` reads ``.jsonl`` (a ``text`` field per line), ``.tsv``/``.csv`` (a ``text`` column)
or ``.txt`` (one text per line) and writes one JSON object per input text, in input order:
``text``, ``label``, ``probabilities`` (label → probability), ``truncated``, and with
``--fisher`` ``lambda_max`` (with ``--hints`` also ``hints``: [[word, score], ...]).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

CHUNK = 512


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fim_engine", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)

    predict = commands.add_parser("predict", help="label texts with a model directory")
    predict.add_argument("--model", required=True, type=Path, help="model directory")
    predict.add_argument("--input", required=True, type=Path, help=".jsonl, .tsv, .csv or .txt")
    predict.add_argument("--output", required=True, type=Path, help="output .jsonl")
    predict.add_argument("--fisher", action="store_true", help="add lambda_max")
    predict.add_argument("--hints", action="store_true", help="add word hints (implies --fisher)")
    _add_runtime_options(predict)

    train = commands.add_parser(
        "train", help="train a baseline system into an uploadable directory"
    )
    train.add_argument("--arch", required=True, choices=["bow", "cnn", "bilstm", "minilm"])
    train.add_argument(
        "--train", required=True, type=Path, help="SST-2 'LABEL sentence' file, or .jsonl/.tsv/.csv"
    )
    train.add_argument("--dev", required=True, type=Path, help="same formats as --train")
    train.add_argument("--out", required=True, type=Path, help="directory to write")
    train.add_argument("--epochs", type=int, help="default depends on --arch")
    train.add_argument("--lr", type=float, help="learning rate; default depends on --arch")
    train.add_argument("--max-steps", type=int, help="stop after this many optimizer steps")
    train.add_argument("--seed", type=int, default=0)
    _add_runtime_options(train)

    bench = commands.add_parser("bench", help="time forward, λmax and Algorithm 1 per architecture")
    bench.add_argument(
        "--model", type=Path, help="benchmark this directory instead of the four baselines"
    )
    bench.add_argument(
        "--data", type=Path, help="sentences to time (default: a small built-in set)"
    )
    bench.add_argument(
        "--sentences", type=int, default=0, help="use the first N sentences (0 = all)"
    )
    bench.add_argument(
        "--alg1-sentences", type=int, default=3, help="short sentences for Algorithm 1"
    )
    bench.add_argument(
        "--repeats", type=int, default=3, help="timing repeats; the best is reported"
    )
    bench.add_argument(
        "--arch",
        action="append",
        choices=["bow", "cnn", "bilstm", "minilm"],
        help="restrict the baselines",
    )
    bench.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    _add_runtime_options(bench)

    args = parser.parse_args(argv)
    handler = {"predict": _predict, "train": _train, "bench": _bench}[args.command]
    return handler(args)


def _add_runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--max-length", type=int, default=128, help="tokens per text, special tokens included"
    )
    parser.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: cuda when available)")


def _predict(args: argparse.Namespace) -> int:
    from fim_engine.datasets import read_texts
    from fim_engine.system import load_system

    system = load_system(
        args.model, device=args.device, batch_size=args.batch_size, max_length=args.max_length
    )
    texts = read_texts(args.input)
    fisher = args.fisher or args.hints
    args.output.parent.mkdir(parents=True, exist_ok=True)
    truncated = 0
    with (
        args.output.open("w", encoding="utf-8") as out,
        tqdm(total=len(texts), desc="predict", unit="text") as bar,
    ):
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start : start + CHUNK]
            for record in _records(system, chunk, fisher=fisher, hints=args.hints):
                truncated += record["truncated"]
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            bar.update(len(chunk))
    print(f"wrote {len(texts)} predictions to {args.output}")
    if truncated:
        print(
            f'{truncated} text(s) exceeded {system.max_length} tokens and were truncated ("truncated": true)'
        )
    return 0


def _records(system: Any, texts: list[str], *, fisher: bool, hints: bool) -> list[dict[str, Any]]:
    labels = system.labels
    records: list[dict[str, Any]] = []
    if fisher:
        for text, result in zip(texts, system.fisher(texts, hints=hints), strict=True):
            record = {
                "text": text,
                "label": result.label,
                "probabilities": dict(zip(labels, map(float, result.probabilities), strict=True)),
                "truncated": result.truncated,
                "lambda_max": result.lambda_max,
            }
            if hints:
                record["hints"] = [[word, score] for word, score in result.hints]
            records.append(record)
        return records
    batch = system.predict(texts)
    for text, label, row, cut in zip(
        texts, batch.labels, batch.probabilities, batch.truncated, strict=True
    ):
        records.append(
            {
                "text": text,
                "label": label,
                "probabilities": dict(zip(labels, map(float, row), strict=True)),
                "truncated": cut,
            }
        )
    return records


def _train(args: argparse.Namespace) -> int:
    from fim_engine.datasets import read_labelled
    from fim_engine.training import train_system

    train, dev = read_labelled(args.train), read_labelled(args.dev)
    print(
        f"{args.arch}: {len(train)} training and {len(dev)} dev texts, labels {train.label_names}"
    )
    report = train_system(
        args.arch,
        train,
        dev,
        args.out,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        max_steps=args.max_steps,
        max_length=args.max_length,
        seed=args.seed,
        device=args.device,
    )
    print(f"dev accuracy: {report.dev_accuracy:.4f} ({len(dev)} texts)")
    print(f"wrote {report.architecture} model to {report.out_dir} after {report.steps} steps")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from fim_engine.bench import run_bench

    figures = run_bench(
        model=args.model,
        data=args.data,
        architectures=args.arch,
        sentences=args.sentences,
        alg1_sentences=args.alg1_sentences,
        repeats=args.repeats,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device=args.device,
    )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
