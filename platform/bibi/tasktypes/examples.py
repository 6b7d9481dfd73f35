"""Examples files, whatever the type: reading them, and checking labelled rows.

``sharedtasks.importing`` asks the task's type to read a file (``TaskType.examples_read``,
before its transaction) and to check what it read against the dataset
(``TaskType.examples_check``, inside it), then writes the examples that passed, all or
nothing. This module holds what the types share:

- ``ExamplesFile``: a decoded file and what the type needs to read it again;
- ``ExistingExamples``: what the dataset already holds that a new row may collide with;
- ``ExamplesChecked``: the examples to write (as ``Example`` fields), the exact duplicates
  and every problem, so a refused file lists them all;
- ``labelled_examples``: the rows of a labelled type (an id, one column per segment, a
  label). Each row is checked on its own (id, texts, label) and against the rows before it
  and the dataset's examples: one item (its texts, normalized) has one label.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePath
from typing import Any

from bibi.files import (
    FileFormatError,
    FileRejected,
    Row,
    RowError,
    RowErrors,
    decode_upload,
    delimiter_hint,
    detect_format,
    iter_rows,
)
from bibi.labelmaps import LabelLookup
from bibi.texts import normalize_text, text_problems

# ``Example.external_id``'s length (its model reads it from here).
EXTERNAL_ID_MAX_LENGTH = 200


class ExamplesRejected(FileRejected):
    """An examples file refused, nothing stored (see ``bibi.files.FileRejected``)."""


@dataclass(frozen=True)
class DuplicateText:
    """A row whose item and label an earlier example already has: imported all the same.

    ``same_as_id`` is that example's id; ``same_as_line`` its line when it is in the same
    file, None when it was in the dataset before.
    """

    line: int
    same_as_id: str
    same_as_line: int | None


@dataclass(frozen=True)
class ImportOptions:
    """What the organizer said about a file: its format (None: from its name), a label map,
    the column names of a labelled file's id, segments (by field) and label, and whether a
    span file's answers that are not spans are dropped rather than refused."""

    file_format: str | None = None
    label_map: Mapping[str, str] | None = None
    id_column: str = "id"
    text_columns: Mapping[str, str] = field(default_factory=dict)
    label_column: str = "label"
    drop_unmatched: bool = False
    # Opt-in: store the rows that pass and return the refused ones (as pair sets do).
    partial: bool = False

    def described(self) -> dict[str, Any]:
        """The options that change what a file means, as an upload's digest takes them."""
        return {
            "file_format": self.file_format or "",
            "label_map": dict(self.label_map or {}),
            "columns": [self.id_column, sorted(self.text_columns.items()), self.label_column],
            "drop_unmatched": self.drop_unmatched,
            "partial": self.partial,
        }


@dataclass
class ExistingExamples:
    """What the dataset already holds: its ids, and each normalized item's first example
    (id, label)."""

    ids: set[str] = field(default_factory=set)
    items: dict[tuple[str, ...], tuple[str, str]] = field(default_factory=dict)


@dataclass
class ExamplesChecked:
    """The examples to write (``Example`` fields, in file order), what the report says of
    them, and every problem (the file is refused when there is one)."""

    examples: list[dict[str, Any]] = field(default_factory=list)
    duplicates: list[DuplicateText] = field(default_factory=list)
    errors: RowErrors = field(default_factory=RowErrors)
    # Span files: answers left out as not spans (line, answer), items left without an answer
    # (lines), rows skipped as repeats (line, line repeated).
    dropped_answers: list[tuple[int, str]] = field(default_factory=list)
    dropped_items: list[int] = field(default_factory=list)
    repeated_rows: list[tuple[int, int]] = field(default_factory=list)
    # The 2017 TSV: lines whose upper-cased predicate was given the sentence's case back.
    restored_case: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Columns:
    """Where a labelled row keeps its parts: the id (None: the line number is the id), one
    column per segment field, the label."""

    id: str | None
    texts: tuple[tuple[str, str], ...]  # (Example field, column)
    label: str

    @property
    def names(self) -> list[str]:
        named = [self.id, *(column for _, column in self.texts), self.label]
        return [name for name in named if name is not None]


