"""`python -m scoring`: score files from the command line; `python -m scoring bench` times it."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from scoring._io import read_pairs, read_predictions, read_table, read_weights
from scoring.breakers import WEIGHT_MODES
from scoring.breaks import BREAK_RATE_MODES
from scoring.errors import ScoringInputError
from scoring.report import score

# The exit status of argparse for a bad command line; bad input files get the same.
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scoring",
        description=(
            "Score Build It, Break It pairs against builder systems' predictions. "
            "Files are CSV or TSV, chosen by extension. "
            "`python -m scoring bench --help` for the benchmark."
        ),
    )
    parser.add_argument(
        "--pairs",
        required=True,
        type=Path,
        help="pairs file (pair_id, team, "
        "original_id, original_text, original_label, variant_text, "
        "variant_label[, tags])",
    )
    parser.add_argument(
        "--predictions",
        required=True,
        type=Path,
        help="predictions file (system, text, label[, lambda_max])",
    )
    parser.add_argument(
        "--weights",
        type=Path,
        help="system weights file (system, weight), needed with --weight dev_accuracy",
    )
    parser.add_argument(
        "--unseen",
        type=Path,
        help="pairs a system did not see (system, pair_id), left out of its counts",
    )
    parser.add_argument(
        "--weight",
        choices=WEIGHT_MODES,
        default="dev_accuracy",
        help="breaker score weight (default: %(default)s)",
    )
    parser.add_argument(
        "--break-rate",
        choices=BREAK_RATE_MODES,
        default="pairs",
        help="breaks per pair or per sentence (default: %(default)s)",
    )
    parser.add_argument(
        "--labels",
        help="the task's label set, comma-separated, as --labels=-1,1 when a label starts "
        "with a dash (default: the gold labels of the pairs)",
    )
    parser.add_argument(
        "--format",
        choices=("json", "markdown"),
        default="json",
        help="output format (default: %(default)s)",
    )
    parser.add_argument("--out", type=Path, help="output file (default: standard output)")
    return parser  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status (0, or 2 for bad input with a message on stderr)."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["bench"]:
        from scoring.bench import main as bench_main

        return bench_main(arguments[1:])
    options = build_parser().parse_args(arguments)
    try:
        report = score(
            read_pairs(options.pairs),
            read_predictions(options.predictions),
            weights=read_weights(options.weights) if options.weights else None,
            weight=options.weight,
            break_rate=options.break_rate,
            labels=options.labels.split(",") if options.labels else None,
            unseen=read_table(options.unseen, "unseen") if options.unseen else None,
        )
    except ScoringInputError as error:
        print(f"python -m scoring: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    output = report.to_json() + "\n" if options.format == "json" else report.to_markdown()
    if options.out:
        options.out.write_text(output, encoding="utf-8")
    else:
        sys.stdout.write(output)
    return 0
