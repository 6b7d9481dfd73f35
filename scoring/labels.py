"""Labels compared as normalized strings, so `1`, `1.0`, `"+1"` and `" 1 "` are one label."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd


def normalize_labels(values: pd.Series | Iterable[object]) -> pd.Series:
    """Return the labels as stripped strings; integral numbers in their plain integer form.

    Input: any values (strings, ints, floats). Output: a Series of the same length (and
    index, when given a Series) of `str` or missing values; empty strings become missing.
    Spreadsheets and pandas turn `+1` into `1` and `1` into `1.0` (an int column with a
    gap becomes float), so numbers are compared by value, everything else by text.

    >>> normalize_labels(["+1", -1, "1.0", " pos ", ""]).tolist()
    ['1', '-1', '1', 'pos', nan]
    """
    series = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    # Work on the distinct values only: a prediction file repeats a handful of labels
    # millions of times.
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    text = pd.Series(np.asarray(uniques, dtype=object).astype(str), dtype=object).str.strip()
    number = pd.to_numeric(text, errors="coerce")
    integral = number.notna() & np.isfinite(number) & (number == np.round(number))
    text[integral] = number[integral].astype(np.int64).astype(str)
    text[text == ""] = np.nan
    normalized = np.append(text.to_numpy(dtype=object), np.nan)
    # The sentinel -1 picks the appended NaN.
    return pd.Series(normalized[codes], index=series.index, dtype=object)


def sort_labels(labels: Iterable[str]) -> list[str]:
    """Numbers by value first, then other labels alphabetically: `['-1', '1', 'neutral']`.

    >>> sort_labels(["10", "pos", "2", "-1"])
    ['-1', '2', '10', 'pos']
    """

    def key(label: str) -> tuple[int, float, str]:
        try:
            return (0, float(label), label)
        except ValueError:
            return (1, 0.0, label)

    return sorted(set(labels), key=key)
