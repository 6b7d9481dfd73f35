"""``manage.py bench_interactive``: anonymous page latency (p50, p99) during a scoring run with
breakers asking for suggestions (``bibi/bench/interactive.py``; figures in
``bibi/guidance/README.md``).

    $ DATABASE_URL=postgres://... REDIS_URL=redis://... python manage.py bench_interactive
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.test.utils import override_settings

from bibi.bench.interactive import bench_interactive


class Command(BaseCommand):
    help = "Anonymous page latency during a scoring run, with breakers asking for suggestions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--breakers", type=int, default=10)
        parser.add_argument("--visitors", type=int, default=2, help="anonymous request loops")
        parser.add_argument("--seconds", type=int, default=60, help="the measuring window")
        parser.add_argument(
            "--pairs", type=int, default=4000, help="pairs whose cells the run computes"
        )
        parser.add_argument("--chunk-size", type=int, default=64, help="cells per gpu task")
        parser.add_argument("--web-workers", type=int, default=3, help="gunicorn processes")
        parser.add_argument(
            "--web-threads",
            type=int,
            default=8,
            help="threads per gunicorn process (deploy/gunicorn.conf.py; 1 behaves as sync workers)",
        )
        parser.add_argument(
            "--wait", type=int, default=2, help="GUIDANCE_SUGGEST_WAIT for the web workers"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        with override_settings(EVALUATION_CHUNK_SIZE=options["chunk_size"]):
            bench_interactive(
                breakers=options["breakers"],
                visitors=options["visitors"],
                seconds=options["seconds"],
                pairs=options["pairs"],
                web_workers=options["web_workers"],
                web_threads=options["web_threads"],
                wait=options["wait"],
                out=self.stdout,
            )
