"""A task ready to score, built the way people build one: through the services.

``build_scored_task`` gives the cast's task after its break phase, with two builder teams
(Strawman: hosted ``cnn`` on tiny-cnn and self-reported ``by hand``; Melbourne: hosted
``bow`` on tiny-bow), each hosted version validated, and two breaker teams whose entries
share originals (Utrecht: the four BACKGROUND.md pairs; OSU: three more edits of s1, s3, s4).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from bibi.pairs import services as pair_services
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Team
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services
from bibi.systems import validation
from bibi.systems.models import System, SystemVersion

from ...conftest import sent_where_no_worker_reads
from ..conftest import BLIND_DEV, Cast, build_cast
from ..pairs.conftest import GOOD_PAIRS, pair_inputs, start_phase_now
from ..systems.conftest import TINY_MODELS, archive_upload

OSU_PAIRS = [
    {"original_id": "s1", "variant_text": "I loved this movie!", "variant_label": "positive",
     "tags": "morphosyntax"},
    {"original_id": "s3", "variant_text": "It's harmless, sure, and it's also charming.",
     "variant_label": "positive", "tags": "semantics"},
    {"original_id": "s4", "variant_text": "Russell is terrible as coach Herb Brooks.",
     "variant_label": "negative", "tags": "semantics"},
]  # fmt: skip

# What the self-reported system says: right on every original, "positive" on every variant.
SELF_REPORTED_DEV = {"d1": "positive", "d2": "positive", "d3": "positive"}


@dataclass
class ScoredTask:
    cast: Cast
    melbourne: Team
    melbourne_builder: object
    osu: Team
    osu_breaker: object
    cnn: System
    bow: System
    by_hand: System

    @property
    def shared_task(self):
        return self.cast.shared_task

    @property
    def hosted_versions(self) -> list[SystemVersion]:
        return [self.cnn.versions.get(), self.bow.versions.get()]


def hosted_version(cast: Cast, team: Team, user, name: str, model: str | Path) -> System:
    """A hosted system with one validated version of ``model`` (a tiny model's name, or a
    model directory)."""
    system = system_services.system_create(team=team, actor=user, name=name, kind="hosted")
    directory = model if isinstance(model, Path) else TINY_MODELS / model
    with sent_where_no_worker_reads():
        version = system_services.system_version_upload(
            system=system, actor=user, archive=archive_upload(directory)
        )
    version = validation.system_version_validate(version_id=version.id)
    assert version.status == "ready", version.failure_detail
    system.refresh_from_db()
    return system


def build_scored_task(*, validate=hosted_version, self_reported_dev: bool = True) -> ScoredTask:
    cast = build_cast(current_phase="build")
    users = get_user_model().objects
    melbourne_builder = users.create_user("mel", password="pw-mel-123")
    osu_breaker = users.create_user("olivia", password="pw-olivia-123")
    melbourne = task_services.team_create(
        shared_task=cast.shared_task, owner=melbourne_builder, kind="builder", name="Melbourne"
    )
    osu = task_services.team_create(
        shared_task=cast.shared_task, owner=osu_breaker, kind="breaker", name="OSU"
    )
    cnn = validate(cast, cast.builder_team, cast.builder, "cnn", "tiny-cnn")
    bow = validate(cast, melbourne, melbourne_builder, "bow", "tiny-bow")
    by_hand = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="by hand", kind="self_reported"
    )
    if self_reported_dev:
        rows = "id,label\n" + "".join(
            f"{eid},{SELF_REPORTED_DEV[eid]}\n" for eid, _, _ in BLIND_DEV
        )
        system_predictions.system_predictions_upload(
            system=by_hand,
            actor=cast.builder,
            data=rows.encode(),
            filename="dev.csv",
            source="blind_dev",
        )
        by_hand.refresh_from_db()

    start_phase_now(cast.shared_task, "break")
    pair_services.pair_set_submit(
        team=cast.breaker_team, user=cast.breaker, pairs=pair_inputs(GOOD_PAIRS)
    )
    pair_services.pair_set_submit(team=osu, user=osu_breaker, pairs=pair_inputs(OSU_PAIRS))
    start_phase_now(cast.shared_task, "contest")
    return ScoredTask(cast, melbourne, melbourne_builder, osu, osu_breaker, cnn, bow, by_hand)


def score_now(task, trigger: str = "organizer"):
    """A run of ``task`` taken to its end in this process (what ``manage.py score`` does)."""
    from bibi.evaluation import compute, services

    run = services.scoring_run_request(shared_task=task.shared_task, trigger=trigger, send=False)
    return compute.scoring_run_complete(run_id=run.id)


def relabel(task: ScoredTask, variant_text: str, label: str):
    """Utrecht contests the pair of ``variant_text``; the organizer relabels it (the API)."""
    from bibi.pairs.models import Pair

    pair = Pair.objects.filter(variant_text=variant_text).latest("id")
    contest = task.cast.client("breaker").post(
        f"/api/v1/pairs/{pair.id}/contests/", {"reason": "The label is wrong."}, format="json"
    )
    assert contest.status_code == 201, contest.json()
    decided = task.cast.client("organizer").post(
        f"/api/v1/contests/{contest.json()['id']}/adjudicate/",
        {"decision": "relabel", "new_label": label, "note": "Read again."},
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    return pair


def cell_of(item, system) -> dict:
    """What ``system`` said of a stored item: {original, variant, outcome}."""
    from bibi.evaluation.table_rows import item_cells

    tables = item.snapshot.tables
    return item_cells(item, tables["vocabulary"], tables["item_systems"])[system.id]


def resubmit_osu(task: ScoredTask, extra: list[dict]) -> None:
    """OSU's entry again, with ``extra`` pairs after its own (during a reopened break)."""
    start_phase_now(task.shared_task, "break")
    pair_services.pair_set_submit(
        team=task.osu, user=task.osu_breaker, pairs=pair_inputs([*OSU_PAIRS, *extra])
    )
    start_phase_now(task.shared_task, "contest")


