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
from bibi.sharedtasks.import_rows import Columns, DuplicateText, Existing, examples_from_rows
from bibi.sharedtasks.models import AuditLogEntry, Dataset, Example, SharedTask
from bibi.sharedtasks.span_import import span_examples_checked, span_file_read
from bibi.texts import moment_text
from bibi.uploads import upload_digest

BATCH_SIZE = 5000
EXAMPLES_FILE = "the examples file"


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
    split: str = ""
    # Span tasks: answers left out as not spans (line, answer), rows skipped as repeats (line,
    # line repeated): see ``span_import``.
    dropped_answers: tuple[tuple[int, str], ...] = ()
    dropped_items: tuple[int, ...] = ()
    repeated_rows: tuple[tuple[int, int], ...] = ()

    def summary_text(self) -> str:
        """The import in a sentence, as the admin and the organizers' page show it."""
        span = ""
        if self.dropped_answers or self.dropped_items or self.repeated_rows:
            span = (
                f" Left out: {len(self.dropped_answers)} answers that are not spans of their "
                f"sentence, {len(self.dropped_items)} items left without an answer and "
                f"{len(self.repeated_rows)} repeated rows."
            )
        return (
            f"Imported {self.created} examples into the {self.split} dataset from "
            f"{self.filename} ({self.file_format}, {self.encoding}).{span}"
        )


class ExamplesImportRejected(FileRejected):
    """The file was refused and nothing was stored (see ``bibi.files.FileRejected``)."""


