"""Every CSV file the platform writes, written one way: cells a spreadsheet will not run.

A text cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is
prefixed with ``'``, so that a spreadsheet shows it instead of running it as a formula
(``=HYPERLINK(...)``, ``+cmd|...``, ``@SUM(...)``, ``-2+3+cmd``). Plain numbers such as the
label ``-1`` are left as they are: they cannot be formulas. A cell that already begins with
``'`` followed by one of those characters gets one more ``'``, so the prefix can always be
taken off again: ``restored(neutralized(text)) == text`` for every text, which is how a file
the platform wrote (the rows a partial upload refused) uploads back as the breaker's text.

    >>> neutralized("=HYPERLINK(1)"), neutralized("-1"), neutralized("'=1"), neutralized("ok")
    ("'=HYPERLINK(1)", '-1', "''=1", 'ok')
    >>> restored("'=HYPERLINK(1)"), restored("''=1"), restored("'quoted'")
    ('=HYPERLINK(1)', "'=1", "'quoted'")

``csv_writer`` is the one ``csv.writer`` of ``platform/``: exports, the refused rows, votes,
anything a person downloads goes through it. Files the platform writes only for its own
importers (the demo's and the benchmark's data, never downloaded) pass ``neutralize=False``:
they are read back as they are.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
# What ``neutralized`` prefixed: one or more quotes, then a formula's first character.
_PREFIXED = re.compile(r"^'+[=+\-@\t\r]")


def neutralized(value: Any) -> Any:
    """A cell a spreadsheet will not run: text starting like a formula (after any quotes)
    gets a leading '; anything else is returned as it is."""
    if not isinstance(value, str) or _PLAIN_NUMBER.match(value):
        return value
    if value.lstrip("'").startswith(FORMULA_START):
        return "'" + value
    return value


def restored(value: str) -> str:
    """The text ``neutralized`` was given: one leading ' taken off where it put one."""
    return value[1:] if _PREFIXED.match(value) else value


class CsvWriter:
    """``csv.writer`` with every cell passed through ``neutralized`` (None: an empty cell)."""

    def __init__(self, out: Any, *, neutralize: bool = True, **options: Any) -> None:
        self._writer = csv.writer(out, **options)
        self._neutralize = neutralize

    def writerow(self, row: Iterable[Any]) -> Any:
        cells = ["" if cell is None else cell for cell in row]
        if self._neutralize:
            cells = [neutralized(cell) for cell in cells]
        return self._writer.writerow(cells)

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(out: Any, *, neutralize: bool = True, **options: Any) -> CsvWriter:
    """A writer of CSV records to ``out`` (``csv.writer``'s options); see the module."""
    return CsvWriter(out, neutralize=neutralize, **options)


def csv_text(
    header: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    *,
    lineterminator: str = "\r\n",
    neutralize: bool = True,
    **options: Any,
) -> str:
    """A whole CSV file: ``header``, then ``rows``."""
    buffer = io.StringIO()
    writer = csv_writer(buffer, neutralize=neutralize, lineterminator=lineterminator, **options)
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()
