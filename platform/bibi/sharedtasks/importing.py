"""Importing examples into a dataset from an organizer's file, all or nothing.

The file is read with ``bibi.files`` (CSV, TSV, JSON Lines or the ``LABEL
sentence`` lines of the 2017 SST files; UTF-8, cp1252 or Mac Roman). Every row is checked
before anything is written: one bad row rejects the whole file, and the rejection lists
every bad row with its line number, so an organizer fixes the file once, not once per row.

Texts are compared with ``bibi.texts.normalize_text``, the rule the pair checks find
originals with. A text that is already in the file or the dataset with another label is a
bad row (named with the line or example it conflicts with); the same text with the same
label is imported and reported in ``ExamplesImportReport.duplicates``. The blind dev and
starter sets are frozen once the break phase has started (``services.dataset_require_unfrozen``).

    report = examples_import(
        shared_task=task, split="blind_dev", actor=organizer, data=path.read_bytes(),
        filename=path.name, label_map={"0": "negative", "1": "positive"},
    )
    report.created, report.encoding, report.file_format  # (872, "utf-8", "sst2")
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePath

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max

from bibi.evaluation import triggers as evaluation_triggers
from bibi.files import (
    FORMATS,
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
from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.texts import normalize_text, text_problems

BATCH_SIZE = 5000
EXAMPLES_FILE = "the examples file"
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


@dataclass(frozen=True)
class ExamplesImportReport:
    created: int
    encoding: str
    file_format: str
    filename: str
    # Every exact duplicate, in line order (the caller shows the first ERRORS_SHOWN).
    duplicates: tuple[DuplicateText, ...] = ()

    def duplicates_text(self, shown: int = 20) -> str:
        """The exact duplicates in a sentence, for the admin and the command ("" if none)."""
        if not self.duplicates:
            return ""
        named = [
            f"line {d.line} (as line {d.same_as_line})"
            if d.same_as_line is not None
            else f"line {d.line} (as example '{d.same_as_id}')"
            for d in self.duplicates[:shown]
        ]
        more = len(self.duplicates) - shown
        count = len(self.duplicates)
        return (
            f"{count} row{'s' if count != 1 else ''} repeat{'s' if count == 1 else ''} the text "
            f"and label of an earlier example and {'were' if count != 1 else 'was'} imported "
            f"all the same: {', '.join(named)}{f' and {more} more' if more > 0 else ''}."
        )

    # Cells of ready hosted systems the new starter or blind-dev examples need (bibi.evaluation).
    cells_to_compute: int = 0


class ExamplesImportRejected(FileRejected):
    """The file was refused and nothing was stored (see ``bibi.files.FileRejected``)."""


@dataclass
class _Columns:
    id: str | None
    text: str
    label: str


def _check_columns(*, rows: Iterable[Row], columns: _Columns, file_format: str) -> list[RowError]:
    """File-level errors for a column no row has: otherwise every row would say the same."""
    seen: dict[str, None] = {}
    read = False
    for row in rows:
        if row.error is None:
            read = True
            seen.update(dict.fromkeys(row.fields))
    if not read:
        return []
    wanted = [name for name in (columns.id, columns.text, columns.label) if name is not None]
    missing = [name for name in wanted if name not in seen]
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


def examples_import(
    *,
    shared_task: SharedTask,
    split: str,
    actor: AbstractBaseUser,
    data: bytes,
    filename: str,
    file_format: str | None = None,
    label_map: dict[str, str] | None = None,
    id_column: str = "id",
    text_column: str = "text",
    label_column: str = "label",
) -> ExamplesImportReport:
    """Add the examples of one file to the task's ``split`` dataset, after the ones it has.

    The dataset is created if the task has none for ``split`` yet, in the same transaction
    as the examples, so a refused file leaves nothing behind.

    ``file_format`` is one of ``files.FORMATS``, or None to tell it from ``filename``.
    ``label_map`` translates the file's labels into the task's (``bibi.labelmaps``: task
    labels pass unmapped, integer labels match however they are signed). sst2 files have no
    ids: an example's id is its line number. Texts, ids and labels are stripped of
    surrounding whitespace.

    Raises ``PermissionDenied`` unless ``actor`` organizes the task, ``ValidationError`` for
    a bad ``split``, ``file_format`` or ``label_map`` argument or a frozen split (blind dev
    and starter, once the break phase has started), and ``ExamplesImportRejected``
    (a ``ValidationError``) listing every problem with the file, in which case nothing is
    stored.
    """
    if not selectors.is_organizer(user=actor, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task may import examples.")
    if split not in Dataset.Split.values:
        raise ValidationError(
            {"split": f"'{split}' is not a split: use one of {', '.join(Dataset.Split.values)}."}
        )
    services.dataset_require_unfrozen(shared_task=shared_task, split=split)
    file_format = (file_format or "").strip().lower() or None
    if file_format and file_format not in FORMATS:
        raise ValidationError(
            {
                "file_format": f"'{file_format}' is not a file format: use one of {', '.join(FORMATS)}."
            }
        )
    try:
        lookup = LabelLookup.build(label_map, labels=shared_task.labels)
    except ValidationError as error:
        raise ValidationError({"label_map": error.messages}) from None
    filename = PurePath(filename).name

    # Reading is pure CPU work: done before the transaction so the dataset is locked briefly.
    try:
        file_format = detect_format(filename, file_format)
    except FileFormatError as error:
        raise ExamplesImportRejected.from_format_error(error, source=filename) from None
    try:
        decoded = decode_upload(data)
    except FileFormatError as error:
        raise ExamplesImportRejected.from_format_error(
            error, source=filename, file_format=file_format
        ) from None

    def rejected(errors: list[RowError] | RowErrors) -> ExamplesImportRejected:
        return ExamplesImportRejected(
            errors, source=filename, encoding=decoded.encoding, file_format=file_format
        )

    def rows() -> Iterator[Row]:
        # Read twice (columns, then examples) rather than kept: a file of a million rows
        # then costs the memory of one row, and of its examples only while none is wrong.
        return iter_rows(decoded.text, file_format=file_format)

    try:
        first = next(rows(), None)
    except FileFormatError as error:
        raise rejected([RowError(line=error.line or 0, reason=error.reason)]) from None

    if file_format == "sst2":
        columns = _Columns(id=None, text="text", label="label")
    else:
        columns = _Columns(id=id_column, text=text_column, label=label_column)
    errors = _check_columns(rows=rows(), columns=columns, file_format=file_format)
    if errors:
        raise rejected(errors)
    if first is None:
        raise rejected([RowError(line=0, reason="the file has no examples")])

    with transaction.atomic():
        dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
        # Two imports into one dataset at once would both pass the id check and then collide
        # (or share positions): the second waits here until the first has committed.
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        existing = _Existing.of(dataset)
        start = dataset.examples.aggregate(last=Max("position"))["last"]
        start = 0 if start is None else start + 1

        examples, duplicates, errors = _examples_from_rows(
            rows=rows(),
            dataset=dataset,
            columns=columns,
            lookup=lookup,
            existing=existing,
            start=start,
        )
        if errors:
            raise rejected(errors)

        Example.objects.bulk_create(examples, batch_size=BATCH_SIZE)
        cells = evaluation_triggers.dataset_cells_request(dataset=dataset, examples=examples)
        details = {
            "rows": len(examples),
            "encoding": decoded.encoding,
            "format": file_format,
            "filename": filename,
            "exact_duplicates": len(duplicates),
        }
        if label_map:
            details["label_map"] = dict(label_map)
        services.audit_record(
            shared_task=shared_task,
            actor=actor,
            action="examples.import",
            target=f"dataset:{dataset.split}",
            details=details,
        )
    return ExamplesImportReport(
        created=len(examples),
        encoding=decoded.encoding,
        file_format=file_format,
        filename=filename,
        duplicates=tuple(duplicates),
        cells_to_compute=cells,
    )


@dataclass
class _Existing:
    """What the dataset already holds that a new row may collide with."""

    ids: set[str]
    # Normalized text -> the id and label of its first example.
    texts: dict[str, tuple[str, str]]

    @classmethod
    def of(cls, dataset: Dataset) -> _Existing:
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


def _examples_from_rows(
    *,
    rows: Iterable[Row],
    dataset: Dataset,
    columns: _Columns,
    lookup: LabelLookup,
    existing: _Existing,
    start: int,
) -> tuple[list[Example], list[DuplicateText], RowErrors]:
    examples: list[Example] = []
    duplicates: list[DuplicateText] = []
    errors = RowErrors()
    first_line: dict[str, int] = {}
    first_text: dict[str, _FirstRow] = {}
    for row in rows:
        if row.error is not None:
            errors.add(row.line, row.error)
            continue
        fields = row.fields
        external_id = str(row.line) if columns.id is None else fields.get(columns.id, "").strip()
        id_problem = _id_problem(
            external_id,
            column=columns.id,
            fields=fields,
            first_line=first_line,
            existing_ids=existing.ids,
            split=dataset.split,
        )
        if id_problem is None:
            first_line[external_id] = row.line
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
                first_text=first_text,
                existing=existing,
                split=dataset.split,
            )
            if conflict:
                problems.append(conflict)
        if problems:
            errors.extend(RowError(line=row.line, reason=problem) for problem in problems)
            continue
        if errors:
            # The file is refused: the rest is read for its problems, not kept.
            continue
        assert text is not None and label is not None
        if duplicate is not None:
            duplicates.append(duplicate)
        examples.append(
            Example(
                # By id: the foreign-key descriptor costs more than the rest of the row.
                dataset_id=dataset.id,
                external_id=external_id,
                text=text.strip(),
                label=label,
                position=start + len(examples),
            )
        )
    return examples, duplicates, errors


def _text_seen(
    key: str,
    *,
    label: str,
    row: _FirstRow,
    first_text: dict[str, _FirstRow],
    existing: _Existing,
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
