"""Build the demo's shared task through the same services the site's users go through.

Organizer: create the task and its phases, import train, blind dev and starter sets.
Builder: one team, three hosted systems (bow, cnn, MiniLM) trained by fim_engine, uploaded as
archives and validated like any upload. Breakers: a team submitting this project's sample
pair set, and the automatic baseline breaker. Then the phases move on, the task is scored in
this process and the snapshot is published as the leaderboard.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from bibi.demo.data import DemoData
from bibi.demo.models import (
    ARCHITECTURES,
    TrainedModel,
    TrainedSpanModel,
    model_archive,
    model_train,
)
from bibi.evaluation import selectors as evaluation_selectors
from bibi.evaluation import services as evaluation_services
from bibi.evaluation.exports import TABLES
from bibi.evaluation.models import ScoringRun, Snapshot
from bibi.pairs import services as pair_services
from bibi.pairs.services import PairSetRejected
from bibi.sharedtasks import importing
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.systems import services as system_services
from bibi.systems.models import System, SystemVersion
from bibi.tasktypes import LABEL, SPAN, Parts

SLUG = "demo-sentiment"
# The second demo task, left open in its break phase so that a newcomer can play every role.
OPEN_SLUG = "demo-sentiment-open"
LABELS = ["negative", "positive"]
# Demo accounts: username → (password, what the account is for).
ACCOUNTS = {
    "organizer": ("demo-organizer", "organizes every demo task (dashboard, settings, scoring)"),
    "builder": ("demo-builder", "owns the builder team and its systems in every demo task"),
    "breaker": (
        "demo-breaker",
        "owns a breaker team in every demo task (sample pairs in the finished ones)",
    ),
}
BUILDER_TEAM = "Demo builders"
BREAKER_TEAM = "Demo breakers"
BASELINE_TEAM = "Baseline breaker"
BASELINE_PAIRS = 100
# SST-2 files label sentences 0 and 1.
SST2_LABEL_MAP = {"0": "negative", "1": "positive"}
# The problems of a refused file shown in the demo's error, before "and N more".
PROBLEMS_SHOWN = 5
VALIDATION_WAIT_SECONDS = 30 * 60

Say = Callable[[str], None]


class DemoError(Exception):
    """A step of the demo failed; the message says which and why."""


def demo_task() -> SharedTask | None:
    return SharedTask.objects.filter(slug=SLUG).first()


def open_task() -> SharedTask | None:
    return SharedTask.objects.filter(slug=OPEN_SLUG).first()


def demo_reset() -> None:
    """Remove the two sentiment demo tasks (everything hangs off them) and keep the accounts
    (the span task is reset by ``span_builder``)."""
    SharedTask.objects.filter(slug__in=[SLUG, OPEN_SLUG]).delete()


def accounts_ensure() -> dict[str, Any]:
    """The demo accounts, created or reset to their printed passwords."""
    users = {}
    User = get_user_model()
    for username, (password, _) in ACCOUNTS.items():
        user, _ = User.objects.get_or_create(
            username=username, defaults={"email": f"{username}@demo.invalid"}
        )
        user.set_password(password)
        user.is_active = True
        user.save()
        users[username] = user
    return users


def task_create(
    *,
    organizer: Any,
    data: DemoData,
    slug: str = SLUG,
    name: str = "Demo: sentiment, Build It Break It",
) -> SharedTask:
    """The sentiment task, open in its build phase; the later phases follow, a week each."""
    return task_with_phases_create(
        organizer=organizer,
        slug=slug,
        name=name,
        description=(
            "A sample shared task built by `make demo` from "
            f"{data.name}: three baseline systems (bag of words, CNN, fine-tuned MiniLM), a "
            "breaker team's hand-written minimal pairs and the automatic baseline breaker."
        ),
        labels=LABELS,
    )


def task_with_phases_create(
    *, organizer: Any, slug: str, name: str, description: str, **fields: Any
) -> SharedTask:
    """A task (``fields`` as ``shared_task_create`` takes them) open in its build phase since
    an hour ago; the later phases follow, a week each."""
    now = timezone.now()
    shared_task = task_services.shared_task_create(
        creator=organizer, name=name, slug=slug, description=description, **fields
    )
    start = now - timedelta(hours=1)
    for index, kind in enumerate(Phase.Kind.values):
        begins = start if index == 0 else now + timedelta(days=7 * index)
        task_services.phase_create(
            shared_task=shared_task,
            actor=organizer,
            kind=kind,
            starts_at=begins,
            ends_at=now + timedelta(days=7 * (index + 1)),
        )
    return shared_task


def examples_import(*, shared_task: SharedTask, organizer: Any, data: DemoData, say: Say) -> None:
    for split in ("train", "blind_dev", "starter"):
        path = data.files[split]
        report = importing.examples_import(
            shared_task=shared_task,
            split=split,
            actor=organizer,
            data=path.read_bytes(),
            filename=path.name,
            label_map=SST2_LABEL_MAP if data.layout == "sst2" else None,
        )
        say(f"  {split}: {report.created} examples from {path.name} ({report.file_format})")


def phase_advance(*, shared_task: SharedTask, organizer: Any, kind: str) -> None:
    """End the running ``kind`` phase now; the next one opens (as the organizer's button)."""
    phase = shared_task.phases.get(kind=kind)
    task_services.phase_close_now(phase=phase, actor=organizer)


def models_train(
    *,
    data: Any,
    say: Say,
    progress: bool,
    architectures: Sequence[str] = ARCHITECTURES,
    train: Callable[..., TrainedModel] | None = None,
) -> list[TrainedModel]:
    """Train (or find cached) the baselines: the sentiment tasks' three by default, or
    ``architectures`` with ``train(architecture, data, progress=)``."""
    train = train or model_train
    trained = []
    for architecture in architectures:
        started = time.monotonic()
        model = train(architecture, data, progress=progress)
        how = "cached" if model.cached else f"trained in {time.monotonic() - started:.0f} s"
        say(f"  {architecture}: {how}, dev accuracy {model.dev_accuracy:.1%}")
        trained.append(model)
    return trained


def systems_upload(
    *,
    shared_task: SharedTask,
    builder: Any,
    trained: Sequence[TrainedModel | TrainedSpanModel],
    say: Say,
) -> Team:
    """Upload each trained baseline as the builder would, in the builder team (created here)."""
    team = task_services.team_create(
        shared_task=shared_task, owner=builder, kind=Team.Kind.BUILDER, name=BUILDER_TEAM
    )
    for model in trained:
        system = system_services.system_create(
            team=team,
            actor=builder,
            name=model.architecture,
            kind=System.Kind.HOSTED,
        )
        version = system_services.system_version_upload(
            system=system,
            actor=builder,
            archive=model_archive(model.directory, f"{model.architecture}.zip"),
        )
        version = _validated(version)
        if version.status != SystemVersion.Status.READY:
            raise DemoError(
                f"The {model.architecture} system was refused by validation: "
                f"{version.failure_reason} {version.failure_detail}".strip()
            )
        say(f"  uploaded {system.name}: validated, {dev_figures(version)}")
    return team


def dev_figures(version: SystemVersion) -> str:
    """A version's blind-dev figures as the demo prints them (answers in a span task)."""
    return DEMO_FIGURES.of(version.system.team.shared_task.kind).dev(version)


@dataclass(frozen=True)
class DemoFigures:
    """How the terminal says a task's figures, by what its systems answer: a version's
    blind-dev figures, and what the builders' leaderboard measures (given the snapshot's
    settings)."""

    dev: Callable[[SystemVersion], str]
    scored: Callable[[dict[str, Any]], str]


DEMO_FIGURES: Parts[DemoFigures] = Parts("demo figures")
DEMO_FIGURES.register(
    LABEL,
    DemoFigures(
        dev=lambda version: f"blind-dev accuracy {_share(version.dev_accuracy).strip()}",
        scored=lambda used: "F1 and accuracy on the pairs' texts; accuracy on the blind dev set",
    ),
)
DEMO_FIGURES.register(
    SPAN,
    DemoFigures(
        dev=lambda version: (
            f"blind-dev answer accuracy {_share(version.dev_accuracy).strip()}, mean token F1 "
            f"{'—' if version.dev_token_f1 is None else f'{version.dev_token_f1:.2f}'}"
        ),
        scored=lambda used: (
            "mean token F1 and answer accuracy (answer mode "
            f"{used.get('answer_mode')}) on the pairs' items; answer accuracy on the blind dev set"
        ),
    ),
)


def _validated(version: SystemVersion) -> SystemVersion:
    """The version once its validation ended (at once on the embedded default, where it runs
    in-process; with a worker, when the worker is done)."""
    deadline = time.monotonic() + VALIDATION_WAIT_SECONDS
    done = {SystemVersion.Status.READY, SystemVersion.Status.FAILED}
    while version.status not in done:
        if time.monotonic() > deadline:
            raise DemoError(
                f"Validation of version {version.id} did not end within "
                f"{VALIDATION_WAIT_SECONDS // 60} minutes: is a worker on the gpu queue running?"
            )
        time.sleep(1)
        version.refresh_from_db()
    return version


def human_pairs_submit(
    *, shared_task: SharedTask, breaker: Any, pairs: Path | None, data_name: str, say: Say
) -> None:
    """The sample pair set ``pairs``, uploaded as a file by the breaker team (none when the
    data has none)."""
    team = task_services.team_create(
        shared_task=shared_task, owner=breaker, kind=Team.Kind.BREAKER, name=BREAKER_TEAM
    )
    if pairs is None:
        say(
            f"  {BREAKER_TEAM}: no sample pairs for {data_name} (fixtures/demo/pairs.tsv edits "
            "the fixture starter set); the team is there to try the pages"
        )
        return
    submission = pair_services.pair_set_upload(
        team=team,
        user=breaker,
        file=ContentFile(pairs.read_bytes(), name=pairs.name),
    )
    count = submission.pair_set.pair_count
    say(f"  {BREAKER_TEAM}: {count} pairs from {pairs.name}")


def baseline_pairs_submit(*, shared_task: SharedTask, say: Say, n: int = BASELINE_PAIRS) -> None:
    """The automatic baseline breaker as a second breaker team (at most ``n`` pairs)."""
    from bibi.baseline.breaker import baseline_breaker_run

    result = baseline_breaker_run(shared_task, team_name=BASELINE_TEAM, n=n)
    count = result.pair_set.pair_count
    say(
        f"  {BASELINE_TEAM}: {count} pairs built around the {result.originals} originals "
        f"nearest the boundary; {result.breaking} break at least one system"
    )


def break_and_publish(
    *,
    shared_task: SharedTask,
    users: dict[str, Any],
    pairs: Path,
    data_name: str,
    heuristic_pairs: Callable[[], None],
    baseline: Callable[[], None],
    say: Say,
) -> Snapshot:
    """From the end of the build phase to published results, as every finished demo task
    goes: the break phase opens, the breaker team uploads ``pairs`` and the baseline breaker
    enters (``baseline``), the break phase ends and the self-reported heuristic answers the
    pair items (``heuristic_pairs``), the contest phase ends, and every system is scored."""
    organizer = users["organizer"]
    phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.BUILD)
    say("Breakers: the break phase is open")
    human_pairs_submit(
        shared_task=shared_task, breaker=users["breaker"], pairs=pairs, data_name=data_name, say=say
    )
    baseline()
    phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.BREAK)
    heuristic_pairs()
    phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.CONTEST)
    say("Results: scoring every system on every pair")
    return results_publish(shared_task=shared_task, organizer=organizer, say=say)


