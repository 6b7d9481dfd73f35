"""Bytes to text: which encoding an upload is in (UTF-8, cp1252 or Mac Roman), told apart by
which reading gives plausible text."""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass

from bibi.files.errors import FileFormatError

ENCODINGS = ("utf-8", "cp1252", "mac_roman")
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_HIGH_BYTES = bytes(range(0x80, 0x100))
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# Enough non-ASCII characters to tell the legacy encodings apart: the score of a large file
# is settled long before, and scoring every character would cost a second on 50,000 rows.
_PLAUSIBILITY_SAMPLE = 20_000
# English contractions: what follows an apostrophe inside a word.
_CONTRACTION = re.compile(r"(s|t|d|m|re|ve|ll)(?![^\W\d_])", re.IGNORECASE)
_OPENING = "\"'([{“‘«"
_CLOSING = "\"')]}.,;:!?”’»"


@dataclass(frozen=True)
class DecodedText:
    """An upload's text, NFC-normalized, and the encoding it was found to be in."""

    text: str
    encoding: str


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
