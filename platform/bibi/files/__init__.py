"""Reading the files organizers and teams upload: bytes to text, text to numbered rows.

Pure functions, no models: the example importer and the pair-set submission both build on
them, so a file is decoded, split and numbered the same way everywhere, and a row error
names the same line a person sees in their editor.

    >>> decoded = decode_upload("id,text,label\\n1,Un film très réussi,1\\n".encode("cp1252"))
    >>> decoded.encoding
    'cp1252'
    >>> read_rows(decoded.text, file_format=detect_format("dev.csv"))
    [Row(line=2, fields={'id': '1', 'text': 'Un film très réussi', 'label': '1'}, error=None)]

Which problems stop the whole file and which are reported per row:

- ``FileFormatError`` (raised): the file cannot be read at all. It is empty, its bytes are
  in none of the supported encodings, its name has no known format, or its header row is
  unusable (an empty or repeated column name).
- A row with ``error`` set (returned): one record is broken but the others can still be
  read, so every broken record is reported at once. A CSV/TSV record with more or fewer
  fields than the header, a quote that is never closed or is followed by more text, a JSONL
  line that is not a JSON object (or holds what no text column can store, see
  ``json_parse``), an sst2 line without a sentence separator.

A refusal counts every problem but keeps only what it shows (``RowErrors``), so a file of a
million bad rows costs a few hundred error objects, not a million.
"""

from __future__ import annotations

import csv
import heapq
import io
import itertools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.core.exceptions import ValidationError

from bibi.texts import unstorable_characters

ENCODINGS = ("utf-8", "cp1252", "mac_roman")
# A rejection lists at most this many rows, after a summary of every problem by kind: a
# million-row file of the same mistake must not answer with a million errors.
ERRORS_SHOWN = 200
# A summary groups this many distinct messages; the rest are counted together.
MESSAGES_GROUPED = 200
# Line numbers kept, over all groups, to say where each message occurs.
LINES_KEPT = 20_000
# Line ranges named in one group before "and N more".
RANGES_SHOWN = 50
# Nesting no upload or request body needs: a pair set is a list of objects with a list of
# tags. Deeper input is refused before it costs a recursion.
JSON_MAX_DEPTH = 32
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

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")

_HIGH_BYTES = bytes(range(0x80, 0x100))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# Enough non-ASCII characters to tell the legacy encodings apart: the score of a large file
# is settled long before, and scoring every character would cost a second on 50,000 rows.
_PLAUSIBILITY_SAMPLE = 20_000

# Only these three end a line. str.splitlines() would also split on U+2028 or U+0085,
# which JSON allows unescaped inside a string and which no editor shows as a line break.
_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# English contractions: what follows an apostrophe inside a word.
_CONTRACTION = re.compile(r"(s|t|d|m|re|ve|ll)(?![^\W\d_])", re.IGNORECASE)

_OPENING = "\"'([{“‘«"
_CLOSING = "\"')]}.,;:!?”’»"


class FileFormatError(ValueError):
    """The file as a whole cannot be read. ``line`` is where reading stopped, if anywhere."""

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {reason}" if line is not None else reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class DecodedText:
    """An upload's text, NFC-normalized, and the encoding it was found to be in."""

    text: str
    encoding: str


@dataclass
class Row:
    """One record of a file.

    ``line`` is the 1-based physical line the record starts on, the header being line 1.
    ``error`` says why the record could not be read; ``fields`` is then empty.
    """

    line: int
    fields: dict[str, str]
    error: str | None = None


@dataclass(frozen=True)
class RowError:
    """A problem with one row, for the person who has to fix the file. Line 0 is the file."""

    line: int
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


@dataclass(frozen=True)
class ErrorGroup:
    """Every row with one message: how many, and on which lines ("2–246, 300")."""

    reason: str
    count: int
    lines: str