def upload_self_reported_pairs(task: ScoredTask) -> None:
    """The self-reported system's pair predictions: right on originals, positive on variants."""
    from bibi.pairs.selectors import pairs_effective

    pairs = pairs_effective(shared_task=task.shared_task)
    labels = {pair["variant_text"]: "positive" for pair in pairs}
    labels |= {pair["original_text"]: pair["original_label"] for pair in pairs}
    rows = "text,label\n" + "".join(
        f'"{text.replace(chr(34), chr(34) * 2)}",{label}\n'
        for text, label in sorted(labels.items())
    )
    system_predictions.system_predictions_upload(
        system=task.by_hand,
        actor=task.cast.builder,
        data=rows.encode(),
        filename="pairs.csv",
        source="pairs",
    )


@pytest.fixture
def scored_task(db) -> ScoredTask:
    return build_scored_task()


@pytest.fixture(scope="module")
def module_scored_task(kept_rows) -> ScoredTask:
    return kept_rows(build_scored_task)


@pytest.fixture
def shared_scored_task(module_scored_task, db) -> ScoredTask:
    """``scored_task`` built once for the module (``kept_rows``); each test has a copy of its
    own, and what it changes is undone after it."""
    return copy.deepcopy(module_scored_task)


@pytest.fixture
def ready_cnn(db):
    """The cast in its build phase, with a ready hosted cnn: (cast, system)."""
    cast = build_cast(current_phase="build")
    return cast, hosted_version(cast, cast.builder_team, cast.builder, "cnn", "tiny-cnn")


def direct_report(task: ScoredTask, *, models: dict[str, Path] | None = None):
    """What ``scoring.score`` says when every input is made here, without the platform's cells:
    the pairs as the database holds them, the tiny models run directly on every text, the
    self-reported labels as uploaded, and dev accuracies counted on the blind dev set.

    Systems and teams are named by their ids, as in the snapshot.
    """
    import pandas as pd

    import fim_engine
    import scoring
    from bibi.pairs.selectors import pairs_effective

    shared_task = task.shared_task
    shared_task.refresh_from_db()
    pairs = pairs_effective(shared_task=shared_task)
    texts = sorted({p["original_text"] for p in pairs} | {p["variant_text"] for p in pairs})
    frame = pd.DataFrame(
        {
            "pair_id": [p["pair_id"] for p in pairs],
            "team": [str(p["team_id"]) for p in pairs],
            "original_id": [p["original_external_id"] for p in pairs],
            "original_text": [p["original_text"] for p in pairs],
            "original_label": [p["original_label"] for p in pairs],
            "variant_text": [p["variant_text"] for p in pairs],
            "variant_label": [p["variant_label"] for p in pairs],
            "tags": [";".join(p["tags"]) for p in pairs],
        }
    )
    models = models or {"cnn": TINY_MODELS / "tiny-cnn", "bow": TINY_MODELS / "tiny-bow"}
    rows, weights = [], []
    dev_texts = [text for _, text, _ in BLIND_DEV]
    dev_gold = [label for _, _, label in BLIND_DEV]
    for system in (task.cnn, task.bow):
        loaded = fim_engine.load_system(models[system.name])
        rows += [
            {"system": str(system.id), "text": text, "label": label}
            for text, label in zip(texts, loaded.predict(texts).labels, strict=True)
        ]
        dev = loaded.predict(dev_texts).labels
        weights.append(sum(p == g for p, g in zip(dev, dev_gold, strict=True)) / len(dev_gold))
    originals = {p["original_text"]: p["original_label"] for p in pairs}
    rows += [
        {"system": str(task.by_hand.id), "text": text, "label": originals.get(text, "positive")}
        for text in texts
    ]
    by_hand_dev = [SELF_REPORTED_DEV[eid] for eid, _, _ in BLIND_DEV]
    weights.append(sum(p == g for p, g in zip(by_hand_dev, dev_gold, strict=True)) / len(dev_gold))
    return scoring.score(
        frame,
        pd.DataFrame(rows),
        weights=pd.DataFrame(
            {"system": [str(s.id) for s in (task.cnn, task.bow, task.by_hand)], "weight": weights}
        ),
        weight=shared_task.weight_mode,
        break_rate=shared_task.break_rate_mode,
        labels=list(shared_task.labels),
    )


