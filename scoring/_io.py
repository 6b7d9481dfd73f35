"""Reading the inputs from CSV or TSV files, chosen by extension."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from scoring.errors import ScoringInputError

SEPARATORS = {".csv": ",", ".tsv": "\t", ".tab": "\t"}
_COMPRESSIONS = {".gz", ".bz2", ".xz", ".zip", ".zst"}


def separator_for(path: Path) -> str:
    """`,` for .csv, a tab for .tsv/.tab, also under a compression suffix (`.csv.gz`)."""
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSIONS:
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in SEPARATORS:
        raise ScoringInputError(f"cannot tell the format of {str(path)!r}: name it .csv or .tsv")
    return SEPARATORS[suffixes[-1]]


def _text_type() -> type:
    return str


def read_table(path: str | Path, what: str = "table", numbers: Sequence[str] = ()) -> pd.DataFrame:
    """Read a CSV or TSV file with every cell as text, except the `numbers` columns.

    Cells stay text so that a label `+1` or a sentence `NA` reach the scorer as written
    (empty cells become ""); the scorer normalizes labels itself. The `numbers` columns
    (lambda_max, weight) are parsed as floats, empty cells as NaN, because parsing millions
    of numbers from text is slow; when one does not parse, the whole file is read as text
    and the scorer names the bad cell. Example: ``read_table("pairs.tsv", "pairs")``.
    """
    path = Path(path)
    separator = separator_for(path)
    if not path.is_file():
        raise ScoringInputError(f"{what} file {str(path)!r} does not exist")
    options: dict[str, Any] = {"sep": separator, "keep_default_na": False}
    try:
        try:
            return pd.read_csv(
                path,
                dtype=defaultdict[str, type](_text_type, dict.fromkeys(numbers, float)),
                na_values=dict.fromkeys(numbers, [""]),
                **options,
            )
        except ValueError:
            return pd.read_csv(path, dtype=str, **options)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ScoringInputError(f"cannot read {what} file {str(path)!r}: {error}") from error


def read_pairs(path: str | Path) -> pd.DataFrame:
    """The pairs file: pair_id, team, original_id, original_text, original_label,
    variant_text, variant_label[, tags]."""
    return read_table(path, "pairs")


def read_predictions(path: str | Path) -> pd.DataFrame:
    """The predictions file: system, text, label[, probabilities, lambda_max]."""
    return read_table(path, "predictions", numbers=("lambda_max",))


def read_weights(path: str | Path) -> pd.DataFrame:
    """The weights file: system, weight."""
    return read_table(path, "weights", numbers=("weight",))
