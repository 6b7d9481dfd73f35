"""``bench_evaluation --part rescore``: a re-score of many systems and pairs whose cells are
all known (no ``gpu`` task), then every leaderboard endpoint's queries and time."""

from __future__ import annotations

import random
import secrets
import time
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from django.urls import get_resolver
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bibi.bench.support import phases_around_now
from bibi.evaluation import services
from bibi.evaluation.models import CellChunk
from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Dataset, Example, SharedTask, Team
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.tasktypes.items import text_digest

LABELS = ["negative", "positive"]
LEADERBOARD = [
    "leaderboard/",
    "leaderboard/builders/",
    "leaderboard/breakers/",
    "leaderboard/breaker_systems/",
    "leaderboard/matrix/",
    "leaderboard/tags/",
    "leaderboard/flips/",
    "leaderboard/both_wrong/",
    "leaderboard/lambda_delta/",
    "leaderboard/lambda_correlation/",
    "leaderboard/lambda_auc/",
    "leaderboard/lambda_quartiles/",
    "leaderboard/items/",
    "leaderboard/items/?format=csv",
    "leaderboard/builders/?format=csv",
    "leaderboard/export/",
]


def _synthetic_task(*, systems: int, pairs: int, teams: int, starter: int, seed: int = 3):
    """A task after its break phase with ``pairs`` pairs and every cell of ``systems`` known."""
    rng = random.Random(seed)
    suffix = secrets.token_hex(4)
    users = get_user_model().objects
    organizer = users.create_user(f"bench-organizer-{suffix}")
    shared_task = task_services.shared_task_create(
        creator=organizer,
        name=f"Re-score benchmark {suffix}",
        slug=f"bench-rescore-{suffix}",
        max_pairs_per_set=pairs,
    )
    phases_around_now(shared_task, "results")
    examples = _starter(shared_task, rng, starter)
    pair_rows = _pairs(shared_task, rng, examples, pairs=pairs, teams=teams, suffix=suffix)
    _systems_with_cells(shared_task, rng, examples, pair_rows, systems=systems, suffix=suffix)
    return shared_task, organizer


def _starter(shared_task: SharedTask, rng: random.Random, starter: int) -> list[Example]:
    dataset = task_services.dataset_get_or_create(
        shared_task=shared_task, split=Dataset.Split.STARTER
    )
    return Example.objects.bulk_create(
        Example(
            dataset=dataset,
            external_id=f"s{i}",
            text=f"review {i} : a {rng.choice(['witty', 'bleak', 'lush'])} film about "
            f"{rng.choice(['grief', 'love', 'money'])} , and the cast is fine .",
            label=rng.choice(LABELS),
            position=i,
        )
        for i in range(starter)
    )


def _pairs(
    shared_task: SharedTask,
    rng: random.Random,
    examples: list[Example],
    *,
    pairs: int,
    teams: int,
    suffix: str,
) -> list[Pair]:
    """``pairs`` pairs over the starter set, dealt in turn to ``teams`` breaker teams' sets."""
    breaker_teams = [
        Team.objects.create(
            shared_task=shared_task, kind="breaker", name=f"Breakers {t}", alias=f"B{t} {suffix}"
        )
        for t in range(teams)
    ]
    submitted = timezone.now() - timedelta(days=15)
    sets = [
        PairSet.objects.create(
            shared_task=shared_task, team=team, source="api", submitted_at=submitted
        )
        for team in breaker_teams
    ]
    tags = shared_task.strategy_tags
    pair_rows = []
    for n in range(pairs):
        example = examples[n % len(examples)]
        label = rng.choice(LABELS)
        pair_rows.append(
            Pair(
                pair_set=sets[n % teams],
                row=n + 2,
                original=example,
                original_text=example.text,
                original_label=example.label,
                variant_text=example.text.replace("review", f"review v{n}", 1),
                variant_label=label,
                effective_label=label,
                edit_distance=1,
                tags=[rng.choice(tags)],
            )
        )
    Pair.objects.bulk_create(pair_rows, batch_size=5000)
    return pair_rows


