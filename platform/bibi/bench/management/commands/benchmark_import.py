"""Time one import of a large generated file against the configured database.

    DATABASE_URL=postgres://... python manage.py benchmark_import --rows 50000

Everything it creates (a user, a shared task, the examples) is rolled back at the end, so
it may be run against any migrated database.
"""

from __future__ import annotations

import random
import time
import uuid

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection, transaction

from bibi.files import ENCODINGS, decode_upload, read_rows
from bibi.sharedtasks import services
from bibi.sharedtasks.importing import examples_import

WORDS = [
    "the",
    "film",
    "a",
    "story",
    "its",
    "cast",
    "is",
    "neither",
    "nor",
    "but",
    "and",
    "with",
    "too",
    "much",
    "little",
    "heart",
    "wit",
    "plot",
    "scene",
    "director",
    "performance",
    "naïve",
    "café",
    "“charming”",
    "–",
    "dull",
    "…",
    "clichéd",
    "résumé",
]


def _generated_csv(rows: int, *, seed: int) -> str:
    rng = random.Random(seed)
    lines = ["id,text,label"]
    for number in range(rows):
        sentence = " ".join(rng.choices(WORDS, k=rng.randint(6, 30)))
        lines.append(f'b{number},"{sentence}",{rng.randint(0, 1)}')
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = "Import a generated file of N examples once, print how long it took, roll it back."

    def add_arguments(self, parser):
        parser.add_argument("--rows", type=int, default=50_000)
        parser.add_argument("--encoding", choices=ENCODINGS, default="utf-8")
        parser.add_argument("--seed", type=int, default=2017)

    def handle(self, *args, rows: int, encoding: str, seed: int, **options):
        data = _generated_csv(rows, seed=seed).encode(encoding)

        started = time.perf_counter()
        read_rows(decode_upload(data).text, file_format="csv")
        reading = time.perf_counter() - started

        with transaction.atomic():
            name = f"bench-{uuid.uuid4().hex[:8]}"
            organizer = get_user_model().objects.create_user(name)
            shared_task = services.shared_task_create(creator=organizer, name=name, slug=name)
            started = time.perf_counter()
            report = examples_import(
                shared_task=shared_task,
                split="train",
                actor=organizer,
                data=data,
                filename="bench.csv",
                label_map={"0": "negative", "1": "positive"},
            )
            total = time.perf_counter() - started
            transaction.set_rollback(True)

        self.stdout.write(
            f"Imported {report.created:,} rows ({report.file_format}, {report.encoding}, "
            f"{len(data) / 1e6:.1f} MB) in one call: {total:.2f} s on {connection.vendor} "
            f"({reading:.2f} s decoding and reading, {total - reading:.2f} s checking and "
            f"storing); rolled back."
        )
