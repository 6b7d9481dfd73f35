"""What the page tests share: a signed-in browser per role, and a task with something on
every page (systems in every status, a submitted set, a draft, an invitation)."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from bibi.pairs import services as pair_services
from bibi.pairs.models import PairSet
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Invitation, TaskInvitation
from bibi.systems import services as system_services
from bibi.systems.models import System, SystemVersion
from bibi.tasktypes.rules import PairInput

from ...conftest import REPO_ROOT
from ..conftest import Cast, build_cast
from ..pairs.conftest import submit

SLUG = "sst"
TASK = f"/tasks/{SLUG}/"
# Words that appear only in one team's private records: a page that shows them to anyone
# outside the team (and the organizers) leaks.
SECRET_SYSTEM = "quokka-cnn"
SECRET_FAILURE = "the label named LABEL_7 is unknown"
SECRET_DRAFT_VARIANT = "I adore this movie!"


def page_client(cast: Cast, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(getattr(cast, role))
    return client


@dataclass
class Scene:
    cast: Cast
    system: System
    ready: SystemVersion
    failed: SystemVersion
    pair_set: PairSet
    draft: PairSet
    invitation: Invitation
    task_invitation: TaskInvitation


def build_scene(cast: Cast) -> Scene:
    """The cast in the break phase, with a builder system that has a ready and a failed
    version, the breakers' submitted set (the four 2017 pairs) and a one-pair draft."""
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name=SECRET_SYSTEM, kind="hosted"
    )
    ready = SystemVersion.objects.create(
        system=system,
        number=1,
        status=SystemVersion.Status.READY,
        archive_name="cnn.zip",
        dev_accuracy=0.875,
        dev_macro_f1=0.86,
        dev_count=3,
    )
    failed = SystemVersion.objects.create(
        system=system,
        number=2,
        status=SystemVersion.Status.FAILED,
        archive_name="cnn-2.zip",
        failure_reason=SystemVersion.FailureReason.LABEL_MISMATCH,
        failure_detail=SECRET_FAILURE,
    )
    system.active_version = ready
    system.save()
    pair_set = submit(cast)
    pair_services.pair_add(
        team=cast.breaker_team,
        user=cast.breaker,
        pair=PairInput(
            row=0, original_id="s1", variant_text=SECRET_DRAFT_VARIANT, variant_label="positive"
        ),
    )
    draft = PairSet.objects.get(team=cast.breaker_team, status=PairSet.Status.DRAFT)
    invitation = task_services.invitation_create(team=cast.breaker_team, actor=cast.breaker)
    task_invitation = task_services.task_invitation_create(
        shared_task=cast.shared_task, actor=cast.organizer, note="a friend"
    )
    return Scene(cast, system, ready, failed, pair_set, draft, invitation, task_invitation)


@pytest.fixture
def scene(db) -> Scene:
    return build_scene(build_cast())


@pytest.fixture(scope="module")
def module_scene(kept_rows) -> Scene:
    return kept_rows(lambda: build_scene(build_cast()))


@pytest.fixture
def shared_scene(module_scene, db) -> Scene:
    """The module's scene (``kept_rows``), a copy of its own for each test: for modules whose
    tests read the scene, or change it and let the change be undone after them."""
    return copy.deepcopy(module_scene)


# --- The browser: Debian's Chromium driven by Playwright, against a live server ---------------

CHROMIUM = Path("/usr/bin/chromium")
# Headless, and nothing that reaches out to the network on its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = REPO_ROOT / "var" / "test-output" / "screenshots"
# Loaded from the live server, as a page's own scripts are: the pages' Content-Security-Policy
# refuses a script injected inline.
AXE_URL = "/static/vendor/axe-core/axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# Every wait in a browser test follows the page's state (a URL, a text, a count); these bounds
# are only safety nets, wide enough for a loaded two-core machine running six suites at once.
# PAGE_BOUND covers a page, a form post or a script's update; WORKER_BOUND what waits on the
# session's Celery worker (a validation, a scoring run, a guidance request).
PAGE_BOUND_MS = 90_000
WORKER_BOUND_MS = 600_000


