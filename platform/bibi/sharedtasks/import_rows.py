"""Checking the rows of an examples file against each other and the dataset (``importing``
reads the file and writes what passes).

Each row is checked on its own (``_row_checked``: id, text, label) and against the rows
before it and the dataset's examples (``_text_seen``: one text has one label). Every problem
of every row is collected, so a refused file lists them all.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from bibi.files import Row, RowError, RowErrors
from bibi.labelmaps import LabelLookup
from bibi.sharedtasks.models import Dataset, Example
from bibi.texts import normalize_text, text_problems

EXTERNAL_ID_MAX_LENGTH = Example._meta.get_field("external_id").max_length


@dataclass(frozen=True)
class DuplicateText:
    """A row whose text and label an earlier example already has: imported all the same.

    ``same_as_id`` is that example's id; ``same_as_line`` its line when it is in the same
    file, None when it was in the dataset before.
    """

    line: int
    same_as_id: str
    same_as_line: int | None


@dataclass
class Columns:
    id: str | None
    text: str
    label: str


@dataclass
class Existing:
    """What the dataset already holds that a new row may collide with."""

    ids: set[str]
    # Normalized text -> the id and label of its first example.
    texts: dict[str, tuple[str, str]]

    @classmethod
    def of(cls, dataset: Dataset) -> Existing:
        ids: set[str] = set()
        texts: dict[str, tuple[str, str]] = {}
        rows = dataset.examples.order_by("position").values_list("external_id", "text", "label")
        for external_id, text, label in rows:
            ids.add(external_id)
            texts.setdefault(normalize_text(text), (external_id, label))
        return cls(ids=ids, texts=texts)


@dataclass
class _FirstRow:
    line: int
    external_id: str
    label: str


@dataclass
class _FileSeen:
    """What the earlier rows of the file hold: each id's first line, each text's first row."""

    ids: dict[str, int] = field(default_factory=dict)
    texts: dict[str, _FirstRow] = field(default_factory=dict)


@dataclass(frozen=True)
class _CheckedRow:
    external_id: str
    text: str | None
    label: str | None
    duplicate: DuplicateText | None
    problems: list[str]


def examples_from_rows(
    *,
    rows: Iterable[Row],
    dataset: Dataset,
    columns: Columns,
    lookup: LabelLookup,
    existing: Existing,
    start: int,
) -> tuple[list[Example], list[DuplicateText], RowErrors]:
    examples: list[Example] = []
    duplicates: list[DuplicateText] = []
    errors = RowErrors()
    seen = _FileSeen()
    for row in rows:
        if row.error is not None:
            errors.add(row.line, row.error)
            continue
        checked = _row_checked(
            row, columns=columns, lookup=lookup, seen=seen, existing=existing, split=dataset.split
        )
        if checked.problems:
            errors.extend(RowError(line=row.line, reason=problem) for problem in checked.problems)
            continue
        if errors:
            # The file is refused: the rest is read for its problems, not kept.
            continue
        assert checked.text is not None and checked.label is not None
        if checked.duplicate is not None:
            duplicates.append(checked.duplicate)
        examples.append(
            Example(
                # By id: the foreign-key descriptor costs more than the rest of the row.
                dataset_id=dataset.id,
                external_id=checked.external_id,
                text=checked.text.strip(),
                label=checked.label,
                position=start + len(examples),
            )
        )
    return examples, duplicates, errors


def _row_checked(
    row: Row,
    *,
    columns: Columns,
    lookup: LabelLookup,
    seen: _FileSeen,
    existing: Existing,
    split: str,
) -> _CheckedRow:
    """One row's id, text and label, and its problems (remembering its id and text in
    ``seen`` for the rows after it)."""
    fields = row.fields
    external_id = str(row.line) if columns.id is None else fields.get(columns.id, "").strip()
    id_problem = _id_problem(
        external_id,
        column=columns.id,
        fields=fields,
        first_line=seen.ids,
        existing_ids=existing.ids,
        split=split,
    )
    if id_problem is None:
        seen.ids[external_id] = row.line
    text = fields.get(columns.text)
    problems = [id_problem] if id_problem else []
    problems += _text_problems(text, column=columns.text)
    raw_label = fields.get(columns.label)
    label = lookup.resolve(raw_label)
    if raw_label is None:
        problems.append(f"has no '{columns.label}' field")
    elif label is None:
        problems.append(lookup.problem(raw_label))
    duplicate = None
    if text is not None and text.strip() and label is not None:
        duplicate, conflict = _text_seen(
            normalize_text(text),
            label=label,
            row=_FirstRow(row.line, external_id, label),
            first_text=seen.texts,
            existing=existing,
            split=split,
        )
        if conflict:
            problems.append(conflict)
    return _CheckedRow(external_id, text, label, duplicate, problems)


def _text_seen(
    key: str,
    *,
    label: str,
    row: _FirstRow,
    first_text: dict[str, _FirstRow],
    existing: Existing,
    split: str,
) -> tuple[DuplicateText | None, str | None]:
    """Is this normalized text already in the dataset or earlier in the file?

    Returns the exact duplicate to report, or the conflict (same text, another label) that
    refuses the row; ``(None, None)`` for a new text, which is remembered.
    """
    before = existing.texts.get(key)
    if before is not None:
        same_id, same_label = before
        if same_label != label:
            return None, (
                f"the text is already in the {split} dataset as example '{same_id}' with the "
                f"label '{same_label}', here '{label}': one text has one label"
            )
        return DuplicateText(line=row.line, same_as_id=same_id, same_as_line=None), None
    first = first_text.setdefault(key, row)
    if first is row:
        return None, None
    if first.label != label:
        return None, (
            f"the same text is on line {first.line} with the label '{first.label}', "
            f"here '{label}': one text has one label"
        )
    return DuplicateText(line=row.line, same_as_id=first.external_id, same_as_line=first.line), None


def _id_problem(
    external_id: str,
    *,
    column: str | None,
    fields: dict[str, str],
    first_line: dict[str, int],
    existing_ids: set[str],
    split: str,
) -> str | None:
    if column is not None and column not in fields:
        return f"has no '{column}' field"
    if not external_id:
        return "the id is empty"
    if len(external_id) > EXTERNAL_ID_MAX_LENGTH:
        return f"the id is longer than {EXTERNAL_ID_MAX_LENGTH} characters"
    if external_id in first_line:
        return f"the id '{external_id}' is used twice (first on line {first_line[external_id]})"
    if external_id in existing_ids:
        return f"the id '{external_id}' is already in the {split} dataset"
    return None


def _text_problems(text: str | None, *, column: str) -> list[str]:
    if text is None:
        return [f"has no '{column}' field"]
    if not text.strip():
        return ["the text is empty"]
    return [f"the text {problem}" for problem in text_problems(text.strip())]
