"""Pair-set files and JSON lists: which field means what.

Files are decoded and split into numbered rows by ``bibi.files`` (UTF-8,
cp1252 or Mac Roman; CSV, TSV or JSON Lines; NFC), exactly as the example importer does;
this module only gives the rows their meaning, in one of the layouts the task types declare
(``PairLayout``), told apart by their column names (matched ignoring case and edge spaces):

``pairs`` (one pair per row)
    ``original_id``     the original's id in the starter set (or give ``original_text``)
    ``original_text``   optional: must then equal the starter example's text
    ``original_label``  optional: must then equal the starter example's label
    ``variant_text``    the edited sentence
    ``variant_label``   the variant's gold label
    ``rationale``       optional: why the edit should be hard for systems
    ``tags``            optional strategy tags, separated by ``;`` (in JSON Lines or the
                        JSON API also a list)

``sst2017`` (the 2017 shared task's files: two rows per pair)
    ``sentence_id``     ``<id>_a`` for the original, ``<id>_b`` for its variant
    ``sentence``        the text
    ``label``           its gold label (``sentiment_label`` in the files the organizers
                        released: either name, not both)
    ``rationale``, ``tags``  optional, on either row (two rationales are joined)

    In this layout ``<id>`` names the pair, not a starter example: the original is found in
    the starter set by its text, and its given label must be the example's.

    A TSV file in this layout is read as the 2017 files were written, without quoting: every
    character between two tabs is text, so a sentence may begin with a quote
    (``"Terrific" says it all.``). A field written CSV-style (wrapped in quotes, inner quotes
    doubled) is refused with a hint; such a file reads as CSV. Self-reported predictions
    in the 2017 files' shape are read the same way: ``bibi.files.layout2017``. A row that repeats an earlier
    row's ``sentence_id`` with the same content (after normalization) is read once, with a
    warning naming both lines; with different content it is an error naming both lines.

``span_pairs`` (span tasks: one pair per row, told by its ``variant_answers`` column)
    ``original_id``      the original's id in the starter set (or ``original_text`` with
                         ``question``: a sentence has several questions)
    ``original_text``    optional: must then equal the starter example's text
    ``question``         optional: must then be the original's question (it never changes)
    ``variant_text``     the edited sentence
    ``variant_answers``  its answers: texts joined by `` ### ``, or a JSON list of texts or
                         ``{"start", "end"}`` objects (``bibi.tasktypes.span_extraction.answers``); empty:
                         the original's answers, found again in the variant
    ``rationale``, ``tags``  as in ``pairs``

Labels in the label layouts may be the task's own or anything a label map translates, such as
the 2017 files' ``1``/``-1``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bibi.files import (
    FileFormatError,
    JsonRefused,
    Row,
    RowError,
    RowErrors,
    decode_upload,
    detect_format,
    json_parse,
)
from bibi.files.layout2017 import csv_quoted_problem, read_2017_aware, reads_as_written
from bibi.files.refused import refused_file_unfold
from bibi.tasktypes.registry import task_types
from bibi.tasktypes.rules import PairInput
from bibi.texts import normalize_text


@dataclass(frozen=True)
class PairLayout:
    """One layout of pair files and JSON pairs: its ``columns``, those it ``requires``, the
    ``markers`` that tell it from the others (tried by ``rank``, lowest first; ``pairs``
    is the layout of files that have none of the others' markers) and the
    ``PairInput`` field each column fills where the names differ (``renames``)."""

    name: str
    columns: tuple[str, ...]
    requires: tuple[str, ...]
    markers: tuple[str, ...] = ()
    rank: int = 5
    renames: Mapping[str, str] = field(default_factory=dict)
    # One pair per row, with its original named by one of these columns (its id, or its texts).
    by_original: bool = True
    names_original: tuple[str, ...] = ("original_id", "original_text")

    def __hash__(self) -> int:
        return hash(self.name)

    def described(self) -> str:
        return f"{self.name} ({', '.join(self.columns)})"


PAIRS = PairLayout(
    "pairs",
    columns=(
        "original_id",
        "original_text",
        "original_label",
        "variant_text",
        "variant_label",
        "rationale",
        "tags",
    ),
    requires=("variant_text", "variant_label"),
    markers=("variant_text",),
    rank=9,
)
SST2017 = PairLayout(
    "sst2017",
    columns=("sentence_id", "sentence", "label", "sentiment_label", "rationale", "tags"),
    requires=("sentence_id", "sentence", "label"),
    markers=("sentence_id",),
    rank=0,
    by_original=False,
)
# Span tasks: a variant_answers column makes the layout span_pairs (no labels).
SPAN_PAIRS = PairLayout(
    "span_pairs",
    columns=(
        "original_id",
        "original_text",
        "question",
        "variant_text",
        "variant_answers",
        "rationale",
        "tags",
    ),
    requires=("variant_text", "variant_answers"),
    markers=("variant_answers",),
    rank=1,
)

_SIDE = re.compile(r"(.+)_([ab])", re.IGNORECASE | re.DOTALL)
_TAG_LIST = re.compile(r"[;,]")


@dataclass
class PairFile:
    """What a file holds: pairs to check, and rows that could not even be read.

    ``pair_count`` is how many pairs the readable rows make (the rows, or half of them in
    the 2017 layout), known even when ``pairs`` were left unread. ``text`` is the decoded
    file, for the refused rows of a partial upload to quote.
    """

    layout: str
    file_format: str
    encoding: str
    pairs: list[PairInput] = field(default_factory=list)
    errors: RowErrors = field(default_factory=RowErrors)
    warnings: list[RowError] = field(default_factory=list)
    pair_count: int = 0
    text: str = ""
    # The other lines of a pair that starts on a line (a 2017 pair's second row), by that line.
    record_lines: dict[int, tuple[int, ...]] = field(default_factory=dict)


def split_tags(value: Any) -> tuple[str, ...]:
    """Tags from ``"semantics; pragmatics"``, a JSON list, or a list: stripped, non-empty."""
    if isinstance(value, list | tuple):
        items = [str(item) for item in value]
    else:
        text = str(value or "").strip()
        items = []
        if text.startswith("["):
            # JSON Lines files come through the row reader with lists already as JSON text.
            try:
                parsed = json_parse(text)
            except JsonRefused:
                parsed = None
            if isinstance(parsed, list):
                items = [str(item) for item in parsed]
        if not items:
            items = _TAG_LIST.split(text)
    return tuple(item.strip() for item in items if item.strip())


def pair_input_from_fields(
    row: int, fields: Mapping[str, Any], layout: PairLayout = PAIRS
) -> PairInput:
    """A pair in a one-pair-per-row ``layout``, from one file row or one JSON object."""
    fields = {layout.renames.get(name, name): value for name, value in fields.items()}

    def text(name: str) -> str:
        value = fields.get(name)
        return "" if value is None else str(value)

    return PairInput(
        row=row,
        original_id=text("original_id"),
        original_text=text("original_text"),
        original_label=text("original_label"),
        variant_text=text("variant_text"),
        variant_label=text("variant_label"),
        rationale=text("rationale"),
        tags=split_tags(fields.get("tags")),
        question=text("question"),
        variant_answers=_answers_field(fields.get("variant_answers")),
        original_text_b=text("original_text_b"),
        variant_text_b=text("variant_text_b"),
    )


def _answers_field(value: Any) -> str:
    """A span pair's answers as one field: a JSON API list becomes its JSON text."""
    if isinstance(value, list | tuple):
        return json.dumps(list(value), ensure_ascii=False)
    return "" if value is None else str(value)


def read_pair_file(
    data: bytes,
    *,
    filename: str,
    file_format: str | None = None,
    max_pairs: int | None = None,
    layouts: Sequence[PairLayout] = (PAIRS, SST2017),
) -> PairFile:
    """Decode and read a pair-set file.

    Raises ``FileFormatError`` when the file cannot be read at all (encoding, format, no
    rows, unknown or missing columns); rows that cannot be read are ``PairFile.errors``.
    With ``max_pairs``, a file of more pairs than that is only counted
    (``PairFile.pair_count``), its pairs left unread: the caller refuses it by its count.
    ``layouts`` are the task type's: the file's layout is told among every type's (so a
    file for another type says so), and one none has names the task's in its refusal.
    """
    file_format = detect_format(filename, file_format)
    if file_format == "sst2":
        raise FileFormatError(
            "the 'LABEL sentence' line format has no ids, so it cannot say which original a "
            "variant belongs to: upload CSV, TSV or JSON Lines (see the pair-set layouts)"
        )
    decoded = decode_upload(data)
    text = decoded.text
    # The rows a partial upload refused, downloaded and fixed: the file they came from.
    if file_format == "csv" and (unfolded := refused_file_unfold(text)) is not None:
        text, file_format = unfolded
    quoted = not reads_as_written(text, file_format=file_format)
    # Read twice (columns, then pairs) rather than kept, row by row: a file of a million
    # rows costs the memory of one until its pairs are known to be few enough.
    rows = read_2017_aware(text, file_format=file_format)

    columns, readable, errors = _survey(rows(), file_format=file_format)
    layout = _layout(columns, file_format=file_format, layouts=layouts)
    result = PairFile(
        layout=layout.name,
        file_format=file_format,
        encoding=decoded.encoding,
        pair_count=readable if layout.by_original else (readable + 1) // 2,
        errors=errors,
        text=text,
    )
    if max_pairs is not None and result.pair_count > max_pairs:
        return result
    normalized = (
        Row(line=row.line, fields={k.strip().lower(): v for k, v in row.fields.items()})
        for row in rows()
        if row.error is None
    )
    if layout.by_original:
        result.pairs = [pair_input_from_fields(row.line, row.fields, layout) for row in normalized]
    else:
        result.pairs, layout_errors, result.warnings, result.record_lines = _read_sst2017(
            list(normalized), quoted=quoted
        )
        errors.extend(layout_errors)
    return result


def _survey(rows: Iterator[Row], *, file_format: str) -> tuple[dict[str, int], int, RowErrors]:
    """The columns the rows name, with where each is first named (the header, line 1, of a
    CSV or TSV file; the first line that has the field in JSON Lines), how many rows are
    readable, and the errors of those that are not. Raises when there are no rows at all."""
    errors = RowErrors()
    columns: dict[str, int] = {}
    read = readable = 0
    for row in rows:
        read += 1
        if row.error is not None:
            errors.add(row.line, row.error)
            continue
        readable += 1
        for name in row.fields:
            columns.setdefault(name.strip().lower(), 1 if file_format != "jsonl" else row.line)
    if not read:
        raise FileFormatError("the file has no pairs", line=1)
    return columns, readable, errors


def _layout(
    columns: Mapping[str, int], *, file_format: str, layouts: Sequence[PairLayout]
) -> PairLayout:
    """Which layout the column names say; raises FileFormatError for unknown columns."""
    if not columns:
        # Every row was unreadable: the row errors say why, the layout does not matter.
        return layouts[0]
    known_layouts = sorted({*all_layouts(), *layouts}, key=lambda layout: layout.rank)
    layout = next((each for each in known_layouts if any(m in columns for m in each.markers)), None)
    if layout is None:
        raise FileFormatError(
            "cannot tell the file's layout from its columns: give "
            + " or ".join(each.described() for each in layouts),
            line=1,
        )
    unknown = sorted(name for name in columns if name not in layout.columns)
    if unknown:
        what = "field" if file_format == "jsonl" else "column"
        raise FileFormatError(
            f"unknown {what}(s) {', '.join(repr(name[:60]) for name in unknown[:10])}: "
            f"the {layout.name} layout has {', '.join(layout.columns)}",
            line=min(columns[name] for name in unknown),
        )
    required = layout.requires
    if layout is SST2017:
        if "label" in columns and "sentiment_label" in columns:
            raise FileFormatError(
                "the file has both label and sentiment_label: give the label in one of them",
                line=1,
            )
        if "sentiment_label" in columns:
            required = ("sentence_id", "sentence", "sentiment_label")
    missing = [name for name in required if name not in columns]
    if layout.by_original and not any(name in columns for name in layout.names_original):
        missing.insert(0, "original_id")
    if missing:
        raise FileFormatError(
            f"the {layout.name} layout needs the column(s) {', '.join(missing)}", line=1
        )
    return layout


def all_layouts() -> list[PairLayout]:
    """Every registered type's layouts, each once."""
    return list(dict.fromkeys(layout for kind in task_types() for layout in kind.pair_layouts))


def _content(row: Row) -> dict[str, str]:
    return {name: normalize_text(value) for name, value in row.fields.items()}


def _sst2017_sides(
    rows: list[Row], *, quoted: bool, errors: list[RowError], warnings: list[RowError]
) -> dict[str, dict[str, Row]]:
    """The rows by pair id and side (``a`` the original, ``b`` the variant); a repeated row is
    read once with a warning, a conflicting one is an error."""
    sides: dict[str, dict[str, Row]] = {}
    for row in rows:
        sentence_id = row.fields.get("sentence_id", "").strip()
        match = _SIDE.fullmatch(sentence_id)
        if match is None:
            errors.append(
                RowError(
                    line=row.line,
                    reason=f"the sentence_id '{sentence_id[:200]}' must end in _a (the "
                    "original) or _b (the variant)",
                )
            )
            continue
        key, side = match.group(1), match.group(2).lower()
        pair = sides.setdefault(key, {})
        first = pair.get(side)
        quoted_problem = None if quoted else csv_quoted_problem(row.fields)
        if quoted_problem:
            errors.append(RowError(line=row.line, reason=quoted_problem, kind="csv_quoted"))
            pair.setdefault(side, row)
        elif first is None:
            pair[side] = row
        elif _content(first) == _content(row):
            warnings.append(
                RowError(
                    line=row.line,
                    reason=f"'{sentence_id[:200]}' repeats line {first.line} exactly: read once",
                )
            )
        else:
            errors.append(
                RowError(
                    line=row.line,
                    reason=f"'{sentence_id[:200]}' is on line {first.line} and on line "
                    f"{row.line} with different content: keep one of them",
                )
            )
    return sides


def _read_sst2017(
    rows: list[Row], *, quoted: bool
) -> tuple[list[PairInput], list[RowError], list[RowError], dict[int, tuple[int, ...]]]:
    """Pairs from ``<id>_a``/``<id>_b`` rows; returns the pairs, errors, warnings and the
    lines of each pair by its first line (the pair's ``row``)."""
    errors: list[RowError] = []
    warnings: list[RowError] = []
    record_lines: dict[int, tuple[int, ...]] = {}
    sides = _sst2017_sides(rows, quoted=quoted, errors=errors, warnings=warnings)
    pairs: list[PairInput] = []
    for key, pair in sides.items():
        if "a" not in pair or "b" not in pair:
            present = pair.get("a") or pair["b"]
            lacking = "original" if "a" not in pair else "variant"
            suffix = "a" if "a" not in pair else "b"
            errors.append(
                RowError(
                    line=present.line,
                    reason=f"the pair '{key[:200]}' has no {lacking} (no row {key[:200]}_{suffix})",
                )
            )
            continue
        original, variant = pair["a"].fields, pair["b"].fields
        lines = sorted((pair["a"].line, pair["b"].line))
        record_lines[lines[0]] = tuple(lines)
        rationales = [original.get("rationale", "").strip(), variant.get("rationale", "").strip()]
        pairs.append(
            PairInput(
                row=lines[0],
                source_id=key,
                original_text=original.get("sentence", ""),
                original_label=_sst2017_label(original),
                variant_text=variant.get("sentence", ""),
                variant_label=_sst2017_label(variant),
                rationale=" ".join(r for r in rationales if r),
                tags=split_tags(original.get("tags")) + split_tags(variant.get("tags")),
            )
        )
    pairs.sort(key=lambda pair: pair.row)
    return pairs, errors, warnings, record_lines


def _sst2017_label(fields: Mapping[str, str]) -> str:
    return fields.get("label", fields.get("sentiment_label", ""))
