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
  line that is not a JSON object, an sst2 line without a sentence separator.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.core.exceptions import ValidationError

ENCODINGS = ("utf-8", "cp1252", "mac_roman")
# A rejection lists at most this many rows, after a summary of every problem by kind: a
# million-row file of the same mistake must not answer with a million errors.
ERRORS_SHOWN = 200
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


class FileRejected(ValidationError):
    """An upload refused as a whole: nothing was stored.

    ``errors`` lists every problem, in line order (line 0: the file as a whole); ``source``
    names what was read ("pairs.csv", "the JSON list"); ``encoding`` and ``file_format`` are
    what the file was read as, None where reading never got that far. The API answers it
    with one envelope (``bibi.api.rejected_file_response``) whichever app raised it.
    """

    def __init__(
        self,
        errors: Sequence[RowError],
        *,
        source: str = "the file",
        encoding: str | None = None,
        file_format: str | None = None,
    ) -> None:
        self.errors = sorted(errors, key=lambda error: error.line)
        self.source = source
        self.encoding = encoding or None
        self.file_format = file_format or None
        super().__init__([str(error) for error in self.errors[:ERRORS_SHOWN]], code="rejected")

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
    """Split decoded ``text`` into numbered rows.

    - ``csv``/``tsv``: the first record is the header and names the fields; quoted fields may
      hold delimiters and line breaks (doubled quotes inside). With ``quoted=False`` a quote
      is a character like any other and every line is a record, as in TSV files written
      without quoting (the 2017 shared task's), where a field may begin with a quote.
    - ``jsonl``: one JSON object per line; values become strings (null becomes "").
    - ``sst2``: ``LABEL sentence`` per line, giving the fields ``label`` and ``text``. The
      file has no ids: callers use ``Row.line`` as the id.

    Blank lines are skipped in every format. Raises ``FileFormatError`` when the file cannot
    be read at all (see the module docstring); a broken record is a ``Row`` with ``error``.
    """
    if file_format in ("csv", "tsv"):
        return _read_delimited(text, file_format=file_format, quoted=quoted)
    if file_format == "jsonl":
        return _read_jsonl(text)
    if file_format == "sst2":
        return _read_sst2(text)
    raise FileFormatError(f"'{file_format}' is not a file format: use one of {', '.join(FORMATS)}")


def _read_delimited(text: str, *, file_format: str, quoted: bool = True) -> list[Row]:
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
    rows: list[Row] = []
    ended_at = 0
    while True:
        starts_at = ended_at + 1
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            ended_at = reader.line_num
            if header is None:
                raise FileFormatError(
                    f"the header row cannot be read: {_csv_reason(error)}", line=starts_at
                ) from None
            rows.append(Row(line=starts_at, fields={}, error=_csv_reason(error)))
            continue
        # line_num counts physical lines read so far, so a multi-line record starts after
        # the previous record's last line (blank lines in between come back as []).
        ended_at = reader.line_num
        if not record:
            continue
        starts_at = ended_at - _line_breaks(record)
        if header is None:
            header = _header(record, line=starts_at)
            continue
        if len(record) != len(header):
            rows.append(
                Row(
                    line=starts_at,
                    fields={},
                    error=f"has {len(record)} fields but the header has {len(header)}"
                    + delimiter_hint(record, file_format=file_format),
                )
            )
            continue
        rows.append(Row(line=starts_at, fields=dict(zip(header, record, strict=True))))
    if header is None:
        raise FileFormatError("the file is empty: it needs a header row naming its columns", line=1)
    return rows


def _line_breaks(record: list[str]) -> int:
    return sum(len(_LINE_BREAK.findall(value)) for value in record)


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


def _read_jsonl(text: str) -> list[Row]:
    rows: list[Row] = []
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            rows.append(Row(line=number, fields={}, error=f"is not valid JSON: {error.msg}"))
            continue
        if not isinstance(value, dict):
            rows.append(
                Row(line=number, fields={}, error="is not a JSON object ({...}) of named fields")
            )
            continue
        rows.append(Row(line=number, fields={str(k): _as_text(v) for k, v in value.items()}))
    return rows


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _read_sst2(text: str) -> list[Row]:
    rows: list[Row] = []
    for number, line in enumerate(_LINE_BREAK.split(text), start=1):
        if not line.strip():
            continue
        parts = line.strip().split(None, 1)
        if len(parts) < 2:
            rows.append(Row(line=number, fields={}, error="has a label but no sentence after it"))
            continue
        label, sentence = parts
        rows.append(Row(line=number, fields={"label": label, "text": sentence}))
    return rows
