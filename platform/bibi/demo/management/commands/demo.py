"""``manage.py demo [--data DIR] [--reset]``: build the demo shared tasks, print the leaderboards.

Two tasks: ``demo-sentiment``, scored and in its results phase, and ``demo-sentiment-open``,
the same data and systems left open in its break phase, where the demo accounts can play
every role (upload pairs, look at the guidance, close the phase and contest, score).

A second run with the same data finds the task built and only prints; ``--reset`` (or other
data) builds it again, with the trained models taken from the cache. ``make demo`` runs this,
then serves the site.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bibi.demo import builder
from bibi.demo.data import DemoData

DEFAULT_DATA = Path(settings.BASE_DIR) / "fixtures" / "demo"


def _marker() -> Path:
    return Path(settings.VAR_DIR) / "demo-data.txt"


class Command(BaseCommand):
    help = (
        "Build the demo shared tasks: one with results (three trained systems, two breaker "
        "teams), and one open in its break phase."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data",
            default=str(DEFAULT_DATA),
            help="fixtures/demo (default) or a directory of SST-2 splits, e.g. ../shared/data/sst2",
        )
        parser.add_argument("--reset", action="store_true", help="Build the task again.")

    def handle(self, *args: Any, data: str, reset: bool, **options: Any) -> None:
        found = DemoData.find(data)
        digest = found.digest()
        marker = _marker()
        built = builder.demo_task()
        stale = marker.read_text().strip() != digest if marker.is_file() else True
        started = time.monotonic()
        if built is None or builder.open_task() is None or reset or stale:
            if built is not None:
                self.stdout.write("Building the demo task again (--reset or other data).")
            builder.demo_reset()
            marker.unlink(missing_ok=True)
            try:
                snapshot = builder.demo_build(
                    data=found, say=self.stdout.write, progress=options.get("verbosity", 1) > 0
                )
            except builder.DemoError as error:
                raise CommandError(str(error)) from None
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(digest + "\n")
            self.stdout.write(f"Built in {time.monotonic() - started:.0f} s.")
        else:
            self.stdout.write(f"The demo task is built from {found.name}: nothing to do.")
            snapshot = built.snapshots.filter(published_at__isnull=False).first()
            if snapshot is None:
                raise CommandError("The demo task has no published results: run with --reset.")
        self.stdout.write("")
        self.stdout.write(builder.leaderboards_text(snapshot))
        self.stdout.write("")
        self.stdout.write("Demo accounts (user / password):")
        for username, (password, what) in builder.ACCOUNTS.items():
            self.stdout.write(f"  {username:<10} {password:<15} {what}")
        self.stdout.write(f"The task, with its results: /tasks/{builder.SLUG}/")
        self.stdout.write(f"A task open in its break phase: /tasks/{builder.OPEN_SLUG}/")