def _check_columns(*, rows: Iterable[Row], columns: Columns, file_format: str) -> list[RowError]:
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
    drop_unmatched: bool = False,
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

    Three steps: check the request, read the file (before the transaction, so the dataset
    is locked briefly), then check every row and write, in one transaction. A span task's
    file goes to ``span_import`` (its formats, ``drop_unmatched``; no label map or columns).
    """
    if shared_task.is_span:
        upload_span = (data, PurePath(filename).name, file_format)
        return _span_examples_import(shared_task, split, actor, upload_span, drop_unmatched)
    file_format, lookup = _request_checked(
        shared_task=shared_task,
        actor=actor,
        split=split,
        file_format=file_format,
        label_map=label_map,
    )
    columns = Columns(id=id_column, text=text_column, label=label_column)
    options = {"file_format": file_format or "", "label_map": dict(label_map or {})}
    digest = upload_digest(data, **options, columns=columns)
    upload = _ImportFile.read(
        data=data, filename=filename, file_format=file_format, columns=columns, digest=digest
    )
    with transaction.atomic():
        return _examples_write(
            shared_task=shared_task,
            actor=actor,
            split=split,
            upload=upload,
            lookup=lookup,
            label_map=label_map,
        )


def _span_examples_import(
    shared_task: SharedTask,
    split: str,
    actor: AbstractBaseUser,
    upload: tuple[bytes, str, str | None],
    drop_unmatched: bool,
) -> ExamplesImportReport:
    """``examples_import`` for a span task: ``upload`` is (data, file name, format asked)."""
    data, filename, file_format = upload
    _request_checked(
        shared_task=shared_task, actor=actor, split=split, file_format=None, label_map=None
    )
    try:
        reading, encoding, chosen = span_file_read(
            data=data, filename=filename, file_format=file_format, drop_unmatched=drop_unmatched
        )
    except FileFormatError as error:
        raise ExamplesImportRejected.from_format_error(error, source=filename) from None
    with transaction.atomic():
        dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
        Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
        start = dataset.examples.aggregate(last=Max("position"))["last"]
        examples = span_examples_checked(
            reading, dataset=dataset, start=0 if start is None else start + 1
        )
        if reading.errors:
            raise ExamplesImportRejected(
                reading.errors, source=filename, encoding=encoding, file_format=chosen
            )
        Example.objects.bulk_create(examples, batch_size=BATCH_SIZE)
        cells = evaluation_triggers.dataset_cells_request(dataset=dataset, examples=examples)
        services.audit_record(
            shared_task=shared_task,
            actor=actor,
            action="examples.import",
            target=f"dataset:{split}",
            details={
                "rows": len(examples),
                "encoding": encoding,
                "format": chosen,
                "filename": filename,
                "dropped_answers": len(reading.dropped),
                "dropped_items": len(reading.dropped_items),
                "repeated_rows": len(reading.repeated),
            },
        )
    return ExamplesImportReport(
        created=len(examples),
        encoding=encoding,
        file_format=chosen,
        filename=filename,
        cells_to_compute=cells,
        split=split,
        dropped_answers=tuple(reading.dropped),
        dropped_items=tuple(reading.dropped_items),
        repeated_rows=tuple(reading.repeated),
    )


def _import_audit(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    split: str,
    upload: _ImportFile,
    counts: tuple[int, int],
    label_map: dict[str, str] | None,
) -> None:
    """The audit entry of an import: ``counts`` is (rows imported, exact duplicates)."""
    details = {
        "rows": counts[0],
        "encoding": upload.encoding,
        "format": upload.file_format,
        "filename": upload.filename,
        "exact_duplicates": counts[1],
        "sha256": upload.digest,
    }
    if label_map:
        details["label_map"] = dict(label_map)
    services.audit_record(
        shared_task=shared_task,
        actor=actor,
        action="examples.import",
        target=f"dataset:{split}",
        details=details,
    )


def _request_checked(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    split: str,
    file_format: str | None,
    label_map: dict[str, str] | None,
) -> tuple[str | None, LabelLookup]:
    """Check: may ``actor`` import into ``split``, and are the arguments valid? Returns the
    file format asked for (None: from the file name) and the label lookup."""
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
    return file_format, lookup


@dataclass(frozen=True)
class _ImportFile:
    """A decoded examples file whose columns are there and which has a row."""

    text: str
    filename: str
    file_format: str
    encoding: str
    columns: Columns
    digest: str = ""

    @classmethod
    def read(
        cls,
        *,
        data: bytes,
        filename: str,
        file_format: str | None,
        columns: Columns,
        digest: str = "",
    ) -> _ImportFile:
        """Read: decode ``data``, tell its format, and check its columns; raises
        ``ExamplesImportRejected`` for a file that cannot be read or has no examples."""
        filename = PurePath(filename).name
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
        if file_format == "sst2":
            columns = Columns(id=None, text="text", label="label")
        upload = cls(decoded.text, filename, file_format, decoded.encoding, columns, digest)
        try:
            first = next(upload.rows(), None)
        except FileFormatError as error:
            raise upload.rejected([RowError(line=error.line or 0, reason=error.reason)]) from None
        errors = _check_columns(rows=upload.rows(), columns=columns, file_format=file_format)
        if errors:
            raise upload.rejected(errors)
        if first is None:
            raise upload.rejected([RowError(line=0, reason="the file has no examples")])
        return upload

    def rows(self) -> Iterator[Row]:
        # Read twice (columns, then examples) rather than kept: a file of a million rows
        # then costs the memory of one row, and of its examples only while none is wrong.
        return iter_rows(self.text, file_format=self.file_format)

    def rejected(self, errors: list[RowError] | RowErrors) -> ExamplesImportRejected:
        return ExamplesImportRejected(
            errors, source=self.filename, encoding=self.encoding, file_format=self.file_format
        )


def _reimport_refuse(*, shared_task: SharedTask, split: str, upload: _ImportFile) -> None:
    """Refuse a file the dataset already took (same bytes, format, columns and label map):
    every row would otherwise be refused one by one as a repeated id."""
    earlier = (
        AuditLogEntry.objects.filter(
            shared_task=shared_task,
            action="examples.import",
            target=f"dataset:{split}",
            details__sha256=upload.digest,
        )
        .select_related("actor")
        .first()
    )
    if earlier is None or not upload.digest:
        return
    who = f" by {earlier.actor.get_username()}" if earlier.actor else ""
    raise ValidationError(
        f"This file was already imported into the {split} set {moment_text(earlier.created_at)}"
        f"{who} ({earlier.details.get('rows', 0)} examples, from "
        f"{earlier.details.get('filename', 'a file')}): nothing was stored.",
        code="already_imported",
    )


def _examples_write(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    split: str,
    upload: _ImportFile,
    lookup: LabelLookup,
    label_map: dict[str, str] | None,
) -> ExamplesImportReport:
    """Check every row against the dataset, then write the examples, ask for their cells and
    audit the import, inside the caller's transaction."""
    dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
    # Two imports into one dataset at once would both pass the id check and then collide
    # (or share positions): the second waits here until the first has committed.
    Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
    start = dataset.examples.aggregate(last=Max("position"))["last"]
    if start is not None:
        _reimport_refuse(shared_task=shared_task, split=split, upload=upload)
    examples, duplicates, errors = examples_from_rows(
        rows=upload.rows(),
        dataset=dataset,
        columns=upload.columns,
        lookup=lookup,
        existing=Existing.of(dataset),
        start=0 if start is None else start + 1,
    )
    if errors:
        raise upload.rejected(errors)
    Example.objects.bulk_create(examples, batch_size=BATCH_SIZE)
    cells = evaluation_triggers.dataset_cells_request(dataset=dataset, examples=examples)
    _import_audit(
        shared_task=shared_task,
        actor=actor,
        split=split,
        upload=upload,
        counts=(len(examples), len(duplicates)),
        label_map=label_map,
    )
    return ExamplesImportReport(
        created=len(examples),
        encoding=upload.encoding,
        file_format=upload.file_format,
        filename=upload.filename,
        duplicates=tuple(duplicates),
        cells_to_compute=cells,
        split=split,
    )