class RowErrors:
    """The problems of one file: every one counted, kept only as far as a refusal shows them.

    Keeps the ``ERRORS_SHOWN`` errors with the lowest lines, and for each distinct message
    its count and where it occurs (``LINES_KEPT`` line numbers in all). Past
    ``MESSAGES_GROUPED`` distinct messages, new ones are counted in one group. So a
    predictions file of nine million wrong rows costs a few hundred objects here.
    """

    OTHER = "other problems (too many different messages to group them)"

    def __init__(self, errors: Iterable[RowError] = ()) -> None:
        self.count = 0
        # A max-heap of the lowest lines (negated), the order of arrival breaking ties.
        self._first: list[tuple[int, int, RowError]] = []
        self._counts: dict[str, int] = {}
        self._lines: dict[str, list[int]] = {}
        self._lines_kept = 0
        self.extend(errors)

    def add(self, line: int, reason: str) -> None:
        self.count += 1
        if len(self._first) < ERRORS_SHOWN:
            heapq.heappush(self._first, (-line, -self.count, RowError(line, reason)))
        elif (-line, -self.count) > self._first[0][:2]:
            heapq.heapreplace(self._first, (-line, -self.count, RowError(line, reason)))
        if reason not in self._counts and len(self._counts) >= MESSAGES_GROUPED:
            reason = self.OTHER
        self._counts[reason] = self._counts.get(reason, 0) + 1
        if self._lines_kept < LINES_KEPT:
            self._lines.setdefault(reason, []).append(line)
            self._lines_kept += 1

    def extend(self, errors: Iterable[RowError]) -> None:
        for error in errors:
            self.add(error.line, error.reason)

    def __len__(self) -> int:
        return self.count

    # Read as a list, it is the list of the errors kept (``first``): all of them up to
    # ``ERRORS_SHOWN``, then the first that many; ``len`` counts them all.
    def __iter__(self) -> Iterator[RowError]:
        return iter(self.first)

    def __getitem__(self, index: int) -> RowError:
        return self.first[index]

    def __bool__(self) -> bool:
        return self.count > 0

    @property
    def first(self) -> list[RowError]:
        """The errors with the lowest lines, in line order (then in the order found)."""
        return [error for _, _, error in sorted(self._first, key=lambda e: (-e[0], -e[1]))]

    def groups(self) -> list[ErrorGroup]:
        """One group per message, most frequent first (ties: the one found first)."""
        groups = []
        for reason, count in self._counts.items():
            lines = sorted(set(self._lines.get(reason, [])))
            where = _line_ranges(lines) if lines else ""
            if len(self._lines.get(reason, [])) < count:
                where = f"{where} and other lines" if where else "lines not kept"
            groups.append(ErrorGroup(reason=reason, count=count, lines=where))
        return sorted(groups, key=lambda group: -group.count)


def _line_ranges(lines: Sequence[int]) -> str:
    ranges: list[str] = []
    start = previous = lines[0]
    for line in [*lines[1:], None]:
        if line is not None and line == previous + 1:
            previous = line
            continue
        ranges.append(str(start) if start == previous else f"{start}–{previous}")
        if line is not None:
            start = previous = line
    shown = ", ".join(ranges[:RANGES_SHOWN])
    hidden = len(ranges) - RANGES_SHOWN
    return f"{shown} and {hidden} more" if hidden > 0 else shown


class FileRejected(ValidationError):
    """An upload refused as a whole: nothing was stored.

    ``problems`` counts every problem and groups them by message (``RowErrors``); ``errors``
    lists the first ``ERRORS_SHOWN`` in line order (line 0: the file as a whole), and
    ``error_count`` how many there are in all. ``source`` names what was read
    ("pairs.csv", "the JSON list"); ``encoding`` and ``file_format`` are what the file was
    read as, None where reading never got that far. The API answers it with one envelope
    (``bibi.api.rejected_file_response``) whichever app raised it.
    """

    def __init__(
        self,
        errors: Iterable[RowError] | RowErrors,
        *,
        source: str = "the file",
        encoding: str | None = None,
        file_format: str | None = None,
    ) -> None:
        self.problems = errors if isinstance(errors, RowErrors) else RowErrors(errors)
        self.errors = self.problems.first
        self.error_count = len(self.problems)
        self.source = source
        self.encoding = encoding or None
        self.file_format = file_format or None
        super().__init__([str(error) for error in self.errors], code="rejected")

    @classmethod
    def from_format_error(cls, error: FileFormatError, **kwargs: Any) -> FileRejected:
        return cls([RowError(line=error.line or 0, reason=error.reason)], **kwargs)