@dataclass(frozen=True)
class ExamplesFile:
    """A decoded examples file: its text, name, format, encoding and the upload's digest;
    ``reading`` is what the type made of it (a labelled file's ``Columns`` and label lookup,
    a span file's items)."""

    text: str
    filename: str
    file_format: str
    encoding: str
    digest: str = ""
    reading: Any = None

    def rows(self) -> Iterator[Row]:
        # Read twice (columns, then examples) rather than kept: a file of a million rows
        # then costs the memory of one row, and of its examples only while none is wrong.
        return iter_rows(self.text, file_format=self.file_format)

    def rejected(self, errors: Iterable[RowError] | RowErrors) -> ExamplesRejected:
        return ExamplesRejected(
            errors, source=self.filename, encoding=self.encoding, file_format=self.file_format
        )


def examples_file_decode(data: bytes, *, filename: str, file_format: str) -> tuple[str, str]:
    """The text and encoding of ``data``; ``ExamplesRejected`` when it cannot be decoded."""
    try:
        decoded = decode_upload(data)
    except FileFormatError as error:
        raise ExamplesRejected.from_format_error(
            error, source=filename, file_format=file_format
        ) from None
    return decoded.text, decoded.encoding


def labelled_file_read(
    data: bytes,
    *,
    filename: str,
    columns: Columns,
    lookup: LabelLookup,
    options: ImportOptions,
    alternatives: Sequence[Columns] = (),
) -> ExamplesFile:
    """Read a labelled file: decode it, tell its format, check its columns and that it has a
    row; ``ExamplesRejected`` for a file that cannot be read or has no examples. A file
    without ``columns`` but with every column of one of the ``alternatives`` (a published
    layout the type knows, such as SNLI's ``sentence1``, ``sentence2``, ``gold_label``) is
    read in that layout."""
    filename = PurePath(filename).name
    try:
        file_format = detect_format(filename, options.file_format)
    except FileFormatError as error:
        raise ExamplesRejected.from_format_error(error, source=filename) from None
    text, encoding = examples_file_decode(data, filename=filename, file_format=file_format)
    if file_format == "sst2":
        # ``LABEL sentence`` lines: no ids (the line number is the id), one text.
        columns = Columns(id=None, texts=(("text", "text"),), label="label")
    upload = ExamplesFile(text, filename, file_format, encoding, reading=(columns, lookup))
    try:
        first = next(upload.rows(), None)
    except FileFormatError as error:
        raise upload.rejected([RowError(line=error.line or 0, reason=error.reason)]) from None
    errors = _columns_missing(rows=upload.rows(), columns=columns, file_format=file_format)
    for alternative in alternatives if errors else ():
        if not _columns_missing(rows=upload.rows(), columns=alternative, file_format=file_format):
            errors = []
            upload = replace(upload, reading=(alternative, lookup))
            break
    if errors:
        raise upload.rejected(errors)
    if first is None:
        raise upload.rejected([RowError(line=0, reason="the file has no examples")])
    return upload


def _columns_missing(*, rows: Iterable[Row], columns: Columns, file_format: str) -> list[RowError]:
    """File-level errors for a column no row has: otherwise every row would say the same."""
    seen: dict[str, None] = {}
    read = False
    for row in rows:
        if row.error is None:
            read = True
            seen.update(dict.fromkeys(row.fields))
    if not read:
        return []
    missing = [name for name in columns.names if name not in seen]
    if not missing:
        return []
    where = "header" if file_format in ("csv", "tsv") else "file"
    kind = "column" if file_format in ("csv", "tsv") else "field"
    names = ", ".join(f"'{name}'" for name in missing)
    reason = (
        f"the {where} has no {names} {kind}{'s' if len(missing) > 1 else ''} "
        f"(it has {', '.join(repr(name) for name in seen)})"
        + delimiter_hint(list(seen), file_format=file_format)
    )
    return [RowError(line=1 if where == "header" else 0, reason=reason)]


@dataclass
class _FirstRow:
    line: int
    external_id: str
    label: str


@dataclass
class _FileSeen:
    """What the earlier rows of the file hold: each id's first line, each item's first row."""

    ids: dict[str, int] = field(default_factory=dict)
    items: dict[tuple[str, ...], _FirstRow] = field(default_factory=dict)


