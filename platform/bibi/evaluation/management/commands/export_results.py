"""``manage.py export_results TASK_SLUG OUT_DIR``: a snapshot's tables as files.

Writes what an organizer's zip holds (every table as CSV, ``snapshot.json``, a README of
the columns), with real team names: it runs with the operator's rights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from bibi.evaluation import exports, selectors
from bibi.evaluation.models import Snapshot
from bibi.sharedtasks.models import SharedTask


class Command(BaseCommand):
    help = "Write a snapshot's tables (the leaderboard by default) as CSV files with a README."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task_slug")
        parser.add_argument("out_dir", type=Path)
        parser.add_argument(
            "--snapshot", type=int, help="A snapshot id (default: the latest published one)."
        )

    def handle(
        self, *args: Any, task_slug: str, out_dir: Path, snapshot: int | None, **options: Any
    ) -> None:
        shared_task = SharedTask.objects.filter(slug=task_slug).first()
        if shared_task is None:
            raise CommandError(f"No shared task has the slug '{task_slug}'.")
        if snapshot is None:
            chosen = selectors.leaderboard_snapshot(shared_task=shared_task)
            if chosen is None:
                raise CommandError(
                    "Nothing is published for this task yet: name a snapshot with --snapshot."
                )
        else:
            chosen = Snapshot.objects.filter(shared_task=shared_task, id=snapshot).first()
            if chosen is None:
                raise CommandError(f"The task has no snapshot {snapshot}.")
        viewer = selectors.Viewer(private_teams=None, results_started=True)
        names = selectors.names_for(viewer=viewer, snapshot=chosen)
        out_dir.mkdir(parents=True, exist_ok=True)
        files = exports.snapshot_files(chosen, viewer, names)
        for name, text in files.items():
            (out_dir / name).write_text(text, encoding="utf-8")
        self.stdout.write(f"Wrote {len(files)} files of snapshot {chosen.id} to {out_dir}.")
