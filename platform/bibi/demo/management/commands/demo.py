"""``manage.py demo [--data DIR] [--span-data DIR] [--reset]``: build the demo shared tasks,
print the leaderboards.

Three tasks: ``demo-sentiment``, scored and in its results phase; ``demo-sentiment-open``,
the same data and systems left open in its break phase, where the demo accounts can play
every role (upload pairs, look at the guidance, close the phase and contest, score); and
``demo-qasrl``, a QA-SRL span task in its results phase, built when ``--span-data`` holds the
wiki1 files (``bibi.demo.span_builder``).

A second run with the same data finds the tasks built and only prints; ``--reset`` (or other
data) builds them again, with the trained models taken from the cache. ``make demo`` runs
this, then serves the site.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bibi.demo import builder, span_builder
from bibi.demo.data import DemoData
from bibi.demo.span_data import SpanDemoData
from bibi.evaluation.models import Snapshot
from bibi.sharedtasks.models import SharedTask

DEFAULT_DATA = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEFAULT_SPAN_DATA = Path(settings.BASE_DIR).parent / "shared" / "data" / "qasrl"


def _marker(name: str = "demo-data.txt") -> Path:
    return Path(settings.VAR_DIR) / name


def _span_marker() -> Path:
    return _marker("demo-span-data.txt")


class Command(BaseCommand):
    help = (
        "Build the demo shared tasks: one with results (three trained systems, two breaker "
        "teams), one open in its break phase, and a QA-SRL span task with results."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--data",
            default=str(DEFAULT_DATA),
            help="fixtures/demo (default) or a directory of SST-2 splits, e.g. ../shared/data/sst2",
        )
        parser.add_argument(
            "--span-data",
            default=str(DEFAULT_SPAN_DATA),
            help="the QA-SRL directory holding wiki1.train.qa and wiki1.dev.qa "
            "(default ../shared/data/qasrl); without them the span task is not built",
        )
        parser.add_argument("--reset", action="store_true", help="Build the tasks again.")

    def handle(self, *args: Any, data: str, span_data: str, reset: bool, **options: Any) -> None:
        progress = options.get("verbosity", 1) > 0
        snapshot = self._sentiment(DemoData.find(data), reset=reset, progress=progress)
        self.stdout.write("")
        self.stdout.write(builder.leaderboards_text(snapshot))
        span_snapshot = self._span(span_data, reset=reset, progress=progress)
        if span_snapshot is not None:
            self.stdout.write("")
            self.stdout.write(f"The QA-SRL span task ({span_builder.SPAN_SLUG}):")
            self.stdout.write(builder.leaderboards_text(span_snapshot))
        self.stdout.write("")
        self.stdout.write("Demo accounts (user / password):")
        for username, (password, what) in builder.ACCOUNTS.items():
            self.stdout.write(f"  {username:<10} {password:<15} {what}")
        self.stdout.write(f"The task, with its results: /tasks/{builder.SLUG}/")
        self.stdout.write(f"A task open in its break phase: /tasks/{builder.OPEN_SLUG}/")
        if span_snapshot is not None:
            self.stdout.write(
                f"The QA-SRL span task, with its results: /tasks/{span_builder.SPAN_SLUG}/"
            )

    def _sentiment(self, found: DemoData, *, reset: bool, progress: bool) -> Snapshot:
        """The sentiment tasks, built unless built from the same data; the published snapshot."""
        digest = found.digest()
        marker = _marker()
        built = builder.demo_task()
        if built is None or builder.open_task() is None or reset or _stale(marker, digest):
            if built is not None:
                self.stdout.write("Building the demo task again (--reset or other data).")
            builder.demo_reset()
            started = time.monotonic()
            snapshot = _built(
                marker,
                digest,
                lambda: builder.demo_build(data=found, say=self.stdout.write, progress=progress),
            )
            self.stdout.write(f"Built in {time.monotonic() - started:.0f} s.")
            return snapshot
        self.stdout.write(f"The demo task is built from {found.name}: nothing to do.")
        return _published(built)

    def _span(self, directory: str, *, reset: bool, progress: bool) -> Snapshot | None:
        """The span task, built unless built from the same slices; None without the data."""
        found = SpanDemoData.find(directory)
        if found is None:
            self.stdout.write("")
            self.stdout.write(
                f"No QA-SRL data in {directory} (wiki1.train.qa and wiki1.dev.qa): the span "
                f"task {span_builder.SPAN_SLUG} is not built, only the sentiment tasks."
            )
            return None
        digest = span_builder.span_digest(found)
        marker = _span_marker()
        built = span_builder.span_task()
        if built is not None and not reset and not _stale(marker, digest):
            self.stdout.write(f"The span task is built from {found.directory}: nothing to do.")
            return _published(built)
        self.stdout.write("")
        self.stdout.write(f"QA-SRL slices: {found.describe()}")
        span_builder.span_reset()
        started = time.monotonic()
        snapshot = _built(
            marker,
            digest,
            lambda: span_builder.span_demo_build(
                users=builder.accounts_ensure(),
                data=found,
                say=self.stdout.write,
                progress=progress,
            ),
        )
        self.stdout.write(f"Span task built in {time.monotonic() - started:.0f} s.")
        return snapshot


def _stale(marker: Path, digest: str) -> bool:
    """Whether the task was built from other data (or its marker is gone)."""
    return marker.read_text().strip() != digest if marker.is_file() else True


def _built(marker: Path, digest: str, build: Callable[[], Snapshot]) -> Snapshot:
    """``build()``'s snapshot, with ``marker`` holding ``digest`` once it succeeded (and gone
    while it runs); a DemoError becomes the command's error."""
    marker.unlink(missing_ok=True)
    try:
        snapshot = build()
    except builder.DemoError as error:
        raise CommandError(str(error)) from None
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(digest + "\n")
    return snapshot


def _published(shared_task: SharedTask) -> Snapshot:
    snapshot = shared_task.snapshots.filter(published_at__isnull=False).first()
    if snapshot is None:
        raise CommandError(
            f"The task {shared_task.slug} has no published results: run with --reset."
        )
    return snapshot
