"""Plain GitHub-flavoured Markdown tables, without an extra dependency."""

from __future__ import annotations

import math

import pandas as pd


def _cell(value: object, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    # A pipe or a line break inside a cell would end it.
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame, digits: int = 2) -> str:
    """Render a frame (its columns, not its index) as a Markdown table; floats rounded.

    >>> print(markdown_table(pd.DataFrame({"system": ["a|b"], "f1": [0.5]})))
    | system | f1 |
    | --- | ---: |
    | a\\|b | 0.50 |
    """
    header = "| " + " | ".join(_cell(column, digits) for column in frame.columns) + " |"
    align = (
        "| "
        + " | ".join(
            "---:" if pd.api.types.is_numeric_dtype(frame[column]) else "---"
            for column in frame.columns
        )
        + " |"
    )
    rows = [
        "| " + " | ".join(_cell(value, digits) for value in row) + " |"
        for row in frame.astype(object).itertuples(index=False)
    ]
    return "\n".join([header, align, *rows])
