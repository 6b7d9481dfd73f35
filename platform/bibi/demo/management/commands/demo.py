"""``manage.py demo [--data DIR] [--span-data DIR] [--pair-data DIR] [--reset]``: build the
demo shared tasks, print the leaderboards.

Four tasks: ``demo-sentiment``, scored and in its results phase; ``demo-sentiment-open``,
the same data and systems left open in its break phase, where the demo accounts can play
every role (upload pairs, look at the guidance, close the phase and contest, score);
``demo-qasrl``, a QA-SRL span task in its results phase, built when ``--span-data`` holds the
wiki1 files (``bibi.demo.span_builder``); and ``demo-nli``, a sentence-pair (NLI) task in its
results phase, built when ``--pair-data`` holds the nli-cad files (``bibi.demo.pair_builder``).

A second run with the same data finds the tasks built and only prints; ``--reset`` (or other
data) builds them again, with the trained models taken from the cache. ``make demo`` runs
this, then serves the site.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from bibi.demo import builder, pair_builder, span_builder
from bibi.demo.data import DemoData
from bibi.demo.pair_data import PairDemoData
from bibi.demo.span_data import SpanDemoData
from bibi.evaluation.models import Snapshot
from bibi.sharedtasks.models import SharedTask

DEFAULT_DATA = Path(settings.BASE_DIR) / "fixtures" / "demo"
DEFAULT_SPAN_DATA = Path(settings.BASE_DIR).parent / "shared" / "data" / "qasrl"
DEFAULT_PAIR_DATA = Path(settings.BASE_DIR).parent / "shared" / "data" / "nli-cad"


def _marker(name: str = "demo-data.txt") -> Path:
    return Path(settings.VAR_DIR) / name


@dataclass(frozen=True)
class OptionalTask:
    """A demo task built from shared data when it is there: what it is called, its marker
    file, and the builder module's functions (``*_task``, ``*_digest``, ``*_reset``,
    ``*_demo_build``)."""

    slug: str
    what: str
    short: str
    data_name: str
    files: str
    marker: str
    built: Callable[[], SharedTask | None]
    digest: Callable[[Any], str]
    reset: Callable[[], None]
    build: Callable[..., Snapshot]


SPAN = OptionalTask(
    span_builder.SPAN_SLUG,
    "The QA-SRL span task",
    "span task",
    "QA-SRL",
    "wiki1.train.qa and wiki1.dev.qa",
    "demo-span-data.txt",
    span_builder.span_task,
    span_builder.span_digest,
    span_builder.span_reset,
    span_builder.span_demo_build,
)
PAIRS = OptionalTask(
    pair_builder.PAIR_SLUG,
    "The sentence-pair (NLI) task",
    "sentence-pair task",
    "nli-cad",
    "original/train.tsv, dev.tsv and test.tsv",
    "demo-pair-data.txt",
    pair_builder.pair_task,
    pair_builder.pair_digest,
    pair_builder.pair_reset,
    pair_builder.pair_demo_build,
)


class Command(BaseCommand):
    help = (
        "Build the demo shared tasks: one with results (three trained systems, two breaker "
        "teams), one open in its break phase, a QA-SRL span task and a sentence-pair (NLI) "
        "task with results."
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
        parser.add_argument(
            "--pair-data",
            default=str(DEFAULT_PAIR_DATA),
            help="the nli-cad directory holding original/train.tsv, dev.tsv and test.tsv "
            "(default ../shared/data/nli-cad); without them the sentence-pair task is not built",
        )
        parser.add_argument("--reset", action="store_true", help="Build the tasks again.")

    def handle(
        self, *args: Any, data: str, span_data: str, pair_data: str, reset: bool, **options: Any
    ) -> None:
        progress = options.get("verbosity", 1) > 0
        snapshot = self._sentiment(DemoData.find(data), reset=reset, progress=progress)
        self.stdout.write("")
        self.stdout.write(builder.leaderboards_text(snapshot))
        optional = [
            (SPAN, span_data, SpanDemoData.find(span_data)),
            (PAIRS, pair_data, PairDemoData.find(pair_data)),
        ]
        built = []
        for task, directory, found in optional:
            if found is None:
                self.stdout.write("")
                self.stdout.write(
                    f"No {task.data_name} data in {directory} ({task.files}): the {task.short} "
                    f"{task.slug} is not built."
                )
                continue
            task_snapshot = self._optional(task, found, reset=reset, progress=progress)
            built.append(task)
            self.stdout.write("")
            self.stdout.write(f"{task.what} ({task.slug}):")
            self.stdout.write(builder.leaderboards_text(task_snapshot))
        self.stdout.write("")
        self.stdout.write("Demo accounts (user / password):")
        for username, (password, what) in builder.ACCOUNTS.items():
            self.stdout.write(f"  {username:<10} {password:<15} {what}")
        self.stdout.write(f"The task, with its results: /tasks/{builder.SLUG}/")
        self.stdout.write(f"A task open in its break phase: /tasks/{builder.OPEN_SLUG}/")
        for task in built:
            self.stdout.write(f"{task.what}, with its results: /tasks/{task.slug}/")

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

    def _optional(self, task: OptionalTask, found: Any, *, reset: bool, progress: bool) -> Snapshot:
        """``task``, built unless built from the same data; its published snapshot."""
        digest = task.digest(found)
        marker = _marker(task.marker)
        built = task.built()
        if built is not None and not reset and not _stale(marker, digest):
            self.stdout.write(f"The {task.short} is built from {found.directory}: nothing to do.")
            return _published(built)
        self.stdout.write("")
        self.stdout.write(f"{task.what}'s data: {found.describe()}")
        task.reset()
        started = time.monotonic()
        snapshot = _built(
            marker,
            digest,
            lambda: task.build(
                users=builder.accounts_ensure(),
                data=found,
                say=self.stdout.write,
                progress=progress,
            ),
        )
        self.stdout.write(f"{task.what} built in {time.monotonic() - started:.0f} s.")
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
