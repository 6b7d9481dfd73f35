"""A task in its contest phase with label validation on: two breaker teams' entries, an
invited validator, and helpers that label pairs through the pages, as a validator does."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.test import Client

from bibi.pairs.models import LabelValidation, Pair, PairSet
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Team
from bibi.systems import services as system_services
from bibi.systems.models import SystemVersion

from ..conftest import Cast, build_cast
from ..pairs.conftest import start_phase_now, submit

# The second breaker team's entry: three pairs, none of them the first team's.
DELFT_PAIRS = [
    {"original_id": "s1", "variant_text": "I hate this movie!", "variant_label": "negative"},
    {
        "original_id": "s2",
        "variant_text": "[Bettis] has a smoldering, humorless intensity that's riveting.",
        "variant_label": "positive",
        "rationale": "A word of praise where the fear was",
        "tags": "semantics",
    },
    {
        "original_id": "s3",
        "variant_text": "It's harmless, sure, and it's also charming.",
        "variant_label": "positive",
    },
]
QUEUE = "/tasks/sst/validate/"


@dataclass
class ValidationScene:
    cast: Cast
    delft: Team
    dora: object  # Delft's member
    val: object  # an invited validator, in no team
    utrecht_entry: PairSet
    delft_entry: PairSet


def build_validation_scene(*, votes_per_pair: int = 2) -> ValidationScene:
    """The cast's task with both breaker teams' entries submitted in the break phase, then
    the contest phase begun (validation runs between the two), validation of every pair on
    with ``votes_per_pair`` votes a pair, and a validator let in by a validator's link."""
    cast = build_cast()
    users = get_user_model().objects
    dora = users.create_user("dora", password="pw-dora-123")
    val = users.create_user("val", password="pw-val-123")
    delft = task_services.team_create(
        shared_task=cast.shared_task, owner=dora, kind="breaker", name="Delft"
    )
    utrecht_entry = submit(cast)
    delft_entry = submit(cast, DELFT_PAIRS, team=delft, user=dora)
    start_phase_now(cast.shared_task, "contest")
    task_services.shared_task_update(
        shared_task=cast.shared_task,
        actor=cast.organizer,
        validation_mode="all",
        validations_per_pair=votes_per_pair,
    )
    link = task_services.task_invitation_create(
        shared_task=cast.shared_task, actor=cast.organizer, note="validators", grants_validator=True
    )
    task_services.task_invitation_accept(token=link.token, user=val)
    cast.shared_task.refresh_from_db()
    return ValidationScene(cast, delft, dora, val, utrecht_entry, delft_entry)


def add_ready_system(cast: Cast) -> None:
    """A builder system with a ready version, so that the task can be scored."""
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="cnn", kind="hosted"
    )
    system.active_version = SystemVersion.objects.create(
        system=system, number=1, status=SystemVersion.Status.READY, dev_accuracy=0.8
    )
    system.save()


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def handed(user) -> LabelValidation | None:
    """The pair handed to ``user`` and not answered yet."""
    return (
        LabelValidation.objects.filter(validator=user, status=LabelValidation.Status.ASSIGNED)
        .select_related("pair__pair_set")
        .first()
    )


def label_all(client: Client, user, answer) -> list[Pair]:
    """Through the pages: ask for a pair, then label each one handed until the queue is
    finished; ``answer(pair)`` gives the vote's form fields. The pairs labelled, in order."""
    labelled = []
    response = client.post(f"{QUEUE}next/")
    assert response.status_code == 302, response.content[:300]
    while (item := handed(user)) is not None:
        response = client.post(f"{QUEUE}{item.id}/", answer(item.pair))
        assert response.status_code == 302, response.content.decode()[:2000]
        labelled.append(item.pair)
    return labelled
