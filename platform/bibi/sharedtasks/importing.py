"""Importing examples into a dataset from an organizer's file, all or nothing.

The file is read with ``bibi.sharedtasks.files`` (CSV, TSV, JSON Lines or the ``LABEL
sentence`` lines of the 2017 SST files; UTF-8, cp1252 or Mac Roman). Every row is checked
before anything is written: one bad row rejects the whole file, and the rejection lists
every bad row with its line number, so an organizer fixes the file once, not once per row.

    report = examples_import(
        dataset=dataset, actor=organizer, data=path.read_bytes(), filename=path.name,
        label_map={"0": "negative", "1": "positive"},
    )
    report.created, report.encoding, report.file_format  # (872, "utf-8", "sst2")
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max

from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.files import (
    FORMATS,
    FileFormatError,
    Row,
    RowError,
    decode_upload,
    delimiter_hint,
    detect_format,
    read_rows,
)
from bibi.sharedtasks.models import Dataset, Example

BATCH_SIZE = 5000
EXTERNAL_ID_MAX_LENGTH = Example._meta.get_field("external_id").max_length

# 0/1, -1/+1: files number their labels in more than one spelling of the same integer.
_INTEGER = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class ExamplesImportReport:
    created: int
    encoding: str
    file_format: str
    filename: str


class ExamplesImportRejected(ValidationError):
    """The file was refused and nothing was stored.

    ``errors`` lists every problem found, in line order (line 0: the file as a whole);
    ``encoding`` and ``file_format`` are what the file was read as, None if it never got
    that far.
    """

    def __init__(
        self,
        errors: list[RowError],
        *,
        encoding: str | None = None,
        file_format: str | None = None,
    ) -> None:
        super().__init__([str(error) for error in errors], code="import_rejected")
        self.errors = errors
        self.encoding = encoding
        self.file_format = file_format


def label_map_parse(text: str) -> dict[str, str]:
    """Parse ``"0=negative,1=positive"`` into ``{"0": "negative", "1": "positive"}``.

    Raises ``ValidationError`` for an entry without ``=`` or a label given twice.
    """
    label_map: dict[str, str] = {}
    for entry in text.split(","):
        if not entry.strip():
            continue
        source, separator, target = entry.partition("=")
        source, target = source.strip(), target.strip()
        if not separator or not source or not target:
            raise ValidationError(
                f"'{entry.strip()}' is not a label mapping: write FILE_LABEL=TASK_LABEL, "
                "e.g. 0=negative,1=positive"
            )
        if source in label_map:
            raise ValidationError(f"The label map gives '{source}' twice.")
        label_map[source] = target
    return label_map


def _label_key(label: str) -> str:
    label = label.strip()
    return str(int(label)) if _INTEGER.fullmatch(label) else label


def _label_lookup(*, label_map: dict[str, str] | None, labels: list[str]) -> dict[str, str]:
    """File label (normalized by ``_label_key``) -> task label, checked against the task."""
    mapped: dict[str, str] = {}
    for source, target in (label_map or {}).items():
        if target not in labels:
            raise ValidationError(
                {
                    "label_map": f"The label map turns '{source}' into '{target}', which is not "
                    f"one of this task's labels ({', '.join(labels)})."
                }
            )
        key = _label_key(source)
        if mapped.get(key, target) != target:
            raise ValidationError(
                {"label_map": f"The label map gives '{source}' two different labels."}
            )
        mapped[key] = target
    return {label: label for label in labels} | mapped


@dataclass
class _Columns:
    id: str | None
    text: str
    label: str


def _check_columns(*, rows: list[Row], columns: _Columns, file_format: str) -> list[RowError]:
    """File-level errors for a column no row has: otherwise every row would say the same."""
    read = [row for row in rows if row.error is None]
    if not read:
        return []
    seen: dict[str, None] = {}
    for row in read:
        seen.update(dict.fromkeys(row.fields))
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


def _rejected(
    error: FileFormatError, *, encoding: str | None = None, file_format: str | None = None
) -> ExamplesImportRejected:
    return ExamplesImportRejected(
        [RowError(line=error.line or 0, reason=error.reason)],
        encoding=encoding,
        file_format=file_format,
    )


def examples_import(
    *,
    dataset: Dataset,
    actor: AbstractBaseUser,
    data: bytes,
    filename: str,
    file_format: str | None = None,
    label_map: dict[str, str] | None = None,
    id_column: str = "id",
    text_column: str = "text",
    label_column: str = "label",
) -> ExamplesImportReport:
    """Add the examples of one file to ``dataset``, after the ones it already has.

    ``file_format`` is one of ``files.FORMATS``, or None to tell it from ``filename``.
    ``label_map`` translates the file's labels into the task's ({"0": "negative", ...});
    integer labels match however they are signed ("+1" and "1"). Labels that already are
    the task's pass unmapped. sst2 files have no ids: an example's id is its line number.
    Texts, ids and labels are stripped of surrounding whitespace.

    Raises ``PermissionDenied`` unless ``actor`` organizes the dataset's shared task,
    ``ValidationError`` for a bad ``file_format`` or ``label_map`` argument, and
    ``ExamplesImportRejected`` (a ``ValidationError``) listing every problem with the file,
    in which case nothing is stored.
    """
    shared_task = dataset.shared_task
    if not selectors.is_organizer(user=actor, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task may import examples.")
    file_format = (file_format or "").strip().lower() or None
    if file_format and file_format not in FORMATS:
        raise ValidationError(
            {
                "file_format": f"'{file_format}' is not a file format: use one of {', '.join(FORMATS)}."
            }
        )
    labels = list(shared_task.labels)
    lookup = _label_lookup(label_map=label_map, labels=labels)
    filename = PurePath(filename).name

    # Reading is pure CPU work: done before the transaction so the dataset is locked briefly.
    try:
        file_format = detect_format(filename, file_format)
    except FileFormatError as error:
        raise _rejected(error) from None
    try:
        decoded = decode_upload(data)
    except FileFormatError as error:
        raise _rejected(error, file_format=file_format) from None
    try:
        rows = read_rows(decoded.text, file_format=file_format)
    except FileFormatError as error:
        raise _rejected(error, encoding=decoded.encoding, file_format=file_format) from None

    if file_format == "sst2":
        columns = _Columns(id=None, text="text", label="label")
    else:
        columns = _Columns(id=id_column, text=text_column, label=label_column)
    errors = _check_columns(rows=rows, columns=columns, file_format=file_format)
    if errors:
        raise ExamplesImportRejected(errors, encoding=decoded.encoding, file_format=file_format)
    if not rows:
        raise ExamplesImportRejected(
            [RowError(line=0, reason="the file has no examples")],
            encoding=decoded.encoding,
            file_format=file_format,
        )

    with transaction.atomic():
        # Two imports into one dataset at once would both pass the id check and then collide
        # (or share positions): the second waits here until the first has committed.
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        existing_ids = set(dataset.examples.values_list("external_id", flat=True))
        start = dataset.examples.aggregate(last=Max("position"))["last"]
        start = 0 if start is None else start + 1

        examples, errors = _examples_from_rows(
            rows=rows,
            dataset=dataset,
            columns=columns,
            lookup=lookup,
            label_map=label_map,
            labels=labels,
            existing_ids=existing_ids,
            start=start,
        )
        if errors:
            raise ExamplesImportRejected(errors, encoding=decoded.encoding, file_format=file_format)

        Example.objects.bulk_create(examples, batch_size=BATCH_SIZE)
        details = {
            "rows": len(examples),
            "encoding": decoded.encoding,
            "format": file_format,
            "filename": filename,
        }
        if label_map:
            details["label_map"] = label_map
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
    )


def _examples_from_rows(
    *,
    rows: list[Row],
    dataset: Dataset,
    columns: _Columns,
    lookup: dict[str, str],
    label_map: dict[str, str] | None,
    labels: list[str],
    existing_ids: set[str],
    start: int,
) -> tuple[list[Example], list[RowError]]:
    examples: list[Example] = []
    errors: list[RowError] = []
    first_line: dict[str, int] = {}
    for row in rows:
        if row.error is not None:
            errors.append(RowError(line=row.line, reason=row.error))
            continue
        fields = row.fields
        external_id = str(row.line) if columns.id is None else fields.get(columns.id, "").strip()
        id_problem = _id_problem(
            external_id,
            column=columns.id,
            fields=fields,
            first_line=first_line,
            existing_ids=existing_ids,
            split=dataset.split,
        )
        if id_problem is None:
            first_line[external_id] = row.line
        text = fields.get(columns.text)
        problems = [p for p in (id_problem, _text_problem(text, column=columns.text)) if p]
        raw_label = fields.get(columns.label)
        label = lookup.get(_label_key(raw_label)) if raw_label else None
        if label is None:
            problems.append(_label_problem(raw_label, columns.label, label_map, labels))
        if problems:
            errors.extend(RowError(line=row.line, reason=problem) for problem in problems)
            continue
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
    return examples, errors


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


def _text_problem(text: str | None, *, column: str) -> str | None:
    if text is None:
        return f"has no '{column}' field"
    if not text.strip():
        return "the text is empty"
    return None


def _label_problem(
    raw_label: str | None, column: str, label_map: dict[str, str] | None, labels: list[str]
) -> str:
    if raw_label is None:
        return f"has no '{column}' field"
    label = raw_label.strip()
    if not label:
        return "the label is missing"
    allowed = ", ".join(labels)
    if label_map:
        return (
            f"the label '{label}' is neither in the label map ({', '.join(label_map)}) "
            f"nor one of this task's labels ({allowed})"
        )
    return (
        f"the label '{label}' is not one of this task's labels ({allowed}); "
        "give a label map to translate the file's labels"
    )