def assert_leaderboards_match(published: dict, expected) -> None:
    """The published builder and breaker leaderboards (API JSON) against a direct report."""
    import pytest

    builders = {row["system_id"]: row for row in published["builders"]}
    assert len(builders) == len(expected.builders)
    for row in expected.builders.to_dict("records"):
        mine = builders[int(row["system"])]
        for column in ("f1", "accuracy", "broken_pct", "breaks", "pairs", "both_wrong"):
            assert mine[column] == pytest.approx(row[column]), (row["system"], column)
    breakers = {row["team_id"]: row for row in published["breakers"]}
    assert len(breakers) == len(expected.breakers)
    for row in expected.breakers.to_dict("records"):
        assert breakers[int(row["team"])]["score"] == pytest.approx(row["score"]), row["team"]
        assert breakers[int(row["team"])]["pairs"] == row["pairs"]
    assert [row["team_id"] for row in published["breakers"]] == [
        int(team) for team in expected.breakers["team"]
    ]


# --- Real processes: a broker of its own, and separate gpu and default workers ---------------


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A redis-server of the test's own, without persistence: stopping it loses every message."""

    def __init__(self, directory: Path) -> None:
        self.port = free_port()
        self.directory = directory
        self.process = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        import subprocess
        import time

        import redis

        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", str(self.directory)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


class Worker:
    """One ``celery worker`` process (in its own process group) and its log."""

    def __init__(self, name: str, process, log_path: Path) -> None:
        self.name = name
        self.process = process
        self.log_path = log_path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def received(self, task_name: str) -> int:
        return self.log().count(f"Task {task_name}[")

    def kill(self) -> None:
        """``kill -9`` the worker and its pool children at once."""
        import os
        import signal

        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        import os
        import signal
        import subprocess

        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.kill()


class Stack:
    """Workers on the test database and a broker of the test's own; this process sends there too.

    ``env`` adds settings for the workers (they read them from the environment at start).
    """

    def __init__(self, directory: Path, broker: RedisServer, env: dict[str, str]) -> None:
        self.directory = directory
        self.broker = broker
        self.env = env
        self.workers: list[Worker] = []

    def start(
        self, name: str, queue: str, *, beat: bool = False, own: dict[str, str] | None = None
    ) -> Worker:
        """Start a worker; ``own`` adds settings for this one alone (its own VAR_DIR)."""
        import os
        import subprocess
        import sys
        import time
        import uuid

        from django.conf import settings
        from django.db import connection

        from bibi.celery import app

        from ...conftest import _database_url

        hostname = f"{name}-{uuid.uuid4().hex[:6]}@localhost"
        log_path = self.directory / f"{name}-{len(self.workers)}.log"
        env = dict(os.environ)
        env.update(
            DJANGO_SETTINGS_MODULE="bibi.settings_test",
            BIBI_TEST_BACKEND="services",
            DATABASE_URL=_database_url(connection.settings_dict),
            REDIS_URL=self.broker.url,
            VAR_DIR=str(settings.VAR_DIR),
            **self.env,
        )
        env.update(own or {})
        command = [
            sys.executable, "-m", "celery", "-A", "bibi", "worker", "-Q", queue,
            "--concurrency", "1", "--pool", "prefork", "--hostname", hostname,
            "--without-gossip", "--without-mingle", "-l", "info",
        ]  # fmt: skip
        if beat:
            command += ["--beat", "--schedule", str(self.directory / f"beat-{uuid.uuid4().hex}")]
        with log_path.open("w") as log:
            process = subprocess.Popen(
                command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        worker = Worker(name, process, log_path)
        self.workers.append(worker)
        # Generous: on a loaded machine Django, Celery and their imports take a while.
        deadline = time.monotonic() + 180
        while not app.control.ping(destination=[hostname], timeout=0.5):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"worker {name} did not start:\n{worker.log()[-3000:]}")
        return worker

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()


def point_celery_at(url: str | None):
    """Make this process's Celery app send to ``url`` (None: back to the settings' broker)."""
    from django.conf import settings

    from bibi.celery import app

    # Dropped, not closed: kombu's registry keeps each broker's pools, and a closed one would
    # be handed out again when this process goes back to the settings' broker.
    app._pool = None
    app.amqp._producer_pool = None
    app.conf.broker_url = url or settings.CELERY_BROKER_URL


@pytest.fixture
def stack_factory(transactional_db, tmp_path):
    """``stack_factory(**env)`` → a ``Stack`` on a fresh redis-server; all stopped after."""
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there are no workers")
    made: list[tuple[Stack, RedisServer]] = []

    def make(**env: str) -> Stack:
        broker = RedisServer(tmp_path)
        broker.start()
        point_celery_at(broker.url)
        stack = Stack(tmp_path, broker, {key: str(value) for key, value in env.items()})
        made.append((stack, broker))
        return stack

    yield make
    for stack, broker in made:
        stack.close()
        broker.stop()
    point_celery_at(None)