def baseline_pairs_try(*, shared_task: SharedTask, say: Say, n: int) -> None:
    """``baseline_pairs_submit``, or what stopped it: a finished task stands without the
    baseline breaker (no candidate edit passed the task's checks, or no system can run one)."""
    try:
        baseline_pairs_submit(shared_task=shared_task, say=say, n=n)
    except ValidationError as error:
        say(f"  {BASELINE_TEAM}: no pairs, {problems(error)}")


def results_publish(*, shared_task: SharedTask, organizer: Any, say: Say) -> Snapshot:
    """Score in this process (the missing cells, then the scores) and publish the snapshot."""
    from bibi.evaluation import compute

    run = evaluation_services.scoring_run_request(
        shared_task=shared_task, trigger=ScoringRun.Trigger.COMMAND, actor=organizer, send=False
    )
    run = compute.scoring_run_complete(run_id=run.id)
    if run.status != ScoringRun.Status.DONE:
        raise DemoError(f"Scoring run {run.id} ended {run.status}: {run.failure_reason}")
    # The demo publishes what it scored; its leaderboards count any pair on a claimed label.
    snapshot = evaluation_services.snapshot_publish(
        snapshot=run.snapshot, actor=organizer, confirm=True
    )
    counts = snapshot.counts
    computed = counts["cells_computed"]
    kept = counts["cells"] - computed
    # The run that ends the break phase has usually computed them: say so, not "0 computed".
    cells = f"{computed} cells computed" + (f", {kept} already stored" if kept > 0 else "")
    say(
        f"  scoring run {run.id}: {counts['pairs']} pairs × {counts['systems']} systems, "
        f"{cells}; snapshot {snapshot.id} published"
    )
    return snapshot


