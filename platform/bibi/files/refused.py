"""The rows a partial upload refused, as a file to download, fix and upload again.

A partial upload stores the rows that pass and lists the others: one CSV record per
refused line, with the rules that refused it (``RowError.kind``), the task settings those
rules read, every reason, and the line as it was in the file.

    >>> print(refused_rows_csv([RowError(2, "too far", "edit_distance")], "h\\nbad row\\n"), end="")
    line,rule,setting,reason,content
    2,edit_distance,,too far,bad row
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable

from bibi.files.errors import RowError
from bibi.files.rows import LINE_BREAK

REFUSED_COLUMNS = ("line", "rule", "setting", "reason", "content")


def refused_rows_csv(errors: Iterable[RowError], text: str) -> str:
    """One CSV record per refused line of ``text`` (line 0: the file as a whole, no content),
    in line order; a line refused for several reasons has them all, separated by "; "."""
    by_line: dict[int, list[RowError]] = {}
    for error in errors:
        by_line.setdefault(error.line, []).append(error)
    lines = LINE_BREAK.split(text)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(REFUSED_COLUMNS)
    for line in sorted(by_line):
        found = by_line[line]
        writer.writerow(
            [
                line,
                "; ".join(dict.fromkeys(e.kind for e in found if e.kind)),
                "; ".join(dict.fromkeys(e.setting for e in found if e.setting)),
                "; ".join(e.reason for e in found),
                lines[line - 1] if 0 < line <= len(lines) else "",
            ]
        )
    return out.getvalue()
