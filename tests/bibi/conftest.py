"""The cast every platform test speaks of, built the same way everywhere.

``cast`` gives one shared task ("sst") with its phases, datasets and teams, and the people
around it: an organizer, the organizer of another task, a builder, a breaker, an outsider
and an anonymous visitor. Permission tests read as "the breaker cannot see ...".

``shared_cast`` is the same cast built once for a whole module (``kept_rows``): for modules
of many tests that each only need the cast to be there.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from bibi.sharedtasks import services
from bibi.sharedtasks.models import Dataset, Example, SharedTask, Team

STARTER = [
    ("s1", "I love this movie!", "positive"),
    ("s2", "[Bettis] has a smoldering, humorless intensity that's unnerving.", "negative"),
    ("s3", "It's harmless, sure, but it's also charmless.", "negative"),
    ("s4", "Russell is terrific as coach Herb Brooks.", "positive"),
]
BLIND_DEV = [
    ("d1", "a gripping , beautifully acted film .", "positive"),
    ("d2", "one long string of cliches .", "negative"),
    ("d3", "the plot is thin but the jokes land .", "positive"),
]
TRAIN = [
    ("t1", "a stirring , funny and finally transporting re-imagining .", "positive"),
    ("t2", "apparently reassembled from the cutting-room floor .", "negative"),
]
# A blind-dev label spelled so no other text in the cast contains it by chance.
SECRET_LABEL_TEXTS = {"d1", "d2", "d3"}


@dataclass
class Cast:
    shared_task: SharedTask
    other_task: SharedTask
    organizer: object
    other_organizer: object
    builder: object
    breaker: object
    outsider: object
    builder_team: Team
    breaker_team: Team
    starter: Dataset
    blind_dev: Dataset
    train: Dataset

    @property
    def anonymous(self) -> AnonymousUser:
        return AnonymousUser()

    def client(self, who: str) -> APIClient:
        client = APIClient()
        if who != "anonymous":
            user = getattr(self, who)
            token, _ = Token.objects.get_or_create(user=user)
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client


ROLES = ["organizer", "other_organizer", "builder", "breaker", "outsider", "anonymous"]


def _dataset(shared_task: SharedTask, split: str, rows: list[tuple[str, str, str]]) -> Dataset:
    dataset = services.dataset_get_or_create(shared_task=shared_task, split=split)
    Example.objects.bulk_create(
        Example(dataset=dataset, external_id=eid, text=text, label=label, position=i)
        for i, (eid, text, label) in enumerate(rows)
    )
    return dataset


def phases_around_now(shared_task: SharedTask, actor, *, current: str = "break") -> None:
    """Lay the four phases out so that ``current`` is running now."""
    order = ["build", "break", "contest", "results"]
    now = timezone.now()
    start = now - timedelta(days=1) - timedelta(days=10 * order.index(current))
    for kind in order:
        services.phase_create(
            shared_task=shared_task,
            actor=actor,
            kind=kind,
            starts_at=start,
            ends_at=start + timedelta(days=10),
        )
        start += timedelta(days=10)


def label_datasets(shared_task: SharedTask) -> tuple[Dataset, Dataset, Dataset]:
    """The label cast's starter, blind dev and train sets (``STARTER``, ``BLIND_DEV``, ``TRAIN``)."""
    return (
        _dataset(shared_task, "starter", STARTER),
        _dataset(shared_task, "blind_dev", BLIND_DEV),
        _dataset(shared_task, "train", TRAIN),
    )


def build_cast(
    *,
    current_phase: str = "break",
    name: str = "SST sentiment",
    slug: str = "sst",
    datasets: Callable[[SharedTask], tuple[Dataset, Dataset, Dataset]] = label_datasets,
    **task_fields: Any,
) -> Cast:
    """The cast around one task: ``task_fields`` go to ``shared_task_create`` (a span task
    passes its ``task_type``, see ``spancast``), ``datasets`` fills its starter, blind dev and
    train sets."""
    users = get_user_model().objects
    organizer = users.create_user("olga", password="pw-olga-123")
    other_organizer = users.create_user("otto", password="pw-otto-123")
    builder = users.create_user("bea", password="pw-bea-123")
    breaker = users.create_user("brian", password="pw-brian-123")
    outsider = users.create_user("oscar", password="pw-oscar-123")

    shared_task = services.shared_task_create(
        creator=organizer, name=name, slug=slug, **task_fields
    )
    other_task = services.shared_task_create(
        creator=other_organizer, name="Other task", slug="other"
    )
    phases_around_now(shared_task, organizer, current=current_phase)
    builder_team = services.team_create(
        shared_task=shared_task, owner=builder, kind="builder", name="Strawman"
    )
    breaker_team = services.team_create(
        shared_task=shared_task, owner=breaker, kind="breaker", name="Utrecht"
    )
    starter, blind_dev, train = datasets(shared_task)
    return Cast(
        shared_task=shared_task,
        other_task=other_task,
        organizer=organizer,
        other_organizer=other_organizer,
        builder=builder,
        breaker=breaker,
        outsider=outsider,
        builder_team=builder_team,
        breaker_team=breaker_team,
        starter=starter,
        blind_dev=blind_dev,
        train=train,
    )


