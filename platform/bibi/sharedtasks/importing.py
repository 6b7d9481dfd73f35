"""Importing examples into a dataset from an organizer's file, all or nothing.

The task's type reads the file (``TaskType.examples_read``: a labelled type's CSV, TSV,
JSON Lines or the ``LABEL sentence`` lines of the 2017 SST files, a span type's QA-SRL files;
UTF-8, cp1252 or Mac Roman, ``bibi.files``) and checks every row (``examples_check``) before
anything is written: one bad row rejects the whole file, and the rejection lists every bad
row with its line number, so an organizer fixes the file once, not once per row.

Texts are compared with ``bibi.texts.normalize_text``, the rule the pair checks find
originals with. In a labelled task an item (its texts) that is already in the file or the
dataset with another label is a bad row (named with the line or example it conflicts with);
the same item with the same label is imported and reported in
``ExamplesImportReport.duplicates``. The blind dev and starter sets are frozen once the break
phase has started (``services.dataset_require_unfrozen``).

    report = examples_import(
        shared_task=task, split="blind_dev", actor=organizer, data=path.read_bytes(),
        filename=path.name, label_map={"0": "negative", "1": "positive"},
    )
    report.created, report.encoding, report.file_format  # (872, "utf-8", "sst2")
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Max

from bibi.evaluation import triggers as evaluation_triggers
from bibi.files import RowError, refused_rows_csv
from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.models import AuditLogEntry, Dataset, Example, SharedTask
from bibi.tasktypes import TaskType
from bibi.tasktypes.examples import (
    DuplicateText,
    ExamplesChecked,
    ExamplesFile,
    ExamplesRejected,
    ExistingExamples,
    ImportOptions,
)
from bibi.texts import moment_text
from bibi.uploads import upload_digest

# The file was refused and nothing was stored (``bibi.files.FileRejected``).
ExamplesImportRejected = ExamplesRejected

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
    # line repeated): see ``bibi.tasktypes.span_extraction.reading``.
    dropped_answers: tuple[tuple[int, str], ...] = ()
    dropped_items: tuple[int, ...] = ()
    repeated_rows: tuple[tuple[int, int], ...] = ()
    # The 2017 TSV: lines whose upper-cased predicate was given the sentence's case back.
    restored_case: tuple[int, ...] = ()
    # A partial import (``partial``): every problem of the rows it left out, in line order.
    refused: tuple[RowError, ...] = ()

    # ... and those lines as a file (``bibi.files.refused_rows_csv``, as a partial pair set's).
    refused_file: str = ""

    def refused_lines(self) -> list[int]:
        """The lines a partial import left out (0: the file as a whole), each once."""
        return sorted({error.line for error in self.refused})

    def summary_text(self) -> str:
        """The import in a sentence, as the admin and the organizers' page show it."""
        span = ""
        if self.dropped_answers or self.dropped_items or self.repeated_rows:
            span = (
                f" Left out: {len(self.dropped_answers)} answers that are not spans of their "
                f"sentence, {len(self.dropped_items)} items left without an answer and "
                f"{len(self.repeated_rows)} repeated rows."
            )
        if self.restored_case:
            count = len(self.restored_case)
            span += (
                f" {count} predicate{'s' if count != 1 else ''} written in capitals by the "
                f"TSV {'were' if count != 1 else 'was'} given the sentence's case back."
            )
        refused = ""
        if self.refused:
            lines = self.refused_lines()
            refused = (
                f" Refused (not stored): {len(lines)} line{'s' if len(lines) != 1 else ''} "
                f"({', '.join(str(line) for line in lines[:20])}"
                f"{' and more' if len(lines) > 20 else ''})."
            )
        return (
            f"Imported {self.created} examples into the {self.split} dataset from "
            f"{self.filename} ({self.file_format}, {self.encoding}).{span}{refused}"
        )


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
    text_column: str | None = None,
    label_column: str = "label",
    text_columns: dict[str, str] | None = None,
    drop_unmatched: bool = False,
    partial: bool = False,
) -> ExamplesImportReport:
    """Add the examples of one file to the task's ``split`` dataset, after the ones it has.

    The dataset is created if the task has none for ``split`` yet, in the same transaction
    as the examples, so a refused file leaves nothing behind.

    ``file_format``: one of the type's ``example_formats`` (None: from ``filename``).
    ``label_map`` translates a labelled file's labels (``bibi.labelmaps``). ``id_column``,
    ``label_column`` and ``text_columns`` (segment field -> column, by default the type's;
    ``text_column``: the first's) name a labelled file's columns; sst2 files have no ids.
    ``drop_unmatched`` leaves out (and reports) a span file's answers that are not spans.
    ``partial`` (opt-in, any type): a file with refused rows stores the rows that pass and
    returns every refused line in ``ExamplesImportReport.refused`` (a file none of whose
    rows passes is still refused whole).

    Raises ``PermissionDenied`` unless ``actor`` organizes the task, ``ValidationError`` for
    a bad argument or a frozen split (blind dev and starter, once the break phase has
    started), and ``ExamplesImportRejected`` listing every problem with the file (nothing is
    stored). The file is read before the transaction, so the dataset is locked briefly.
    """
    kind = shared_task.kind
    options = ImportOptions(
        file_format=(file_format or "").strip().lower() or None,
        label_map=dict(label_map or {}) or None,
        id_column=id_column,
        text_columns={
            **({kind.segment_fields[0]: text_column} if text_column else {}),
            **(text_columns or {}),
        },
        label_column=label_column,
        drop_unmatched=drop_unmatched,
        partial=partial,
    )
    _request_checked(shared_task=shared_task, actor=actor, split=split, options=options)
    digest = upload_digest(data, **options.described())
    upload = _read(shared_task, data, filename, options, digest)
    with transaction.atomic():
        return _examples_write(
            shared_task=shared_task,
            kind=kind,
            actor=actor,
            split=split,
            upload=upload,
            options=options,
        )


