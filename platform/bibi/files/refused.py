"""The rows a partial upload refused, as a file to download, fix and upload again.

A partial upload stores the rows that pass and lists the others: one CSV record per
refused pair, with the rules that refused it (``RowError.kind``), the task settings those
rules read, every reason, and the pair's lines as they were in the file (both rows of a
2017 pair, one under the other). A CSV or TSV file's header row comes first, as line 1 with
the rule ``header``, so that the file itself uploads again once its rows are fixed
(``refused_file_unfold``): each ``content`` goes back on its ``line``, and the rows of the
upload are numbered as in the first file. Every cell is written by ``bibi.files.csv_out``
(a cell starting like a formula gets a leading ``'``), and taken back off on upload.

    >>> print(refused_rows_csv([RowError(2, "too far", "edit_distance")], "h\\nbad row\\n"), end="")
    line,rule,setting,reason,content
    1,header,,"the file's header row: keep it, to upload this file again",h
    2,edit_distance,,too far,bad row
    >>> refused_file_unfold(refused_rows_csv([RowError(2, "too far")], "h\\nbad row\\n"))
    ('h\\nbad row\\n', 'csv')
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence

from bibi.files.csv_out import csv_writer, restored
from bibi.files.errors import FileFormatError, RowError
from bibi.files.rows import LINE_BREAK

REFUSED_COLUMNS = ("line", "rule", "setting", "reason", "content")
HEADER_RULE = "header"
HEADER_REASON = "the file's header row: keep it, to upload this file again"
# A refused-rows file puts each row back on its line: no line past this (a pair file of the
# 20 MB allowed has fewer), so a hand-edited line number costs at most a megabyte of blanks.
LINE_MAX = 1_000_000


def refused_rows_csv(
    errors: Iterable[RowError],
    text: str,
    *,
    file_format: str = "csv",
    record_lines: Mapping[int, Sequence[int]] | None = None,
) -> str:
    """One CSV record per refused line of ``text`` (line 0: the file as a whole, no content),
    in line order; a line refused for several reasons has them all, separated by "; ".
    ``record_lines``: the other lines of a pair that starts on a line (a 2017 pair's second
    row), quoted with it. A CSV or TSV file's header row comes first (``HEADER_RULE``)."""
    by_line: dict[int, list[RowError]] = {}
    for error in errors:
        by_line.setdefault(error.line, []).append(error)
    lines = LINE_BREAK.split(text)

    def line_text(number: int) -> str:
        return lines[number - 1] if 0 < number <= len(lines) else ""

    out = io.StringIO()
    writer = csv_writer(out, lineterminator="\n")
    writer.writerow(REFUSED_COLUMNS)
    if file_format in ("csv", "tsv") and 1 not in by_line:
        header = next((line for line in lines if line.strip()), "")
        writer.writerow([1, HEADER_RULE, "", HEADER_REASON, header])
    for line in sorted(by_line):
        found = by_line[line]
        numbers = [line, *sorted(set((record_lines or {}).get(line, ())) - {line})]
        writer.writerow(
            [
                line,
                "; ".join(dict.fromkeys(e.kind for e in found if e.kind)),
                "; ".join(dict.fromkeys(e.setting for e in found if e.setting)),
                "; ".join(e.reason for e in found),
                "\n".join(line_text(number) for number in numbers if number > 0),
            ]
        )
    return out.getvalue()


def is_refused_file(text: str) -> bool:
    """Whether ``text`` is a refused-rows file (its header names ``REFUSED_COLUMNS``)."""
    first = next((line for line in io.StringIO(text, newline=None) if line.strip()), "")
    names = tuple(name.strip().strip('"').strip().lower() for name in first.split(","))
    return names == REFUSED_COLUMNS


def refused_file_unfold(text: str) -> tuple[str, str] | None:
    """A refused-rows file (``refused_rows_csv``, fixed or not) as the file it came from:
    its text, each ``content`` back on its ``line`` (a row given no line, or a line already
    taken, goes after the row before it), and that file's format; None when ``text`` is not
    a refused-rows file. Raises ``FileFormatError`` when it cannot be read back."""
    if not is_refused_file(text):
        return None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    placed: list[str] = []  # pieces of the file, each ending a line
    lines = 0
    file_format = ""
    try:
        next(reader)
        for record in reader:
            if not record or not any(cell.strip() for cell in record):
                continue
            if len(record) != len(REFUSED_COLUMNS):
                raise FileFormatError(
                    f"a record has {len(record)} fields, a refused-rows file has "
                    f"{len(REFUSED_COLUMNS)} ({', '.join(REFUSED_COLUMNS)})",
                    line=reader.line_num,
                )
            fields = dict(zip(REFUSED_COLUMNS, record, strict=True))
            content = restored(fields["content"])
            if not content.strip():
                continue
            if not file_format:
                file_format = _inner_format(fields["rule"], content, line=reader.line_num)
            number = _line_number(restored(fields["line"]), line=reader.line_num)
            if number > lines + 1:
                placed.append("\n" * (number - 1 - lines))
                lines = number - 1
            rows = LINE_BREAK.split(content)
            placed.append("".join(f"{row}\n" for row in rows))
            lines += len(rows)
    except csv.Error as error:
        raise FileFormatError(
            f"the refused-rows file cannot be read: {error}", line=reader.line_num
        ) from None
    if not file_format:
        raise FileFormatError("the refused-rows file has no rows to upload", line=1)
    return "".join(placed), file_format


def _inner_format(rule: str, content: str, *, line: int) -> str:
    """The format of the file whose rows were refused, told by the first row kept."""
    if rule.strip() == HEADER_RULE:
        return "tsv" if "\t" in content else "csv"
    if content.lstrip().startswith("{"):
        return "jsonl"
    raise FileFormatError(
        "the refused-rows file has no header row (line 1, rule header) before its rows: "
        "put it back, or upload the fixed rows in a file of their own",
        line=line,
    )


def _line_number(value: str, *, line: int) -> int:
    value = value.strip()
    if not value:
        return 0
    if not value.isdigit() or int(value) > LINE_MAX:
        raise FileFormatError(
            f"the line '{value[:20]}' is not a line number: give the row's line in the file "
            "it was refused from, or leave it empty",
            line=line,
        )
    return int(value)
