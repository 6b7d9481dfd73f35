"""``python -m fim_engine {predict,suggest,train,bench,bench-suggest,bench-gpu,bench-span}``.

    python -m fim_engine predict --model DIR --input FILE --output FILE.jsonl [--fisher] [--hints]
        [--editable {premise,hypothesis,both}]
    python -m fim_engine suggest --model DIR [--model DIR ...] --input FILE --output FILE.jsonl [--top-k K]
        [--editable {premise,hypothesis,both}]
    python -m fim_engine train --arch {bow,cnn,bilstm,minilm,bow-pair,minilm-pair} --train FILE --dev FILE --out DIR
    python -m fim_engine train --arch minilm-span --train FILE.qa --dev FILE.qa --out DIR
    python -m fim_engine bench [--model DIR] [--data FILE]
    python -m fim_engine bench-suggest [--data-dir DIR] [--models-dir DIR]
    python -m fim_engine bench-gpu [--size {auto,small,full}] [--budget-s S] [--json FILE]
    python -m fim_engine bench-span --model DIR --data FILE.qa [--pairs N] [--json FILE]

``predict`` reads ``.jsonl`` (a ``text`` field per line), ``.tsv``/``.csv`` (a ``text`` column)
or ``.txt`` (one text per line), or sentence pairs (premise and hypothesis columns or fields,
:mod:`fim_engine.datasets`), and writes one JSON object per item, in input order
(:mod:`fim_engine.prediction_records`): ``text`` (or ``premise`` and ``hypothesis``),
``label``, ``probabilities`` (label → probability), ``truncated``, and with ``--fisher``
``lambda_max`` (with ``--hints`` also ``hints`` and ``leverage``: [[word, score], ...]).
``suggest`` reads the same formats and writes one :meth:`fim_engine.SuggestionReport.to_dict`
per input text or pair (``--editable``: the side(s) of a pair edits go into). The span commands (``train --arch minilm-span``, ``bench-span``) are
described in :mod:`fim_engine.span_cli`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from tqdm.auto import tqdm

from fim_engine.precision import PRECISIONS
from fim_engine.sentence_pairs import EDITABLE_CHOICES, TextItem
from fim_engine.span_cli import add_bench_span, bench_span, train_span, training_options

CHUNK = 512
# What a command writes a record for: a text, or a sentence pair.
Item = TypeVar("Item", str, TextItem)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m fim_engine", description=__doc__.splitlines()[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    for add in (
        _add_predict,
        _add_suggest,
        _add_train,
        _add_bench,
        _add_bench_suggest,
        _add_bench_gpu,
        add_bench_span,
    ):
        add(commands)
    args = parser.parse_args(argv)
    handler = {
        "predict": _predict,
        "suggest": _suggest,
        "train": _train,
        "bench": _bench,
        "bench-suggest": _bench_suggest,
        "bench-gpu": _bench_gpu,
        "bench-span": bench_span,
    }[args.command]
    try:
        return handler(args)
    except (ValueError, FileNotFoundError) as error:
        # Bad input (a refused model directory, an unreadable file, missing WordNet files):
        # a message for the person at the terminal, not a traceback.
        parser.exit(2, f"{parser.prog}: error: {error}\n")


def _add_predict(commands: Any) -> None:
    predict = commands.add_parser("predict", help="label texts with a model directory")
    predict.add_argument("--model", required=True, type=Path, help="model directory")
    predict.add_argument(
        "--input",
        required=True,
        type=Path,
        help=".jsonl, .tsv, .csv (texts, or premise/hypothesis pairs) or .txt",
    )
    predict.add_argument("--output", required=True, type=Path, help="output .jsonl")
    predict.add_argument("--fisher", action="store_true", help="add lambda_max")
    predict.add_argument("--hints", action="store_true", help="add word hints (implies --fisher)")
    predict.add_argument(
        "--editable",
        choices=list(EDITABLE_CHOICES),
        help="sentence pairs: the side(s) whose words λmax and hints count (default: both)",
    )
    _add_runtime_options(predict)
    _add_precision_option(predict)


def _add_suggest(commands: Any) -> None:
    suggest = commands.add_parser(
        "suggest", help="verified single-word edits at the words a system is most sensitive to"
    )
    suggest.add_argument(
        "--model",
        required=True,
        action="append",
        type=Path,
        help="model directory; repeat to verify on several systems (the first guides)",
    )
    suggest.add_argument(
        "--input",
        required=True,
        type=Path,
        help=".jsonl, .tsv, .csv (texts, or premise/hypothesis pairs) or .txt",
    )
    suggest.add_argument("--output", required=True, type=Path, help="output .jsonl")
    suggest.add_argument(
        "--guide", type=Path, help="the --model that supplies λmax and leverage (default: first)"
    )
    suggest.add_argument(
        "--top-k", type=int, default=5, help="suggestions per kind (label-keeping, -changing)"
    )
    suggest.add_argument("--words", type=int, default=3, help="highest-leverage words to edit")
    suggest.add_argument("--neighbours", type=int, default=10, help="embedding neighbours per word")
    suggest.add_argument(
        "--source",
        action="append",
        choices=["synonym", "antonym", "neighbour"],
        help="candidate sources (default: all three)",
    )
    suggest.add_argument(
        "--editable",
        choices=list(EDITABLE_CHOICES),
        help="sentence pairs: the side(s) whose words are edited (default: both)",
    )
    suggest.add_argument(
        "--wordnet",
        type=Path,
        help="WordNet 3.0 directory (default: $BIBI_WORDNET_DIR or /usr/share/wordnet)",
    )
    _add_runtime_options(suggest)
    _add_precision_option(suggest)


def _add_train(commands: Any) -> None:
    train = commands.add_parser(
        "train", help="train a baseline system into an uploadable directory"
    )
    train.add_argument(
        "--arch",
        required=True,
        choices=["bow", "cnn", "bilstm", "minilm", "bow-pair", "minilm-pair", "minilm-span"],
    )
    train.add_argument(
        "--train",
        required=True,
        type=Path,
        help="SST-2 'LABEL sentence' file, or .jsonl/.tsv/.csv; *-pair: premise, hypothesis and "
        "label columns (nli-cad's sentence1/sentence2/gold_label); minilm-span: QA-SRL .qa or .tsv",
    )
    train.add_argument("--dev", required=True, type=Path, help="same formats as --train")
    train.add_argument("--out", required=True, type=Path, help="directory to write")
    train.add_argument("--epochs", type=int, help="default depends on --arch")
    train.add_argument("--lr", type=float, help="learning rate; default depends on --arch")
    train.add_argument("--max-steps", type=int, help="stop after this many optimizer steps")
    train.add_argument("--seed", type=int, default=0)
    _add_runtime_options(train)


def _add_bench(commands: Any) -> None:
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
        "--repeats",
        type=int,
        default=3,
        help="interleaved timing repeats; the median is reported",
    )
    bench.add_argument(
        "--labels",
        type=_label_counts,
        default=[2],
        help="classes of the baselines' heads: one count or several, e.g. 2,3,5",
    )
    bench.add_argument(
        "--arch",
        action="append",
        choices=["bow", "cnn", "bilstm", "minilm"],
        help="restrict the baselines",
    )
    bench.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    _add_runtime_options(bench)


def _label_counts(value: str) -> list[int]:
    """``--labels``: one label count or a comma-separated list (``2,3,5``)."""
    try:
        return [int(part) for part in value.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a label count or counts separated by commas (e.g. 2,3,5), got {value!r}"
        ) from None


def _add_bench_suggest(commands: Any) -> None:
    bench_suggest = commands.add_parser(
        "bench-suggest",
        help="suggestion latency on MiniLM and flip rates of verified suggestions on SST-2",
    )
    bench_suggest.add_argument(
        "--data-dir",
        type=Path,
        default=Path("../shared/data/sst2"),
        help="directory with stsa.binary.{train,dev,test}",
    )
    bench_suggest.add_argument(
        "--models-dir",
        type=Path,
        default=Path("var/bench-suggest"),
        help="where the trained systems are cached between runs",
    )
    bench_suggest.add_argument(
        "--arch",
        action="append",
        choices=["bow", "cnn", "bilstm", "minilm"],
        help="systems to train and verify on (default: bow, cnn, minilm)",
    )
    bench_suggest.add_argument(
        "--latency-originals", type=int, default=50, help="originals timed for the latency"
    )
    bench_suggest.add_argument(
        "--minilm-steps", type=int, default=250, help="fine-tuning steps for MiniLM"
    )
    bench_suggest.add_argument("--top-k", type=int, default=5)
    bench_suggest.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    _add_runtime_options(bench_suggest)


def _add_bench_gpu(commands: Any) -> None:
    bench_gpu = commands.add_parser(
        "bench-gpu",
        help="forward and λmax throughput per model size, labels, batch and precision (no downloads)",
    )
    bench_gpu.add_argument(
        "--size",
        choices=["auto", "small", "full"],
        default="auto",
        help="full: MiniLM-L6/BERT-base/BERT-large sizes, 872 sentences; small: tiny models, "
        "64 sentences (default: full on CUDA, small on CPU)",
    )
    bench_gpu.add_argument(
        "--small", action="store_const", const="small", dest="size", help="same as --size small"
    )
    bench_gpu.add_argument(
        "--budget-s", type=float, default=240.0, help="total seconds; what does not fit is skipped"
    )
    bench_gpu.add_argument("--data", type=Path, help="sentences (default: SST-2 dev if found)")
    bench_gpu.add_argument("--sentences", type=int, help="use the first N sentences")
    bench_gpu.add_argument(
        "--precision", action="append", choices=list(PRECISIONS), help="restrict precisions"
    )
    bench_gpu.add_argument("--json", type=Path, help="also write the figures to this JSON file")
    bench_gpu.add_argument("--device", help="cuda, cuda:1, cpu (default: cuda when available)")


def _add_precision_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--precision",
        choices=list(PRECISIONS),
        default="fp32",
        help="fp32 (exact, default), tf32 (CUDA matmuls) or bf16 (autocast)",
    )


def _add_runtime_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument(
        "--max-length", type=int, default=128, help="tokens per text, special tokens included"
    )
    parser.add_argument("--device", help="cpu, cuda, cuda:1, ... (default: cuda when available)")


def _predict(args: argparse.Namespace) -> int:
    from fim_engine.datasets import read_items
    from fim_engine.prediction_records import prediction_records
    from fim_engine.system import load_system

    system = load_system(
        args.model,
        device=args.device,
        batch_size=args.batch_size,
        max_length=args.max_length,
        precision=args.precision,
        editable=args.editable,
    )
    texts = read_items(args.input)
    fisher = args.fisher or args.hints
    truncated = _write_jsonl(
        args.output,
        texts,
        "predict",
        lambda chunk: prediction_records(system, chunk, fisher=fisher, hints=args.hints),
        lambda record: int(record["truncated"]),
    )
    print(f"wrote {len(texts)} predictions to {args.output}")
    if truncated:
        print(
            f'{truncated} text(s) exceeded {system.max_length} tokens and were truncated ("truncated": true)'
        )
    return 0


def _suggest(args: argparse.Namespace) -> int:
    from edits.wordnet import load_wordnet
    from fim_engine.datasets import read_items
    from fim_engine.suggestions import SUGGESTION_SOURCES, suggest_many
    from fim_engine.system import load_system

    names = _model_names(args.model)
    guide = None
    if args.guide is not None:
        if args.guide not in args.model:
            raise ValueError(f"--guide {args.guide} is not one of the --model directories")
        guide = names[args.model.index(args.guide)]
    systems = {
        name: load_system(
            path,
            device=args.device,
            batch_size=args.batch_size,
            max_length=args.max_length,
            precision=args.precision,
            editable=args.editable,
        )
        for name, path in zip(names, args.model, strict=True)
    }
    sources = args.source or list(SUGGESTION_SOURCES)
    wordnet = load_wordnet(args.wordnet) if {"synonym", "antonym"} & set(sources) else None
    texts = read_items(args.input)

    def reports(chunk: list[TextItem]) -> list[dict[str, Any]]:
        found = suggest_many(
            chunk,
            systems,
            guide=guide,
            words=args.words,
            top_k=args.top_k,
            neighbours=args.neighbours,
            sources=sources,
            wordnet=wordnet,
            editable=args.editable,
        )
        return [report.to_dict() for report in found]

    count = _write_jsonl(
        args.output, texts, "suggest", reports, lambda record: len(record["suggestions"])
    )
    what = "texts" if all(isinstance(text, str) for text in texts) else "items"
    print(f"wrote {count} verified suggestions for {len(texts)} {what} to {args.output}")
    return 0


def _write_jsonl(
    path: Path,
    texts: list[Item],
    desc: str,
    records: Callable[[list[Item]], list[dict[str, Any]]],
    tally: Callable[[dict[str, Any]], int],
) -> int:
    """Write ``records(chunk)`` for chunks of ``texts`` as JSON lines, with a progress bar;
    return the sum of ``tally`` over the records."""
    path.parent.mkdir(parents=True, exist_ok=True)
    total = 0
    with (
        path.open("w", encoding="utf-8") as out,
        tqdm(total=len(texts), desc=desc, unit="text") as bar,
    ):
        for start in range(0, len(texts), CHUNK):
            chunk = texts[start : start + CHUNK]
            for record in records(chunk):
                total += tally(record)
                out.write(json.dumps(record, ensure_ascii=False) + "\n")
            bar.update(len(chunk))
    return total


def _model_names(paths: list[Path]) -> list[str]:
    """Each model's directory name, or its path as given where two share a name."""
    names = [path.name or str(path) for path in paths]
    return [
        str(path) if names.count(name) > 1 else name
        for name, path in zip(names, paths, strict=True)
    ]


