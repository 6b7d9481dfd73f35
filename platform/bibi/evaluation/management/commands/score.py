"""``manage.py score TASK_SLUG [--publish [--force]]``: score a task here and now, with a
progress bar.

Runs in this process, whatever the settings say about workers: the missing cells are
computed here (the models load here), then the scores; ``--publish`` makes the snapshot the
task's leaderboard, unless pairs were still waiting for validators' votes: then it says how
many and publishes nothing, unless ``--force``.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from bibi.evaluation import selectors, services
from bibi.evaluation.models import CellChunk, ScoringRun
from bibi.sharedtasks.models import SharedTask


class Command(BaseCommand):
    help = "Score a shared task now, in this process (missing cells, then scores)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task_slug")
        parser.add_argument(
            "--publish", action="store_true", help="Publish the snapshot as the leaderboard."
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="With --publish: publish even though pairs are still waiting for validators' "
            "votes (scored with their claimed labels, or left out).",
        )

    def handle(
        self, *args: Any, task_slug: str, publish: bool, force: bool = False, **options: Any
    ) -> None:
        # Imported here: computing cells loads models, and with them torch.
        from bibi.evaluation import compute

        shared_task = SharedTask.objects.filter(slug=task_slug).first()
        if shared_task is None:
            raise CommandError(f"No shared task has the slug '{task_slug}'.")
        run = services.scoring_run_request(
            shared_task=shared_task, trigger=ScoringRun.Trigger.COMMAND, send=False
        )
        progress = tqdm(unit="cell", desc="cells", disable=options.get("verbosity", 1) == 0)

        def on_chunk(advanced: ScoringRun, chunk: CellChunk) -> None:
            progress.total = advanced.cells_needed - advanced.cells_done
            progress.update(chunk.size)

        try:
            run = compute.scoring_run_complete(run_id=run.id, on_chunk=on_chunk)
        finally:
            progress.close()
        if run.status != ScoringRun.Status.DONE:
            raise CommandError(f"Scoring run {run.id} ended {run.status}: {run.failure_reason}")
        snapshot = run.snapshot
        counts = snapshot.counts
        self.stdout.write(
            f"Scoring run {run.id} done: snapshot {snapshot.id}, {counts['pairs']} pairs, "
            f"{counts['systems']} systems, {counts['cells_computed']} cells computed, "
            f"{counts['failures']} failures."
        )
        for entry in snapshot.excluded_systems:
            self.stdout.write(f"Not scored: system {entry['name']}: {entry['reason']}.")
        if publish:
            try:
                services.snapshot_publish(snapshot=snapshot, actor=None, confirm=force)
            except services.PublishUnconfirmed as refusal:
                raise CommandError(
                    f"Not published: {' '.join(refusal.messages)} (--force publishes it.)"
                ) from None
            warning = selectors.publish_warning(snapshot=snapshot)
            if warning is not None:
                self.stderr.write(f"Published anyway (--force): {warning}")
            self.stdout.write(f"Published snapshot {snapshot.id} as the leaderboard.")