def _systems_with_cells(
    shared_task: SharedTask,
    rng: random.Random,
    examples: list[Example],
    pair_rows: list[Pair],
    *,
    systems: int,
    suffix: str,
) -> None:
    """``systems`` systems (every fifth self-reported), four per builder team, each with a
    cell for every starter and pair text."""
    builder_teams = [
        Team.objects.create(
            shared_task=shared_task, kind="builder", name=f"Builders {b}", alias=f"A{b} {suffix}"
        )
        for b in range((systems + 3) // 4)
    ]
    rows = [(example.text, example.label, example) for example in examples] + [
        (pair.variant_text, pair.variant_label, None) for pair in pair_rows
    ]
    cells = []
    for s in range(systems):
        hosted = s % 5 != 4
        system = System.objects.create(
            shared_task=shared_task,
            team=builder_teams[s // 4],
            name=f"system {s}",
            kind=System.Kind.HOSTED if hosted else System.Kind.SELF_REPORTED,
        )
        version = SystemVersion.objects.create(
            system=system,
            number=1,
            status="ready",
            dev_accuracy=rng.uniform(0.6, 0.9),
            dev_count=872,
        )
        System.objects.filter(id=system.id).update(active_version=version)
        cells += _cells(version, rng, rows, hosted=hosted)
    Prediction.objects.bulk_create(cells, batch_size=10_000)


def _cells(
    version: SystemVersion,
    rng: random.Random,
    rows: list[tuple[str, str, Example | None]],
    *,
    hosted: bool,
) -> list[Prediction]:
    """One system's cells: right on each text with a probability drawn once for it."""
    skill = rng.uniform(0.6, 0.9)
    cells = []
    for text, gold, example in rows:
        right = rng.random() < skill
        cells.append(
            Prediction(
                system_version=version,
                source="starter" if hosted and example is not None else "pairs",
                example=example if hosted else None,
                text=text,
                text_sha256=text_digest(text),
                label=gold if right else LABELS[1 - LABELS.index(gold)],
                probabilities={"negative": 0.3, "positive": 0.7} if hosted else None,
                lambda_max=rng.expovariate(1.0) if hosted else None,
                input_sha256=secrets.token_hex(32) if hosted else "",
            )
        )
    return cells


def bench_rescore(*, systems: int, pairs: int, out) -> dict[str, Any]:
    with transaction.atomic():
        started = time.perf_counter()
        shared_task, organizer = _synthetic_task(
            systems=systems, pairs=pairs, teams=4, starter=2000
        )
        built = time.perf_counter() - started
        chunks = CellChunk.objects.count()

        started = time.perf_counter()
        run = services.scoring_run_request(shared_task=shared_task, trigger="organizer", send=False)
        run = services.scoring_run_advance(run_id=run.id, send=False)
        advanced = time.perf_counter() - started
        started = time.perf_counter()
        run = services.scoring_run_score(run_id=run.id, send=False)
        scored = time.perf_counter() - started
        if run.status != "done" or CellChunk.objects.count() != chunks:
            raise CommandError(
                f"the re-score did not finish without cells to compute: {run.status} {run.failure_reason}"
            )
        snapshot = run.snapshot
        services.snapshot_publish(snapshot=snapshot, actor=organizer, confirm=True)
        out.write(
            f"Re-score of {systems} systems x {pairs} pairs ({snapshot.counts['texts']} texts, "
            f"{snapshot.counts['cells']} cells, all known; no gpu task):\n"
            f"  request + read the matrix: {advanced:.2f} s; score + store the snapshot: "
            f"{scored:.2f} s; total {advanced + scored:.2f} s (building the data: {built:.0f} s)\n"
            f"Leaderboard endpoints on that snapshot ({connection.vendor}), queries and time:\n"
        )
        token = Token.objects.create(user=organizer)
        clients = {
            "anonymous": Client(),
            "organizer": Client(HTTP_AUTHORIZATION=f"Token {token.key}"),
        }
        get_resolver().url_patterns  # noqa: B018
        counts: dict[str, dict[str, int]] = {}
        with override_settings(ALLOWED_HOSTS=["testserver"]):
            for endpoint in LEADERBOARD:
                url = f"/api/v1/shared-tasks/{shared_task.slug}/{endpoint}"
                row = []
                for who, client in clients.items():
                    with CaptureQueriesContext(connection) as queries:
                        started = time.perf_counter()
                        response = client.get(url, secure=True)
                        seconds = time.perf_counter() - started
                    if response.status_code != 200:
                        raise CommandError(f"{url} answered {response.status_code} to {who}")
                    counts.setdefault(endpoint, {})[who] = len(queries)
                    row.append(f"{who} {len(queries)} queries {seconds:.2f} s")
                out.write(f"  {endpoint:<36} {'; '.join(row)}\n")
        transaction.set_rollback(True)
    return {"advance_seconds": advanced, "score_seconds": scored, "queries": counts}
