"""Text to numbered rows: the formats by name (CSV, TSV, JSON Lines, the sst2 line format),
and each record with the line a person sees in their editor."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from bibi.files.errors import FileFormatError
from bibi.files.json_input import JsonRefused, json_field_text, json_parse

FORMATS = ("csv", "tsv", "jsonl", "sst2")
# The sst2 line format has no conventional extension: the 2017 files are stsa.binary.dev etc.
FORMAT_BY_EXTENSION = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".txt": "sst2",
    ".dev": "sst2",
    ".train": "sst2",
    ".test": "sst2",
}
# Only these three end a line. str.splitlines() would also split on U+2028 or U+0085,
# which JSON allows unescaped inside a string and which no editor shows as a line break.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


@dataclass
class Row:
    """One record of a file.

    ``line`` is the 1-based physical line the record starts on, the header being line 1.
    ``error`` says why the record could not be read; ``fields`` is then empty.
    """

    line: int
    fields: dict[str, str]
    error: str | None = None


def detect_format(filename: str, requested: str | None = None) -> str:
    """The file format to read ``filename`` with: ``requested`` if given, else by extension.

    Returns one of ``FORMATS``. Raises ``FileFormatError`` for an unknown format or extension.
    """
    if requested:
        file_format = requested.strip().lower()
        if file_format not in FORMATS:
            raise FileFormatError(
                f"'{requested}' is not a file format: use one of {', '.join(FORMATS)}"
            )
        return file_format
    suffix = PurePath(filename).suffix.lower()
    if suffix in FORMAT_BY_EXTENSION:
        return FORMAT_BY_EXTENSION[suffix]
    known = ", ".join(FORMAT_BY_EXTENSION)
    if suffix == ".json":
        hint = "upload JSON Lines (one object per line, .jsonl) instead of a JSON document"
    else:
        hint = f"name the file with one of {known}, or say which format it is in"
    raise FileFormatError(f"cannot tell the format of '{filename}' from its name: {hint}")


def read_rows(text: str, *, file_format: str, quoted: bool = True) -> list[Row]:
    """Split decoded ``text`` into numbered rows: ``iter_rows``, all at once."""
    return list(iter_rows(text, file_format=file_format, quoted=quoted))


def iter_rows(text: str, *, file_format: str, quoted: bool = True) -> Iterator[Row]:
    """Split decoded ``text`` into numbered rows, one at a time.

    - ``csv``/``tsv``: the first record is the header and names the fields; quoted fields may
      hold delimiters and line breaks (doubled quotes inside). With ``quoted=False`` a quote
      is a character like any other and every line is a record, as in TSV files written
      without quoting (the 2017 shared task's), where a field may begin with a quote.
    - ``jsonl``: one JSON object per line; values become strings (null becomes "").
    - ``sst2``: ``LABEL sentence`` per line, giving the fields ``label`` and ``text``. The
      file has no ids: callers use ``Row.line`` as the id.

    Blank lines are skipped in every format. Raises ``FileFormatError`` when the file cannot
    be read at all (see the module docstring), at once: the header is read before the first
    row is asked for. A broken record is a ``Row`` with ``error``. Rows are made as they are
    asked for, so a caller that keeps only what it needs reads a file of a million rows in
    the memory of one.
    """
    if file_format in ("csv", "tsv"):
        return _read_delimited(text, file_format=file_format, quoted=quoted)
    if file_format == "jsonl":
        return _read_jsonl(text)
    if file_format == "sst2":
        return _read_sst2(text)
    raise FileFormatError(f"'{file_format}' is not a file format: use one of {', '.join(FORMATS)}")


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """The numbered lines of ``text``, broken only where ``LINE_BREAK`` breaks them."""
    # newline="" splits on \r\n, \r and \n alone and keeps them; U+2028 stays inside.
    for number, line in enumerate(io.StringIO(text, newline=""), start=1):
        yield number, line.rstrip("\r\n")


def _read_delimited(text: str, *, file_format: str, quoted: bool = True) -> Iterator[Row]:
    delimiter = "," if file_format == "csv" else "\t"
    # strict: a quote followed by more text ('"Terrific" says it all') is an error to show,
    # not a field whose quotes silently disappear.
    reader = csv.reader(
        io.StringIO(text, newline=""),
        delimiter=delimiter,
        strict=True,
        quoting=csv.QUOTE_MINIMAL if quoted else csv.QUOTE_NONE,
    )
    header: list[str] | None = None
    ended_at = 0
    while header is None:
        starts_at = ended_at + 1
        try:
            record = next(reader)
        except StopIteration:
            raise FileFormatError(
                "the file is empty: it needs a header row naming its columns", line=1
            ) from None
        except csv.Error as error:
            raise FileFormatError(
                f"the header row cannot be read: {_csv_reason(error)}", line=starts_at
            ) from None
        ended_at = reader.line_num
        if record:
            header = _header(record, line=ended_at - _line_breaks(record))
    return _delimited_rows(reader, header, ended_at, file_format=file_format)


def _delimited_rows(
    reader: Any, header: list[str], ended_at: int, *, file_format: str
) -> Iterator[Row]:
    while True:
        starts_at = ended_at + 1
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as error:
            ended_at = reader.line_num
            yield Row(line=starts_at, fields={}, error=_csv_reason(error))
            continue
        # line_num counts physical lines read so far, so a multi-line record starts after
        # the previous record's last line (blank lines in between come back as []).
        ended_at = reader.line_num
        if not record:
            continue
        starts_at = ended_at - _line_breaks(record)
        if len(record) != len(header):
            yield Row(
                line=starts_at,
                fields={},
                error=f"has {len(record)} fields but the header has {len(header)}"
                + delimiter_hint(record, file_format=file_format),
            )
            continue
        yield Row(line=starts_at, fields=dict(zip(header, record, strict=True)))


def _line_breaks(record: list[str]) -> int:
    # No line break spans two fields, so the record's text is counted at once; most
    # records have none, and say so without a regular expression.
    text = "".join(record)
    if "\n" not in text and "\r" not in text:
        return 0
    return len(LINE_BREAK.findall(text))


def _header(record: list[str], *, line: int) -> list[str]:
    names = [name.strip() for name in record]
    if any(not name for name in names):
        raise FileFormatError("the header row has an empty column name", line=line)
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise FileFormatError(
            f"the header row names {', '.join(repeated)} more than once", line=line
        )
    return names


def delimiter_hint(values: list[str], *, file_format: str) -> str:
    """A hint for a record read as one field that the other delimiter would have split."""
    other, name = ("\t", "tabs (TSV)") if file_format == "csv" else (",", "commas (CSV)")
    if file_format in ("csv", "tsv") and len(values) == 1 and other in values[0]:
        return f" (the file looks separated by {name}: is the format right?)"
    return ""


def _csv_reason(error: csv.Error) -> str:
    message = str(error)
    if "unexpected end of data" in message:
        return "a quoted field starting on this line is never closed"
    if "expected after" in message:
        return (
            "a closing quote is followed by more text: quote the whole field and double "
            'the quotes inside it ("")'
        )
    return message


def _read_jsonl(text: str) -> Iterator[Row]:
    for number, line in _lines(text):
        if not line.strip():
            continue
        try:
            value = json_parse(line)
        except JsonRefused as refused:
            yield Row(line=number, fields={}, error=refused.reason)
            continue
        if not isinstance(value, dict):
            yield Row(line=number, fields={}, error="is not a JSON object ({...}) of named fields")
            continue
        yield Row(line=number, fields={str(k): json_field_text(v) for k, v in value.items()})


def _read_sst2(text: str) -> Iterator[Row]:
    for number, line in _lines(text):
        if not line.strip():
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            yield Row(line=number, fields={}, error="has a label but no sentence after it")
            continue
        label, sentence = parts
        yield Row(line=number, fields={"label": label, "text": sentence})