def leaderboards_text(snapshot: Snapshot) -> str:
    """The published leaderboards as the terminal shows them."""
    viewer = evaluation_selectors.Viewer(private_teams=None, results_started=True)
    names = evaluation_selectors.names_for(viewer=viewer, snapshot=snapshot)
    settings_used = snapshot.settings_used
    what = DEMO_FIGURES.of(snapshot.shared_task.kind).scored(settings_used)
    lines = [
        f"Builders (ranked by the share of pairs that break the system, fewest first; {what}):",
        f"  {'#':>2}  {'system':<28} {'F1':>6} {'acc':>6} {'broken':>7} {'dev acc':>8}",
    ]
    for row in TABLES["builders"].as_json(snapshot, names):
        lines.append(
            f"  {row['rank']:>2}  {row['system']:<28} {_share(row['f1'])} {_share(row['accuracy'])} "
            f"{_pct(row['broken_pct'], width=7)} {_share(row['dev_accuracy'], width=8)}"
        )
    lines += [
        "",
        f"Breakers (break rate per {settings_used['break_rate_mode']}, weighted by "
        f"{settings_used['weight_mode']}):",
        f"  {'#':>2}  {'team':<28} {'pairs':>5} {'score':>7}",
    ]
    for row in TABLES["breakers"].as_json(snapshot, names):
        score = "—" if row["score"] is None else f"{row['score']:.2f}"
        lines.append(f"  {row['rank']:>2}  {row['team']:<28} {row['pairs']:>5} {score:>7}")
    return "\n".join(lines)


