"""Tables sorted on the server by a query-string parameter, with headers that say so.

A sortable table names its columns; ``?<param>=f1`` sorts by F1 ascending, ``?<param>=-f1``
descending. Anything else in the parameter (an unknown column, an empty value) leaves the
table in its own order. Each header is a link to the other direction of its column, with
``aria-sort`` on the column the rows are sorted by, so the order is announced and can be
changed from the keyboard without a script.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.http import QueryDict


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    numeric: bool = True
    # Where a larger value is better (F1, a breaker's score) the first click sorts it down.
    high_first: bool = False


@dataclass(frozen=True)
class Header:
    column: Column
    href: str
    aria_sort: str  # "ascending", "descending" or "none"
    next_direction: str


@dataclass(frozen=True)
class SortedTable:
    rows: list[dict[str, Any]]
    headers: list[Header]
    sorted_by: Column | None
    descending: bool


def _key(value: Any, numeric: bool) -> tuple[int, Any]:
    # Empty values (an undefined rate) go last whichever way the table is sorted.
    if value is None or value == "":
        return (1, 0)
    return (0, value if numeric else str(value).casefold())


def sort_table(
    rows: Sequence[dict[str, Any]], columns: Sequence[Column], query: QueryDict, param: str
) -> SortedTable:
    """``rows`` ordered as ``query[param]`` asks, and a header per column linking onwards.

    Other parameters of ``query`` are kept in the links (another table's order, the
    snapshot shown); a page number is dropped, since the order changes what page 1 holds.
    """
    asked = query.get(param, "")
    descending = asked.startswith("-")
    by = {column.key: column for column in columns}.get(asked.lstrip("-"))
    ordered = list(rows)
    if by is not None:
        filled = [row for row in ordered if _key(row.get(by.key), by.numeric)[0] == 0]
        empty = [row for row in ordered if _key(row.get(by.key), by.numeric)[0] == 1]
        filled.sort(key=lambda row: _key(row.get(by.key), by.numeric), reverse=descending)
        ordered = filled + empty
    headers = []
    for column in columns:
        current = by is not None and column.key == by.key
        goes_down = not descending if current else column.high_first
        link = query.copy()
        link.pop("page", None)
        link[param] = f"-{column.key}" if goes_down else column.key
        headers.append(
            Header(
                column=column,
                href=f"?{link.urlencode()}",
                aria_sort=("descending" if descending else "ascending") if current else "none",
                next_direction="descending" if goes_down else "ascending",
            )
        )
    return SortedTable(rows=ordered, headers=headers, sorted_by=by, descending=descending)
