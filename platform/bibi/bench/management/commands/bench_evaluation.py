"""``manage.py bench_evaluation``: the figures of the evaluation app.

- ``--part worker``: MiniLM cells per second end to end through a real ``gpu`` worker
  process (prediction, λmax and word hints of every pair text, written to the database),
  next to ``fim_engine``'s bare batched ``System.fisher`` on the same texts. Needs
  ``REDIS_URL``; the task it builds is deleted afterwards.
- ``--part rescore``: a re-score of 20 systems × 10,000 pairs whose cells are all known
  (no ``gpu`` task), phase by phase, then the SQL queries and time of every leaderboard
  endpoint on that snapshot. Everything lives in one transaction rolled back at the end.

    $ DATABASE_URL=postgres://... REDIS_URL=redis://... python manage.py bench_evaluation
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from bibi.bench.rescore import bench_rescore
from bibi.bench.worker import bench_worker


class Command(BaseCommand):
    help = "Time the evaluation app: MiniLM cells through a real worker, a 20 x 10k re-score."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--part", choices=["all", "worker", "rescore"], default="all")
        parser.add_argument("--texts", type=int, default=400, help="SST-2 dev sentences (worker).")
        parser.add_argument("--repeat", type=int, default=2, help="Passes of each (worker).")
        parser.add_argument("--systems", type=int, default=20)
        parser.add_argument("--pairs", type=int, default=10_000)

    def handle(
        self, *args, part: str, texts: int, repeat: int, systems: int, pairs: int, **options
    ) -> None:
        if part in ("all", "worker"):
            bench_worker(texts=texts, repeats=repeat, out=self.stdout)
        if part in ("all", "rescore"):
            bench_rescore(systems=systems, pairs=pairs, out=self.stdout)