def _read(
    shared_task: SharedTask, data: bytes, filename: str, options: ImportOptions, digest: str
) -> ExamplesFile:
    """The file as the task's type reads it; a bad label map is named as the argument."""
    try:
        upload = shared_task.kind.examples_read(
            data, filename=filename, options=options, labels=shared_task.labels
        )
    except ExamplesRejected:
        raise
    except ValidationError as error:
        raise ValidationError({"label_map": error.messages}) from None
    return ExamplesFile(
        upload.text, upload.filename, upload.file_format, upload.encoding, digest, upload.reading
    )


def _import_audit(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    split: str,
    upload: ExamplesFile,
    checked: ExamplesChecked,
    options: ImportOptions,
) -> None:
    details: dict[str, Any] = {
        "rows": len(checked.examples),
        "encoding": upload.encoding,
        "format": upload.file_format,
        "filename": upload.filename,
        "exact_duplicates": len(checked.duplicates),
        "sha256": upload.digest,
    }
    if options.label_map:
        details["label_map"] = dict(options.label_map)
    if checked.restored_case:
        details["restored_case"] = len(checked.restored_case)
    if checked.errors:
        details["refused_lines"] = len({error.line for error in checked.errors})
    if checked.dropped_answers or checked.dropped_items or checked.repeated_rows:
        details["dropped_answers"] = len(checked.dropped_answers)
        details["dropped_items"] = len(checked.dropped_items)
        details["repeated_rows"] = len(checked.repeated_rows)
    services.audit_record(
        shared_task=shared_task,
        actor=actor,
        action="examples.import",
        target=f"dataset:{split}",
        details=details,
    )


def _request_checked(
    *, shared_task: SharedTask, actor: AbstractBaseUser, split: str, options: ImportOptions
) -> None:
    """Check: may ``actor`` import into ``split``, and are the arguments valid?"""
    if not selectors.is_organizer(user=actor, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task may import examples.")
    if split not in Dataset.Split.values:
        raise ValidationError(
            {"split": f"'{split}' is not a split: use one of {', '.join(Dataset.Split.values)}."}
        )
    services.dataset_require_unfrozen(shared_task=shared_task, split=split)
    formats = shared_task.kind.example_formats
    if options.file_format and options.file_format not in formats:
        raise ValidationError(
            {
                "file_format": f"'{options.file_format}' is not a file format of this task: "
                f"use one of {', '.join(formats)}."
            }
        )


def _existing(dataset: Dataset, kind: TaskType) -> ExistingExamples:
    """The dataset's ids, and the first example of each item the type compares rows by."""
    existing = ExistingExamples()
    fields = ("external_id", "label", *kind.segment_fields)
    for row in dataset.examples.order_by("position").values(*fields):
        existing.ids.add(row["external_id"])
        key = kind.existing_key(row)
        if key is not None:
            existing.items.setdefault(key, (row["external_id"], row["label"]))
    return existing


def _reimport_refuse(*, shared_task: SharedTask, split: str, upload: ExamplesFile) -> None:
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
    kind: TaskType,
    actor: AbstractBaseUser,
    split: str,
    upload: ExamplesFile,
    options: ImportOptions,
) -> ExamplesImportReport:
    """Check every row against the dataset, then write the examples, ask for their cells and
    audit the import, inside the caller's transaction."""
    dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
    # Two imports into one dataset at once would both pass the id check and then collide
    # (or share positions): the second waits here until the first has committed.
    Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
    last = dataset.examples.aggregate(last=Max("position"))["last"]
    if last is not None:
        _reimport_refuse(shared_task=shared_task, split=split, upload=upload)
    checked = kind.examples_check(
        upload, existing=_existing(dataset, kind), split=split, partial=options.partial
    )
    if checked.errors and not (options.partial and checked.examples):
        raise upload.rejected(checked.errors)
    start = 0 if last is None else last + 1
    # By id: the foreign-key descriptor costs more than the rest of the row.
    examples = [
        Example(dataset_id=dataset.id, position=start + index, **fields)
        for index, fields in enumerate(checked.examples)
    ]
    Example.objects.bulk_create(examples, batch_size=BATCH_SIZE)
    cells = evaluation_triggers.dataset_cells_request(dataset=dataset, examples=examples)
    _import_audit(
        shared_task=shared_task,
        actor=actor,
        split=split,
        upload=upload,
        checked=checked,
        options=options,
    )
    return ExamplesImportReport(
        created=len(examples),
        encoding=upload.encoding,
        file_format=upload.file_format,
        filename=PurePath(upload.filename).name,
        duplicates=tuple(checked.duplicates),
        cells_to_compute=cells,
        split=split,
        dropped_answers=tuple(checked.dropped_answers),
        dropped_items=tuple(checked.dropped_items),
        repeated_rows=tuple(checked.repeated_rows),
        refused=tuple(checked.errors),
        refused_file=(
            refused_rows_csv(checked.errors, upload.text, file_format=upload.file_format)
            if checked.errors
            else ""
        ),
        restored_case=tuple(checked.restored_case),
    )