@pytest.fixture
def browser(monkeypatch) -> Iterator[Any]:
    """Chromium for one test. Playwright's sync API keeps an asyncio loop running on this
    thread while it is started, and Django refuses ORM calls from such a thread: the test's
    own setup needs them, so they are allowed for this test only, and Playwright is stopped
    after it, so that no later test runs beside a loop."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: `make browser` installs Debian's chromium package "
            "(Playwright's own browser downloads are not used)."
        )
    from playwright.sync_api import expect, sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    expect.set_options(timeout=PAGE_BOUND_MS)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


class Screen:
    """One browser tab on the live server, saving numbered screenshots for its test."""

    def __init__(self, page: Any, base_url: str, folder: Path) -> None:
        self.page = page
        self.base_url = base_url
        self.folder = folder
        self.count = 0
        # What the browser refused under the pages' Content-Security-Policy, as it reports it
        # on the console ("Refused to execute inline script because it violates ...").
        self.csp_violations: list[str] = []
        page.on("console", self._note_csp_violation)

    def _note_csp_violation(self, message: Any) -> None:
        if "Content Security Policy" in message.text:
            self.csp_violations.append(f"{self.page.url}: {message.text}")

    def goto(self, path: str) -> Any:
        return self.page.goto(f"{self.base_url}{path}")

    def shot(self, name: str) -> Path:
        self.page.wait_for_load_state()
        self.count += 1
        path = self.folder / f"{self.count:02d}-{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def log_in(self, username: str, password: str) -> None:
        self.goto("/accounts/login/")
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name="Log in").click()
        self.page.wait_for_load_state()

    def axe_violations(self) -> list[dict[str, Any]]:
        """The serious and critical accessibility violations axe-core finds on the page."""
        # A page that a click has just opened may still be arriving: check the whole of it.
        self.page.wait_for_load_state()
        self.page.add_script_tag(url=f"{self.base_url}{AXE_URL}")
        result = self.page.evaluate("async () => await axe.run(document)")
        return [
            {
                "rule": violation["id"],
                "impact": violation["impact"],
                "help": violation["help"],
                "where": [node["target"] for node in violation["nodes"]][:5],
            }
            for violation in result["violations"]
            if violation["impact"] in ("serious", "critical")
        ]


@pytest.fixture
def worker(request):
    """A worker process where tasks go through the broker; none where they run in-process."""
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:
        return None
    from bibi.celery import app

    process = request.getfixturevalue("celery_worker_process")
    # The worker lives for the session; what earlier tests sent without one (their rows rolled
    # back since) must not keep it busy before this test's own work.
    app.control.purge()
    return process


@pytest.fixture
def screen(browser, live_server, settings, request) -> Iterator[Screen]:
    # The live server speaks plain http: cookies marked Secure would never come back.
    settings.SESSION_COOKIE_SECURE = False
    settings.CSRF_COOKIE_SECURE = False
    folder = SCREENSHOTS / request.node.name.replace("/", "_")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    context = browser.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.set_default_timeout(PAGE_BOUND_MS)
    page.set_default_navigation_timeout(PAGE_BOUND_MS)
    screen = Screen(page, live_server.url, folder)
    try:
        yield screen
    finally:
        context.close()
    # Every page a browser test opens keeps to the policy.
    assert screen.csp_violations == []


# --- A crowded task, for query counts and for following every link ---------------------------


def build_crowd(
    cast: Cast,
    *,
    systems: int = 20,
    breaker_teams: int = 10,
    pairs: int = 2000,
    starter: int = 200,
    contests: int = 30,
) -> None:
    """Fill the cast's task in bulk: ``systems`` hosted systems (three a builder team, each
    with a ready and a failed version), ``breaker_teams`` breaker teams (the cast's among
    them) sharing ``pairs`` submitted pairs (tagged; every third one changes the label), a
    ``starter``-sentence starter set, open contests, a draft and an invitation; then start
    the contest phase, and score the pairs and publish the snapshot (``score_crowd``), so
    every page has something to show."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from bibi.pairs.models import Contest, Pair
    from bibi.sharedtasks.models import Example, Membership, Team

    from ..pairs.conftest import start_phase_now

    task = cast.shared_task
    users = get_user_model().objects
    originals = Example.objects.bulk_create(
        Example(
            dataset=cast.starter,
            external_id=f"g{i}",
            text=f"The crowd's sentence number {i} is rather good .",
            label=task.labels[i % 2],
            position=100 + i,
        )
        for i in range(starter)
    )

    def crowd_teams(kind: str, count: int) -> list[Team]:
        made = Team.objects.bulk_create(
            Team(shared_task=task, kind=kind, name=f"{kind} {i}", alias=f"Hidden {kind} {i}")
            for i in range(count)
        )
        members = users.bulk_create(
            get_user_model()(username=f"{kind}-member-{i}") for i in range(count)
        )
        Membership.objects.bulk_create(
            Membership(team=team, user=user, shared_task=task, role=Membership.Role.OWNER)
            for team, user in zip(made, members, strict=True)
        )
        return made

    builder_teams = [cast.builder_team, *crowd_teams("builder", (systems - 1) // 3)]
    made_systems = System.objects.bulk_create(
        System(shared_task=task, team=builder_teams[i // 3], name=f"system {i}", kind="hosted")
        for i in range(systems)
    )
    versions = SystemVersion.objects.bulk_create(
        SystemVersion(
            system=system,
            number=number,
            status=status,
            dev_accuracy=0.8 if status == "ready" else None,
            failure_reason="" if status == "ready" else "model_error",
            failure_detail="" if status == "ready" else "the model raised on text 3",
        )
        for system in made_systems
        for number, status in ((1, "ready"), (2, "failed"))
    )
    for system in made_systems:
        system.active_version = next(v for v in versions if v.system_id == system.id)
    System.objects.bulk_update(made_systems, ["active_version"])

    breakers = [cast.breaker_team, *crowd_teams("breaker", breaker_teams - 1)]
    now = timezone.now()
    pair_sets = PairSet.objects.bulk_create(
        PairSet(
            shared_task=task,
            team=team,
            status=PairSet.Status.SUBMITTED,
            source=PairSet.Source.FILE,
            filename="crowd.csv",
            submitted_at=now - timedelta(days=2),
        )
        for team in breakers
    )
    draft = PairSet.objects.create(
        shared_task=task, team=cast.breaker_team, status=PairSet.Status.DRAFT, source="form"
    )

    def pair(pair_set: PairSet, row: int) -> Pair:
        original = originals[row % len(originals)]
        label = task.labels[(task.labels.index(original.label) + (row % 3 == 0)) % 2]
        return Pair(
            pair_set=pair_set,
            row=row + 2,
            original=original,
            original_text=original.text,
            original_label=original.label,
            variant_text=f"{original.text} Variant {row} of set {pair_set.id}.",
            variant_label=label,
            effective_label=label,
            edit_distance=3,
            tags=[task.strategy_tags[row % len(task.strategy_tags)]],
        )

    per_set = pairs // len(pair_sets)
    made_pairs = Pair.objects.bulk_create(
        pair(pair_set, row) for pair_set in pair_sets for row in range(per_set)
    )
    Pair.objects.bulk_create(pair(draft, row) for row in range(20))
    theirs = [p for p in made_pairs if p.pair_set_id != pair_sets[0].id]
    Contest.objects.bulk_create(
        Contest(pair=p, team=cast.builder_team, created_by=cast.builder, reason="Unclear label.")
        for p in theirs[:contests]
    )
    task_services.invitation_create(team=cast.breaker_team, actor=cast.breaker)
    task_services.task_invitation_create(shared_task=task, actor=cast.organizer, note="a friend")
    start_phase_now(task, "contest")
    score_crowd(cast)


def score_crowd(cast: Cast, *, publish: bool = True):
    """Every cell of the task's pairs for every ready system, made up in bulk (labels, λmax
    and probabilities that vary from text to text), then a scoring run taken to its end in
    this process and its snapshot published (unless not ``publish``): the results pages
    have data to show. Returns the snapshot."""
    from bibi.evaluation import services as evaluation_services
    from bibi.evaluation.matrix import active_versions, pair_items_by_digest
    from bibi.pairs.selectors import pairs_effective
    from bibi.systems.models import Prediction

    task = cast.shared_task
    items = pair_items_by_digest(task.kind, pairs_effective(shared_task=task))
    labels = task.labels
    Prediction.objects.bulk_create(
        (
            Prediction(
                system_version_id=version.version_id,
                source=Prediction.Source.PAIRS,
                **task.kind.item_fields(item),
                text_sha256=digest,
                label=labels[(n * 7 + i) % 5 % 2],
                probabilities={labels[0]: 0.3, labels[1]: 0.7},
                lambda_max=0.01 * ((n * 13 + i * 5) % 97 + 1),
                input_sha256=digest,
            )
            for i, version in enumerate(active_versions(shared_task=task))
            for n, (digest, item) in enumerate(items.items())
        ),
        batch_size=5000,
    )
    run = evaluation_services.scoring_run_request(
        shared_task=task, trigger="command", actor=cast.organizer, send=False
    )
    evaluation_services.scoring_run_advance(run_id=run.id, send=False)
    run = evaluation_services.scoring_run_score(run_id=run.id, send=False)
    assert run.status == "done", run.failure_reason
    if publish:
        evaluation_services.snapshot_publish(snapshot=run.snapshot, actor=cast.organizer)
    return run.snapshot
