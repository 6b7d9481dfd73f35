"""``manage.py bench_pair_sets``: time one request that checks and stores a big pair-set file.

Everything it creates (users, a shared task in its break phase, a starter set, a breaker
team, the pairs) lives in one transaction that is rolled back at the end, so it can run
against any database, the production one included, and leaves nothing behind.

    $ DATABASE_URL=postgres://... python manage.py bench_pair_sets --pairs 10000
    10000 pairs (1.2 MB CSV) checked and stored in one request: 1.84 s, 31 queries (postgresql)
"""

from __future__ import annotations

import io
import random
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import get_resolver
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bibi.files.csv_out import csv_writer
from bibi.pairs.models import Pair
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Example

ADJECTIVES = ["gripping", "tender", "clumsy", "witty", "bleak", "lush", "tedious", "brisk"]
NOUNS = ["grief", "memory", "family", "war", "love", "money", "faith", "youth"]
SWAPS = ["dull", "moving", "odd", "warm", "cold", "bold", "loud", "quiet", "stale", "fresh"]


@dataclass(frozen=True)
class BenchResult:
    pairs: int
    file_bytes: int
    seconds: float
    queries: int
    status_code: int


def starter_text(index: int, rng: random.Random) -> str:
    adjective, other = rng.sample(ADJECTIVES, 2)
    noun = rng.choice(NOUNS)
    return (
        f"review {index} : a {adjective} , {other} film about {noun} that never quite "
        f"finds its footing , but the cast is {rng.choice(ADJECTIVES)} ."
    )


def pair_file(*, pairs: int, starter: int, seed: int = 7) -> tuple[list[tuple[str, str]], bytes]:
    """A starter set of ``starter`` sentences and a CSV of ``pairs`` variants of them.

    Each variant replaces one word of its original (a different word for each variant of
    the same original), so every pair passes the default checks and no variant repeats.
    """
    rng = random.Random(seed)
    originals = [(f"st{i}", starter_text(i, rng)) for i in range(starter)]
    buffer = io.StringIO()
    # Uploaded as a pair set by the benchmark, never downloaded: written as it is.
    writer = csv_writer(buffer, neutralize=False, lineterminator="\n")
    writer.writerow(["original_id", "variant_text", "variant_label", "rationale", "tags"])
    for n in range(pairs):
        original_id, text = originals[n % starter]
        words = text.split(" ")
        position = 3 + (n // starter) % (len(words) - 4)
        words[position] = f"{SWAPS[n % len(SWAPS)]}{n // starter}"
        writer.writerow(
            [original_id, " ".join(words), ("negative", "positive")[n % 2], "one word", "semantics"]
        )
    return originals, buffer.getvalue().encode()


def run_benchmark(*, pairs: int = 10_000, starter: int = 2_000) -> BenchResult:
    """Build a throwaway task, upload the file through the API, roll everything back."""
    suffix = secrets.token_hex(4)
    with transaction.atomic():
        users = get_user_model().objects
        organizer = users.create_user(f"bench-organizer-{suffix}")
        breaker = users.create_user(f"bench-breaker-{suffix}")
        shared_task = task_services.shared_task_create(
            creator=organizer,
            name=f"Pair benchmark {suffix}",
            slug=f"bench-pairs-{suffix}",
            max_pairs_per_set=max(pairs, 10_000),
        )
        now = timezone.now()
        task_services.phase_create(
            shared_task=shared_task,
            actor=organizer,
            kind="break",
            starts_at=now - timedelta(days=1),
            ends_at=now + timedelta(days=1),
        )
        dataset = task_services.dataset_get_or_create(shared_task=shared_task, split="starter")
        originals, data = pair_file(pairs=pairs, starter=starter)
        Example.objects.bulk_create(
            Example(dataset=dataset, external_id=eid, text=text, label="positive", position=i)
            for i, (eid, text) in enumerate(originals)
        )
        task_services.team_create(
            shared_task=shared_task, owner=breaker, kind="breaker", name=f"Bench {suffix}"
        )
        token = Token.objects.create(user=breaker)
        client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
        url = f"/api/v1/shared-tasks/{shared_task.slug}/pair-sets/"
        upload = SimpleUploadedFile("bench.csv", data, content_type="text/csv")
        # A running server has its URLconf (and what the apps import) loaded already.
        get_resolver().url_patterns  # noqa: B018
        with (
            override_settings(ALLOWED_HOSTS=["testserver"]),
            CaptureQueriesContext(connection) as queries,
        ):
            started = time.perf_counter()
            response = client.post(url, {"file": upload})
            seconds = time.perf_counter() - started
        stored = Pair.objects.filter(pair_set__shared_task=shared_task).count()
        transaction.set_rollback(True)
    if response.status_code != 201 or stored != pairs:
        raise RuntimeError(
            f"the benchmark upload failed ({response.status_code}, {stored} pairs stored): "
            f"{response.content[:1000]!r}"
        )
    return BenchResult(
        pairs=pairs,
        file_bytes=len(data),
        seconds=seconds,
        queries=len(queries),
        status_code=response.status_code,
    )


class Command(BaseCommand):
    help = "Time one API request that checks and stores a pair-set file (nothing is kept)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pairs", type=int, default=10_000)
        parser.add_argument("--starter", type=int, default=2_000, help="Starter-set size.")
        parser.add_argument("--repeat", type=int, default=1)

    def handle(self, *args, pairs: int, starter: int, repeat: int, **options) -> None:
        for _ in range(repeat):
            result = run_benchmark(pairs=pairs, starter=starter)
            self.stdout.write(
                f"{result.pairs} pairs ({result.file_bytes / 2**20:.1f} MB CSV) checked and "
                f"stored in one request: {result.seconds:.2f} s, {result.queries} queries "
                f"({connection.vendor})"
            )