def decode_upload(data: bytes) -> DecodedText:
    """Decode an uploaded file: UTF-8 (with or without BOM), else cp1252 or Mac Roman.

    Both legacy encodings agree on ASCII and decode any byte string (cp1252 all but five
    bytes), so the choice is made by which reading gives plausible text; see
    ``_plausibility``. Raises ``FileFormatError`` for UTF-16 or binary data, and for a file
    that is mostly UTF-8 but broken somewhere, which a legacy reading would silently turn
    into mojibake.
    """
    if data.startswith(_UTF16_BOMS):
        raise FileFormatError(
            "the file is in UTF-16: save it as UTF-8 (or cp1252 or Mac Roman) and upload it again",
            line=1,
        )
    if b"\x00" in data:
        # No text encoding offered here has NUL bytes; spreadsheets and archives do.
        raise FileFormatError(
            "the file is not text (it has NUL bytes): export it as CSV, TSV or JSON Lines",
            line=data.count(b"\n", 0, data.index(b"\x00")) + 1,
        )
    if data.startswith(_UTF8_BOM):
        try:
            return _decoded(data[len(_UTF8_BOM) :].decode("utf-8"), "utf-8")
        except UnicodeDecodeError as error:
            raise _broken_utf8(data, error) from None
    try:
        return _decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as error:
        if _mostly_utf8(data):
            raise _broken_utf8(data, error) from None

    try:
        as_cp1252 = data.decode("cp1252")
    except UnicodeDecodeError:
        # cp1252 leaves 0x81, 0x8D, 0x8F, 0x90 and 0x9D undefined; Mac Roman uses every byte.
        return _decoded(data.decode("mac_roman"), "mac_roman")
    as_mac_roman = data.decode("mac_roman")
    # A tie goes to cp1252: Windows files are far more common than classic Mac ones.
    if _plausibility(as_mac_roman) > _plausibility(as_cp1252):
        return _decoded(as_mac_roman, "mac_roman")
    return _decoded(as_cp1252, "cp1252")


def _decoded(text: str, encoding: str) -> DecodedText:
    return DecodedText(text=unicodedata.normalize("NFC", text), encoding=encoding)


def _mostly_utf8(data: bytes) -> bool:
    """True when most non-ASCII bytes form valid UTF-8 sequences, as in a damaged UTF-8 file.

    In cp1252 or Mac Roman text a non-ASCII byte is almost always a lone accented letter or
    curly quote between ASCII characters, which is never a UTF-8 sequence.
    """
    ascii_bytes = len(data.translate(None, _HIGH_BYTES))
    high = len(data) - ascii_bytes
    # Dropping what is not UTF-8 leaves the ASCII bytes and the valid sequences.
    valid = data.decode("utf-8", errors="ignore")
    sequences = len(valid) - ascii_bytes
    in_sequences = len(valid.encode("utf-8")) - ascii_bytes
    return sequences >= 2 and in_sequences >= 2 * (high - in_sequences)


def _broken_utf8(data: bytes, error: UnicodeDecodeError) -> FileFormatError:
    offset = error.start + (len(_UTF8_BOM) if data.startswith(_UTF8_BOM) else 0)
    line = data.count(b"\n", 0, offset) + 1
    return FileFormatError(
        f"the file is UTF-8 but this line has bytes that are not (byte {data[offset]:#04x}): "
        "the file was probably pasted together from differently encoded parts; "
        "save it again as UTF-8",
        line=line,
    )


def _plausibility(text: str) -> int:
    """Score how much the non-ASCII characters of ``text`` look like real prose.

    A wrong legacy reading turns letters into symbols or capitals in the middle of words
    ("cafŽ", "donÕt", "na•ve" for Mac Roman read as cp1252; "cafÈ", "wellÖ", "hit ñ miss"
    for cp1252 read as Mac Roman), and punctuation into letters where no letter goes. Each
    non-ASCII character scores by what it is and what stands on either side of it.
    """
    score = 0
    for match in itertools.islice(_NON_ASCII.finditer(text), _PLAUSIBILITY_SAMPLE):
        index, char = match.start(), match.group()
        before = text[index - 1] if index > 0 else " "
        after = text[index + 1] if index + 1 < len(text) else " "
        score += _char_plausibility(char, before, after, text, index)
    return score


def _char_plausibility(char: str, before: str, after: str, text: str, index: int) -> int:
    if unicodedata.category(char) in ("Ll", "Lu", "Lt"):
        # The accented letters of Western European text are all in Latin-1; the letters
        # beyond it that cp1252 has (š, ž, Ÿ, ƒ, ...) sit where Mac Roman keeps ö, û, ü, É.
        return _letter_plausibility(char, before, after) - (ord(char) > 0xFF)
    if char in "’'":
        if before.isalpha() and after.isalpha():
            return 2 if _CONTRACTION.match(text, index + 1) else 1
        return 1 if after.isspace() or after in _CLOSING or before.isspace() else -1
    if char in "‘“«":
        return 1 if (before.isspace() or before in _OPENING) and not after.isspace() else -1
    if char in "”»":
        return 1 if not before.isspace() and (after.isspace() or after in _CLOSING) else -1
    if char in "–—":
        if before.isspace() and after.isspace():
            return 1
        if before.isdigit() and after.isdigit():
            return 1
        return 1 if char == "—" and before.isalpha() and after.isalpha() else -1
    if char == "…":
        # "…cole" is "École" misread; an ellipsis otherwise goes anywhere.
        return 0 if before.isspace() and after.isalpha() else 1
    # Any other symbol glued between two letters ("na•ve", "brˆl") is a misread letter.
    if before.isalpha() and after.isalpha():
        return -2
    return 0