def problems(error: Exception) -> str:
    messages = getattr(error, "messages", None) or [str(error)]
    shown = "; ".join(messages[:PROBLEMS_SHOWN])
    more = (getattr(error, "error_count", None) or len(messages)) - PROBLEMS_SHOWN
    return f"{shown}; and {more} more" if more > 0 else shown


def _pct(value: float | None, width: int = 6) -> str:
    """A percentage (0-100): the share of pairs that break a system."""
    if value is None:
        return f"{'—':>{width}}"
    return f"{value:>{width - 1}.1f}%"


def _share(value: float | None, width: int = 6) -> str:
    """A share (0-1), shown as a percentage: F1, accuracy, dev accuracy."""
    return _pct(None if value is None else value * 100, width)


def open_task_build(
    *, users: dict[str, Any], data: DemoData, trained: list[TrainedModel], say: Say
) -> SharedTask:
    """The second demo task, left in its break phase: the same data and the same trained
    systems (uploaded and validated in its build phase), an empty breaker team for the
    ``breaker`` account; the organizer closes the phases from the pages."""
    organizer = users["organizer"]
    say(f"Creating the task '{OPEN_SLUG}', left open in its break phase")
    with transaction.atomic():
        shared_task = task_create(
            organizer=organizer,
            data=data,
            slug=OPEN_SLUG,
            name="Demo (open): sentiment, break it yourself",
        )
        examples_import(shared_task=shared_task, organizer=organizer, data=data, say=say)
    systems_upload(shared_task=shared_task, builder=users["builder"], trained=trained, say=say)
    phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.BUILD)
    task_services.team_create(
        shared_task=shared_task, owner=users["breaker"], kind=Team.Kind.BREAKER, name=BREAKER_TEAM
    )
    say(f"  {BREAKER_TEAM}: no pairs yet; the break phase is open at /tasks/{OPEN_SLUG}/")
    return shared_task


def demo_build(*, data: DemoData, say: Say = print, progress: bool = True) -> Snapshot:
    """Build, score and publish the demo task from ``data``; the published snapshot. Raises
    DemoError on a failed step; a task left half-built is removed, so the next run starts
    again."""
    users = accounts_ensure()
    organizer = users["organizer"]
    try:
        say(f"Creating the task '{SLUG}' from {data.name} ({data.directory})")
        with transaction.atomic():
            shared_task = task_create(organizer=organizer, data=data)
            examples_import(shared_task=shared_task, organizer=organizer, data=data, say=say)
        say("Builders: three baseline systems")
        trained = models_train(data=data, say=say, progress=progress)
        systems_upload(shared_task=shared_task, builder=users["builder"], trained=trained, say=say)
        phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.BUILD)
        say("Breakers: the break phase is open")
        human_pairs_submit(
            shared_task=shared_task,
            breaker=users["breaker"],
            pairs=data.pairs,
            data_name=data.name,
            say=say,
        )
        baseline_pairs_submit(shared_task=shared_task, say=say)
        phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.BREAK)
        phase_advance(shared_task=shared_task, organizer=organizer, kind=Phase.Kind.CONTEST)
        say("Results: scoring every system on every pair")
        snapshot = results_publish(shared_task=shared_task, organizer=organizer, say=say)
        open_task_build(users=users, data=data, trained=trained, say=say)
    except (ValidationError, PermissionDenied, PairSetRejected) as error:
        demo_reset()
        raise DemoError(f"The demo could not be built: {problems(error)}") from error
    except BaseException:
        demo_reset()
        raise
    return snapshot