def labelled_examples(
    upload: ExamplesFile, *, existing: ExistingExamples, split: str, partial: bool = False
) -> ExamplesChecked:
    """The examples of a labelled file checked row by row against each other and
    ``existing``; every problem of every row is in ``errors``. ``partial``: the rows that
    pass are kept after a refused one (a partial import stores them)."""
    columns, lookup = upload.reading
    checked = ExamplesChecked()
    seen = _FileSeen()
    for row in upload.rows():
        if row.error is not None:
            checked.errors.add(row.line, row.error)
            continue
        fields, duplicate, problems = _row_checked(
            row, columns=columns, lookup=lookup, seen=seen, existing=existing, split=split
        )
        if problems:
            checked.errors.extend(RowError(line=row.line, reason=problem) for problem in problems)
        elif partial or not checked.errors:
            # Once the file is refused, the rest is read for its problems, not kept.
            if duplicate is not None:
                checked.duplicates.append(duplicate)
            checked.examples.append(fields)
    return checked


def _row_checked(
    row: Row,
    *,
    columns: Columns,
    lookup: LabelLookup,
    seen: _FileSeen,
    existing: ExistingExamples,
    split: str,
) -> tuple[dict[str, Any], DuplicateText | None, list[str]]:
    """One row's example fields, the exact duplicate it is, and its problems (remembering
    its id and item in ``seen`` for the rows after it)."""
    fields = row.fields
    external_id = str(row.line) if columns.id is None else fields.get(columns.id, "").strip()
    id_problem = _id_problem(
        external_id, column=columns.id, fields=fields, seen=seen, existing=existing, split=split
    )
    if id_problem is None:
        seen.ids[external_id] = row.line
    problems = [id_problem] if id_problem else []
    texts: dict[str, str] = {}
    for name, column in columns.texts:
        raw = fields.get(column)
        problems += _text_problems(raw, column=column, what=_what(name, columns))
        texts[name] = (raw or "").strip()
    raw_label = fields.get(columns.label)
    label = lookup.resolve(raw_label)
    if raw_label is None:
        problems.append(f"has no '{columns.label}' field")
    elif label is None:
        problems.append(lookup.problem(raw_label))
    duplicate = None
    if all(texts.values()) and label is not None:
        key = tuple(normalize_text(text) for text in texts.values())
        duplicate, conflict = _item_seen(
            key,
            row=_FirstRow(row.line, external_id, label),
            seen=seen,
            existing=existing,
            split=split,
        )
        if conflict:
            problems.append(conflict)
    return {"external_id": external_id, **texts, "label": label or ""}, duplicate, problems


def _what(name: str, columns: Columns) -> str:
    """How a message names a segment: "the text" for one, by its column for several."""
    return "the text" if len(columns.texts) == 1 else f"the {dict(columns.texts)[name]}"


def _item_seen(
    key: tuple[str, ...], *, row: _FirstRow, seen: _FileSeen, existing: ExistingExamples, split: str
) -> tuple[DuplicateText | None, str | None]:
    """Is this normalized item already in the dataset or earlier in the file?

    Returns the exact duplicate to report, or the conflict (same item, another label) that
    refuses the row; ``(None, None)`` for a new item, which is remembered.
    """
    what = "text" if len(key) == 1 else "item"
    before = existing.items.get(key)
    if before is not None:
        same_id, same_label = before
        if same_label != row.label:
            return None, (
                f"the {what} is already in the {split} dataset as example '{same_id}' with the "
                f"label '{same_label}', here '{row.label}': one {what} has one label"
            )
        return DuplicateText(line=row.line, same_as_id=same_id, same_as_line=None), None
    first = seen.items.setdefault(key, row)
    if first is row:
        return None, None
    if first.label != row.label:
        return None, (
            f"the same {what} is on line {first.line} with the label '{first.label}', "
            f"here '{row.label}': one {what} has one label"
        )
    return DuplicateText(line=row.line, same_as_id=first.external_id, same_as_line=first.line), None


def _id_problem(
    external_id: str,
    *,
    column: str | None,
    fields: dict[str, str],
    seen: _FileSeen,
    existing: ExistingExamples,
    split: str,
) -> str | None:
    if column is not None and column not in fields:
        return f"has no '{column}' field"
    if not external_id:
        return "the id is empty"
    if len(external_id) > EXTERNAL_ID_MAX_LENGTH:
        return f"the id is longer than {EXTERNAL_ID_MAX_LENGTH} characters"
    if external_id in seen.ids:
        return f"the id '{external_id}' is used twice (first on line {seen.ids[external_id]})"
    if external_id in existing.ids:
        return f"the id '{external_id}' is already in the {split} dataset"
    return None


def _text_problems(text: str | None, *, column: str, what: str) -> list[str]:
    if text is None:
        return [f"has no '{column}' field"]
    if not text.strip():
        return [f"{what} is empty"]
    return [f"{what} {problem}" for problem in text_problems(text.strip())]