@pytest.fixture
def cast(db) -> Cast:
    return build_cast()


# --- Rows built once for a module -----------------------------------------------------------

# The modules whose shared rows are in place now (at most one: pytest runs a module's tests
# together, and ends a module's fixtures before the next module's tests).
_MODULES_KEEPING_ROWS: list[str] = []


@pytest.fixture(scope="module")
def kept_rows(request, django_db_setup, django_db_blocker) -> Iterator[Callable[[Callable], Any]]:
    """Build rows once for every test of the module: ``kept_rows(build)`` runs ``build`` and
    returns what it returns.

    The rows live in a transaction opened for the module and rolled back after its last test.
    Each test's own transaction (pytest-django's ``db``) is a savepoint inside it, so whatever
    a test writes is undone after it, as ever, and the next test finds the rows as built (the
    way Django's ``TestCase.setUpTestData`` works). Give each test a deep copy of the objects
    ``build`` returned, so that no test sees another's changes to them in memory.

    Rules for a module that uses it: every test of the module sees the rows, so no test there
    may build rows of the same names itself (the cast's users, the "sst" task), and the
    module builds one set (``kept_rows`` refuses a second); no test there may commit
    (``transactional_db``, ``live_server``, a worker): ``pytest_runtest_setup`` below fails it.
    """
    from django.db import transaction

    with django_db_blocker.unblock():
        block = transaction.atomic()
        block.__enter__()
    _MODULES_KEEPING_ROWS.append(request.module.__name__)
    built: list[Callable] = []

    def keep(build: Callable[[], Any]) -> Any:
        if built:
            pytest.fail(
                f"{request.module.__name__} already keeps rows ({built[0].__qualname__}): "
                "a module keeps one set"
            )
        built.append(build)
        with django_db_blocker.unblock():
            return build()

    try:
        yield keep
    finally:
        _MODULES_KEEPING_ROWS.remove(request.module.__name__)
        with django_db_blocker.unblock():
            transaction.set_rollback(True)
            block.__exit__(None, None, None)


def _commits(item: pytest.Item) -> bool:
    """Whether pytest-django runs ``item`` on committed transactions (``transactional_db``,
    which ``live_server`` asks for when the test starts, or a marker that says so)."""
    names = set(getattr(item, "fixturenames", ()))
    marker = item.get_closest_marker("django_db")
    flags = ("transaction", "reset_sequences")
    return bool(
        names & {"transactional_db", "live_server"}
        or (marker and any(marker.kwargs.get(flag) for flag in flags))
    )


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test that commits would commit into the module's kept rows, where no other
    connection (a worker, a live server) sees them: it belongs in a module of its own."""
    kept = _MODULES_KEEPING_ROWS or ("kept_rows" in getattr(item, "fixturenames", ()))
    if kept and _commits(item):
        pytest.fail(
            f"{item.nodeid} commits (transactional_db) in a module that keeps rows for all "
            "its tests (kept_rows): move the test to a module without them"
        )


@pytest.fixture(scope="module")
def module_cast(kept_rows) -> Cast:
    return kept_rows(build_cast)


@pytest.fixture
def shared_cast(module_cast, db) -> Cast:
    """The module's cast (``kept_rows``), a copy of its own for each test."""
    return copy.deepcopy(module_cast)


@pytest.fixture(scope="module")
def module_geometry(kept_rows, tmp_path_factory):
    from .guidance.guidance_conftest import build_geometry_task

    return kept_rows(lambda: build_geometry_task(tmp_path_factory.mktemp("geometry")))


@pytest.fixture
def geometry(module_geometry, db):
    """The guidance's geometry task (``guidance_conftest.build_geometry_task``: two validated
    bag-of-words systems), built once for the module (``kept_rows``); each test has a copy of
    its own, and what it changes is undone after it."""
    return copy.deepcopy(module_geometry)


@pytest.fixture(scope="session")
def qa_dir(tmp_path_factory: pytest.TempPathFactory):
    """A tiny random extractive QA model with MiniLM's tokenizer, built once per session
    (``spancast.tiny_qa_model``)."""
    from .spancast import tiny_qa_model

    return tiny_qa_model(tmp_path_factory.mktemp("tiny-qa"))


def query_count(client: APIClient, url: str, **params: object) -> int:
    """How many SQL queries one GET of ``url`` costs (asserting it answers 200).

    A list endpoint must cost the same whatever the size of the list: compare this at two
    sizes of the same data.
    """
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, params)
    assert response.status_code == 200, response.content[:500]
    return len(queries.captured_queries)