def _letter_plausibility(char: str, before: str, after: str) -> int:
    alone = not before.isalpha() and not after.isalpha()
    if alone:
        # "à la", "vis-à-vis": the one accented word of a letter that English borrows.
        # Any other lone accented letter ("hit ñ miss", "wait É what") is a misread dash
        # or ellipsis.
        return 1 if char in "àÀ" else -1
    if char.islower():
        # Inside a word is where accented letters go, but not before a capital ("ƒCOLE").
        return -1 if after.isupper() else 1
    if before.islower():
        return -2
    return 1


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
    """The numbered lines of ``text``, broken only where ``_LINE_BREAK`` breaks them."""
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
    return len(_LINE_BREAK.findall(text))


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
        yield Row(line=number, fields={str(k): _as_text(v) for k, v in value.items()})


class JsonRefused(ValueError):
    """JSON that bibi does not take. ``reason`` says why in a phrase that follows "line N:"
    or the name of what was read; ``fields`` maps the path of each string at fault
    (``pairs[2].variant_text``) to what is wrong with it, when that is why."""

    def __init__(self, reason: str, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fields = fields or {}


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def json_parse(text: str | bytes, *, max_depth: int = JSON_MAX_DEPTH) -> Any:
    """Parse ``text`` as JSON whose every string a database can store.

    Raises ``JsonRefused`` for text that is not JSON (``NaN`` and ``Infinity`` included),
    that nests arrays and objects deeper than ``max_depth``, or that has a string or key
    holding NUL or a lone surrogate (``"\u0000"``, ``"\ud800"``): PostgreSQL refuses the
    first and no UTF-8 text holds the second, so they would fail far from where they came in.
    """
    try:
        value = json.loads(text, parse_constant=_not_a_number)
    except json.JSONDecodeError as error:
        raise JsonRefused(f"is not valid JSON: {error.msg}") from None
    except ValueError as error:
        raise JsonRefused(f"is not valid JSON: {error}") from None
    except RecursionError:
        raise JsonRefused(f"nests arrays or objects deeper than {max_depth} levels") from None
    fields: dict[str, list[str]] = {}
    # Depth first, one iterator per open container: a list of a million objects costs no
    # more to walk than one object.
    stack: list[Iterator[tuple[str, Any]]] = [iter([("", value)])]
    while stack and len(fields) < ERRORS_SHOWN:
        for path, item in stack[-1]:
            if isinstance(item, str):
                _unstorable(item, path, fields, what="holds")
            elif isinstance(item, dict | list):
                if len(stack) > max_depth:
                    raise JsonRefused(f"nests arrays or objects deeper than {max_depth} levels")
                stack.append(_json_children(item, path, fields))
                break
        else:
            stack.pop()
    if fields:
        described = [
            f'"{path}" {problems[0]}' if path else problems[0]
            for path, problems in sorted(fields.items())
        ]
        more = f" (and {len(described) - 3} more)" if len(described) > 3 else ""
        raise JsonRefused("; ".join(described[:3]) + more, fields)
    return value


def _json_children(
    item: dict[str, Any] | list[Any], path: str, fields: dict[str, list[str]]
) -> Iterator[tuple[str, Any]]:
    if isinstance(item, list):
        for index, child in enumerate(item):
            yield f"{path}[{index}]", child
        return
    for key, child in item.items():
        name = f"{path}.{_path_key(key)}" if path else _path_key(key)
        _unstorable(key, name, fields, what="has a name that holds")
        yield name, child


def _path_key(key: str) -> str:
    # The name of a field at fault may hold the very character that is refused.
    return json.dumps(key)[1:-1] if unstorable_characters(key) else key


def _unstorable(text: str, path: str, fields: dict[str, list[str]], *, what: str) -> None:
    found = unstorable_characters(text)
    if found:
        fields.setdefault(path, []).append(f"{what} {', '.join(found)}, which cannot be stored")


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


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
