"""The cast every platform test speaks of, built the same way everywhere.

``cast`` gives one shared task ("sst") with its phases, datasets and teams, and the people
around it: an organizer, the organizer of another task, a builder, a breaker, an outsider
and an anonymous visitor. Permission tests read as "the breaker cannot see ...".
"""

from __future__ import annotations

from collections.abc import Callable
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
