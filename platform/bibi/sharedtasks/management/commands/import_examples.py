"""Import a file of examples into one split of a shared task, all or nothing.

    python manage.py import_examples sst blind_dev stsa.binary.dev --label-map 0=negative,1=positive
    python manage.py import_examples qasrl blind_dev wiki1.dev.qa --drop-unmatched

A span task's file is a QA-SRL file (.qa, or the 2017 TSV) or CSV / JSON Lines items
(``bibi.tasktypes.span_extraction.reading``).

On rejection every bad row is printed with its line number, nothing is stored and the
command exits with status 1.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from bibi.labelmaps import label_map_parse
from bibi.sharedtasks.importing import ExamplesImportRejected, examples_import
from bibi.sharedtasks.models import Dataset, SharedTask
from bibi.tasktypes import example_formats


class Command(BaseCommand):
    help = "Import examples (CSV, TSV, JSON Lines or SST 'LABEL sentence' lines) into a dataset."

    def add_arguments(self, parser):
        parser.add_argument("shared_task", metavar="TASK-SLUG")
        parser.add_argument("split", choices=Dataset.Split.values)
        parser.add_argument("file", metavar="FILE", type=Path)
        parser.add_argument(
            "--format",
            dest="file_format",
            choices=sorted(example_formats()),
            help="Default: from the file name (qa and qasrl_tsv: span tasks).",
        )
        parser.add_argument(
            "--drop-unmatched",
            action="store_true",
            help="Span tasks: leave out (and report) answers that are not spans of their "
            "sentence, and items left without one, instead of refusing the file.",
        )
        parser.add_argument(
            "--partial",
            action="store_true",
            help="Store the rows that pass and list every refused line, instead of refusing "
            "the whole file.",
        )
        parser.add_argument(
            "--label-map",
            default="",
            metavar="MAP",
            help="Translate the file's labels, e.g. 0=negative,1=positive. A map that starts with "
            "a minus sign needs the = form: --label-map=-1=negative,+1=positive.",
        )
        parser.add_argument(
            "--as",
            dest="username",
            metavar="USERNAME",
            help="The organizer to import as (and to record in the audit log). "
            "Default: the task's first organizer.",
        )
        parser.add_argument("--id-column", default="id")
        parser.add_argument(
            "--text-column", help="Default: the task type's (text; a sentence pair's premise)."
        )
        parser.add_argument(
            "--text-b-column",
            help="Items of two texts: the second's column (default: a sentence pair's hypothesis).",
        )
        parser.add_argument("--label-column", default="label")

    def handle(self, *args, **options):
        shared_task = SharedTask.objects.filter(slug=options["shared_task"]).first()
        if shared_task is None:
            raise CommandError(f"There is no shared task with the slug '{options['shared_task']}'.")
        actor = self._actor(shared_task, options["username"])
        path: Path = options["file"]
        try:
            data = path.read_bytes()
        except OSError as error:
            raise CommandError(f"Cannot read {path}: {error.strerror}.") from None
        try:
            label_map = label_map_parse(options["label_map"])
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None

        try:
            report = examples_import(
                shared_task=shared_task,
                split=options["split"],
                actor=actor,
                data=data,
                filename=path.name,
                file_format=options["file_format"],
                label_map=label_map or None,
                id_column=options["id_column"],
                text_column=options["text_column"],
                text_columns={"text_b": options["text_b_column"]}
                if options["text_b_column"]
                else None,
                label_column=options["label_column"],
                drop_unmatched=options["drop_unmatched"],
                partial=options["partial"],
            )
        except ExamplesImportRejected as rejected:
            for error in rejected.errors:
                self.stderr.write(f"{path.name}: {error}")
            read_as = ", ".join(filter(None, [rejected.file_format, rejected.encoding]))
            count = rejected.error_count
            shown = (
                f" (the first {len(rejected.errors)} above)" if count > len(rejected.errors) else ""
            )
            raise CommandError(
                f"Rejected {path.name}{f' (read as {read_as})' if read_as else ''}: "
                f"{count} problem{'s' if count != 1 else ''}{shown}, nothing was imported."
            ) from None
        except PermissionDenied as error:
            raise CommandError(f"{actor.get_username()}: {error}") from None
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None

        self._report_write(report, slug=shared_task.slug, split=options["split"], actor=actor)

    def _report_write(self, report, *, slug: str, split: str, actor) -> None:
        """What the import did: the count, then the duplicates, the lines left out (span
        files), the predicates given their case back (the 2017 TSV) and the refused lines (a
        partial import), each refused line on stderr."""
        self.stdout.write(
            self.style.SUCCESS(
                f"Imported {report.created} examples into {slug}/{split} "
                f"from {report.filename} ({report.file_format}, {report.encoding}) "
                f"as {actor.get_username()}."
            )
        )
        if report.duplicates:
            self.stdout.write(report.duplicates_text())
        if (
            report.dropped_answers
            or report.dropped_items
            or report.repeated_rows
            or report.restored_case
            or report.refused
        ):
            self.stdout.write(report.summary_text())
        for error in report.refused:
            self.stderr.write(f"{report.filename}: refused: {error}")

    def _actor(self, shared_task: SharedTask, username: str | None):
        if username:
            User = get_user_model()
            try:
                return User.objects.get_by_natural_key(username)
            except User.DoesNotExist:
                raise CommandError(f"There is no user '{username}'.") from None
        organizer = shared_task.organizer_set.select_related("user").order_by("added_at").first()
        if organizer is None:
            raise CommandError(f"'{shared_task.slug}' has no organizer: name one with --as.")
        return organizer.user
