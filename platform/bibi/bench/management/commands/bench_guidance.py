"""``manage.py bench_guidance``: the boundary ranking of a large starter set.

Builds a task whose starter set is ``--originals`` SST-2 test (then dev) sentences (2,000 by default) with
``--systems`` ready hosted systems (5), each with real starter cells (label, probabilities,
λmax, word leverage) computed here by ``fim_engine`` from the tiny fixture models (bow, cnn,
bilstm, bert, taken in turn), as validation would store them. Then it times
``boundary_ranking`` (best of ``--repeats``) and the first page of
``GET .../guidance/`` with its SQL queries, and checks that no Celery task was sent: the
ranking reads cells, it computes none. Everything lives in one transaction rolled back at the
end.

``--part suggest`` (needs ``REDIS_URL``): a hosted MiniLM-L6 (a fresh two-label head) on
``--texts`` SST-2 test originals, a real ``gpu`` worker process, and ``POST .../guidance/suggest/``
for each original one at a time, the request waiting for its task: the latency per original end
to end, beside ``fim_engine.suggest`` on the same model in this process (the library's own
figures are ``python -m fim_engine bench-suggest``'s, in ``fim_engine/README.md``). That task is
committed (the worker reads it) and deleted afterwards.

    $ DATABASE_URL=postgres://... REDIS_URL=redis://... GUIDANCE_SUGGEST_THROTTLE=1000/minute \
        python manage.py bench_guidance
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

from celery.signals import before_task_publish
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext, override_settings
from rest_framework.authtoken.models import Token

from bibi.bench.support import phases_around_now
from bibi.guidance.ranking import boundary_ranking
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Dataset, Example, Team
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.tasktypes.items import text_digest

SST2 = Path(settings.BASE_DIR).parent / "shared" / "data" / "sst2"
# Test sentences first, then dev ones: SST-2 test has 1,821 distinct sentences.
SST2_FILES = [SST2 / "stsa.binary.test", SST2 / "stsa.binary.dev"]
TINY_MODELS = Path(settings.BASE_DIR) / "fixtures" / "fim_engine" / "models"
ARCHITECTURES = ["tiny-bow", "tiny-cnn", "tiny-bilstm", "tiny-bert"]


def _sst_sentences(limit: int) -> list[tuple[str, str]]:
    rows: dict[str, str] = {}
    for path in SST2_FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            label, _, text = line.partition(" ")
            if text.strip():
                rows.setdefault(text.strip(), ["negative", "positive"][int(label)])
    if len(rows) < limit:
        raise CommandError(f"SST-2 test and dev have {len(rows)} distinct sentences, not {limit}")
    return list(rows.items())[:limit]


class Command(BaseCommand):
    help = "Times the guidance ranking of a 2,000-original starter set with 5 hosted systems."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--part", choices=["all", "ranking", "suggest"], default="all")
        parser.add_argument("--texts", type=int, default=30, help="originals for --part suggest")
        parser.add_argument("--originals", type=int, default=2000)
        parser.add_argument("--systems", type=int, default=5)
        parser.add_argument("--repeats", type=int, default=3)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["part"] in ("all", "ranking"):
            self._ranking(options)
        if options["part"] in ("all", "suggest"):
            self._suggest(options["texts"])

    def _ranking(self, options: dict[str, Any]) -> None:
        sent: list[str] = []

        def record(sender=None, **_: Any) -> None:
            sent.append(str(sender))

        with transaction.atomic():
            shared_task, organizer, built = self._task(options["originals"], options["systems"])
            before_task_publish.connect(record, weak=False)
            try:
                self._measure(shared_task, organizer, options["repeats"])
            finally:
                before_task_publish.disconnect(record)
            transaction.set_rollback(True)
        if sent:
            raise CommandError(f"the ranking sent Celery tasks: {sorted(set(sent))}")
        self.stdout.write(f"(building the data: {built:.0f} s; no Celery task was sent)\n")

    def _task(self, originals: int, systems: int):
        import fim_engine

        started = time.perf_counter()
        suffix = secrets.token_hex(4)
        organizer = get_user_model().objects.create_user(f"bench-guidance-{suffix}")
        shared_task = task_services.shared_task_create(
            creator=organizer, name=f"Guidance benchmark {suffix}", slug=f"bench-guide-{suffix}"
        )
        phases_around_now(shared_task, "break")
        dataset = task_services.dataset_get_or_create(
            shared_task=shared_task, split=Dataset.Split.STARTER
        )
        rows = _sst_sentences(originals)
        examples = Example.objects.bulk_create(
            Example(dataset=dataset, external_id=f"t{i}", text=text, label=label, position=i)
            for i, (text, label) in enumerate(rows)
        )
        texts = [example.text for example in examples]
        for index in range(systems):
            team = Team.objects.create(
                shared_task=shared_task, kind="builder", name=f"Builders {index}", alias=f"A{index}"
            )
            system = System.objects.create(
                shared_task=shared_task, team=team, name=f"system {index}", kind="hosted"
            )
            version = SystemVersion.objects.create(system=system, number=1, status="ready")
            System.objects.filter(id=system.id).update(active_version=version)
            loaded = fim_engine.load_system(TINY_MODELS / ARCHITECTURES[index % len(ARCHITECTURES)])
            labels = loaded.labels
            Prediction.objects.bulk_create(
                (
                    Prediction(
                        system_version=version,
                        source=Prediction.Source.STARTER,
                        example=example,
                        text=example.text,
                        text_sha256=text_digest(example.text),
                        label=result.label,
                        probabilities=dict(
                            zip(labels, map(float, result.probabilities), strict=True)
                        ),
                        lambda_max=result.lambda_max,
                        hints=[[word, score] for word, score in result.hints],
                        leverage=[[word, score] for word, score in result.leverage],
                        truncated=result.truncated,
                    )
                    for example, result in zip(
                        examples, loaded.fisher(texts, hints=True), strict=True
                    )
                ),
                batch_size=2000,
            )
        return shared_task, organizer, time.perf_counter() - started

    def _measure(self, shared_task, organizer, repeats: int) -> None:
        for with_words in (True, False):
            timings = []
            for _ in range(repeats):
                started = time.perf_counter()
                with CaptureQueriesContext(connection) as queries:
                    ranking = boundary_ranking(shared_task, with_words=with_words)
                timings.append(time.perf_counter() - started)
            self.stdout.write(
                f"Boundary ranking of {len(ranking)} originals x {len(ranking[0].systems)} hosted "
                f"systems ({connection.vendor}, {'with' if with_words else 'without'} words): "
                f"best {min(timings):.2f} s of {repeats} "
                f"(all: {', '.join(f'{t:.2f}' for t in timings)}), "
                f"{len(queries.captured_queries)} queries\n"
            )
        token = Token.objects.create(user=organizer)
        client = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
        url = f"/api/v1/shared-tasks/{shared_task.slug}/guidance/"
        with override_settings(ALLOWED_HOSTS=["testserver"]):
            client.get(url, secure=True)  # warm: URL resolver, serializers, the schema's imports
            for query in ("", "?order=confidence&label=positive&page_size=100"):
                started = time.perf_counter()
                with CaptureQueriesContext(connection) as queries:
                    response = client.get(url + query, secure=True)
                elapsed = time.perf_counter() - started
                if response.status_code != 200:
                    raise CommandError(f"GET {url + query} answered {response.status_code}")
                self.stdout.write(
                    f"GET guidance/{query}: {elapsed:.2f} s, {len(queries.captured_queries)} queries\n"
                )

    def _suggest(self, texts: int) -> None:
        from bibi.bench.suggest import bench_suggest

        bench_suggest(rows=_sst_sentences(texts), out=self.stdout)