def _train(args: argparse.Namespace) -> int:
    from fim_engine.datasets import read_labelled, read_labelled_pairs
    from fim_engine.training import PAIR_TRAINABLE, train_system

    if args.arch == "minilm-span":
        return train_span(args)
    pairs = args.arch in PAIR_TRAINABLE
    read = read_labelled_pairs if pairs else read_labelled
    train, dev = read(args.train), read(args.dev)
    print(
        f"{args.arch}: {len(train)} training and {len(dev)} dev {'pairs' if pairs else 'texts'}, "
        f"labels {train.label_names}"
    )
    report = train_system(
        args.arch,
        train,
        dev,
        args.out,
        **training_options(args),
    )
    print(f"dev accuracy: {report.dev_accuracy:.4f} ({len(dev)} {'pairs' if pairs else 'texts'})")
    print(f"wrote {report.architecture} model to {report.out_dir} after {report.steps} steps")
    return 0


def _bench(args: argparse.Namespace) -> int:
    from fim_engine.bench.lambda_max import run_bench

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
        labels=args.labels,
    )
    return _write_figures(args.json, figures)


def _bench_suggest(args: argparse.Namespace) -> int:
    from fim_engine.bench.suggest import run_bench_suggest

    figures = run_bench_suggest(
        data_dir=args.data_dir,
        models_dir=args.models_dir,
        architectures=args.arch or ["bow", "cnn", "minilm"],
        latency_originals=args.latency_originals,
        minilm_steps=args.minilm_steps,
        top_k=args.top_k,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device=args.device,
    )
    return _write_figures(args.json, figures)


def _bench_gpu(args: argparse.Namespace) -> int:
    import torch

    from fim_engine.bench.gpu import grid_for, run_bench_gpu

    device = torch.device(args.device) if args.device else None
    grid = grid_for(
        args.size, device or torch.device("cuda" if torch.cuda.is_available() else "cpu")
    )
    if args.sentences:
        grid.sentences = args.sentences
    if args.precision:
        grid.precisions = args.precision
    figures = run_bench_gpu(grid=grid, data=args.data, device=args.device, budget_s=args.budget_s)
    return _write_figures(args.json, figures)


def _write_figures(path: Path | None, figures: dict[str, Any]) -> int:
    if path is not None:
        path.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
