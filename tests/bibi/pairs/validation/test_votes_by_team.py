"""One team never decides a rival's pair: one vote per team and pair (in the queue, at the
vote and in the database), skips capped and counted, no skipping once validation closed,
labels that ignore case, and one answer kept of simultaneous answers (issue 31)."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, connection, transaction
from rest_framework.test import APIClient

from bibi.pairs import validation
from bibi.pairs.models import LabelValidation
from bibi.pairs.validation import services
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Membership, SharedTask

from ...conftest import build_cast
from ...evaluation.test_run_requests import at_once
from ..conftest import start_contests, start_phase_now, submit
from .conftest import invited_validator, validation_on


def teammate(team, name: str):
    """A second member of ``team``."""
    user = get_user_model().objects.create_user(name, password=f"pw-{name}-123")
    Membership.objects.create(team=team, user=user, shared_task=team.shared_task)
    return user


@pytest.mark.django_db
def test_the_queue_never_hands_a_pair_to_a_second_member_of_one_team(cast, rival, entries):
    """Three members of one team skipping until they hold one rival pair: the second and the
    third are never handed a pair the first holds or voted on."""
    team, olivia = rival
    olaf, oona = teammate(team, "olaf"), teammate(team, "oona")
    first = services.validation_next(shared_task=cast.shared_task, user=olivia)
    # While Olivia holds it, and after she voted, no teammate is ever handed her pair.
    for member in (olaf, oona):
        while (
            item := services.validation_next(shared_task=cast.shared_task, user=member)
        ) is not None:
            assert item.pair_id != first.pair_id
            services.validation_skip(validation_id=item.id, user=member)
    services.validation_submit(validation_id=first.id, user=olivia, label="negative")
    LabelValidation.objects.filter(validator__in=[olaf, oona]).delete()
    for member in (olaf, oona):
        handed = []
        while (
            item := services.validation_next(shared_task=cast.shared_task, user=member)
        ) is not None:
            handed.append(item.pair_id)
            services.validation_submit(validation_id=item.id, user=member, label="positive")
        assert first.pair_id not in handed
    state = validation.validation_queue_state(shared_task=cast.shared_task, user=olaf)
    assert state["available"] == 0
    votes = LabelValidation.objects.filter(pair_id=first.pair_id, status="done")
    assert [vote.team_id for vote in votes] == [team.id]


@pytest.mark.django_db
def test_a_vote_is_refused_when_a_teammate_voted_on_the_pair(cast, rival, entries):
    """A pair handed out before its holder joined a team (so with no team then): the vote
    rechecks the team and is refused once a teammate has voted; nothing is stored."""
    team, olivia = rival
    item = services.validation_next(shared_task=cast.shared_task, user=olivia)
    services.validation_submit(validation_id=item.id, user=olivia, label="negative")
    vera = invited_validator(cast)
    early = LabelValidation.objects.create(
        pair_id=item.pair_id, validator=vera, role="validator", team=None
    )
    Membership.objects.create(team=team, user=vera, shared_task=cast.shared_task)
    with pytest.raises(ValidationError, match="one vote per team"):
        services.validation_submit(validation_id=early.id, user=vera, label="negative")
    early.refresh_from_db()
    assert (early.status, early.label, early.team_id) == ("assigned", "", None)


@pytest.mark.django_db
def test_the_database_holds_one_vote_per_team_and_pair(cast, rival, entries):
    team, olivia = rival
    olaf = teammate(team, "olaf")
    item = services.validation_next(shared_task=cast.shared_task, user=olivia)
    assert item.team_id == team.id
    with pytest.raises(IntegrityError), transaction.atomic():
        LabelValidation.objects.create(
            pair_id=item.pair_id, validator=olaf, role="breaker", team=team
        )
    # Invited validators (no team) are each their own team.
    for name in ("vera", "wim"):
        LabelValidation.objects.create(
            pair_id=item.pair_id, validator=invited_validator(cast, name), role="validator"
        )


@pytest.mark.django_db
def test_skips_are_capped_and_counted(cast, rival, entries, settings):
    settings.VALIDATION_SKIPS_MAX = 2
    vera = invited_validator(cast)
    for _ in range(2):
        item = services.validation_next(shared_task=cast.shared_task, user=vera)
        services.validation_skip(validation_id=item.id, user=vera)
    item = services.validation_next(shared_task=cast.shared_task, user=vera)
    with pytest.raises(ValidationError, match="skipped 2 pairs"):
        services.validation_skip(validation_id=item.id, user=vera)
    item.refresh_from_db()
    assert item.status == "assigned"
    # The answer still goes in; the organizers read the skips.
    services.validation_submit(validation_id=item.id, user=vera, label="positive")
    rows = {
        row["username"]: row
        for row in validation.validator_agreement_list(shared_task=cast.shared_task)
    }
    assert (rows["vera"]["skipped"], rows["vera"]["validations"]) == (2, 1)
    client = APIClient()
    client.force_authenticate(vera)
    again = services.validation_next(shared_task=cast.shared_task, user=vera)
    answer = client.post(f"/api/v1/validations/{again.id}/skip/")
    assert answer.status_code == 400 and "skipped 2 pairs" in answer.content.decode()


@pytest.mark.django_db
def test_skipping_after_validation_closed_is_refused(cast, rival, entries):
    vera = invited_validator(cast)
    item = services.validation_next(shared_task=cast.shared_task, user=vera)
    start_phase_now(cast.shared_task, "results")
    with pytest.raises(ValidationError, match="closed"):
        services.validation_skip(validation_id=item.id, user=vera)
    item.refresh_from_db()
    assert item.status == "assigned"
    task_services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, validation_mode="off"
    )
    with pytest.raises(PermissionDenied):
        services.validation_skip(validation_id=item.id, user=vera)


@pytest.mark.django_db
def test_a_label_ignores_case(cast, rival, entries):
    vera = invited_validator(cast)
    item = services.validation_next(shared_task=cast.shared_task, user=vera)
    services.validation_submit(validation_id=item.id, user=vera, label=" Positive ")
    item.refresh_from_db()
    assert (item.status, item.label) == ("done", "positive")
    client = APIClient()
    client.force_authenticate(invited_validator(cast, "wim"))
    handed = client.post("/api/v1/shared-tasks/sst/validation/next/").json()
    answer = client.post(
        f"/api/v1/validations/{handed['id']}/", {"label": "NEGATIVE"}, format="json"
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["label"] == "negative"


@pytest.mark.django_db(transaction=True)
def test_eight_answers_at_once_to_one_pair_keep_the_first_and_refuse_the_rest():
    if connection.vendor != "postgresql":
        pytest.skip("threads on their own connections need a server database")
    cast = build_cast()
    submit(cast)
    start_contests(cast.shared_task)
    validation_on(cast.shared_task, cast.organizer)
    vera = invited_validator(cast)
    shared_task = SharedTask.objects.get(pk=cast.shared_task.pk)
    item = services.validation_next(shared_task=shared_task, user=vera)
    labels = iter(["positive", "negative"] * 4)
    lock = threading.Lock()

    def answer():
        with lock:
            label = next(labels)
        client = APIClient()
        client.force_authenticate(vera)
        response = client.post(f"/api/v1/validations/{item.id}/", {"label": label}, format="json")
        return response.status_code, label

    answers = at_once(answer, 8)

    assert not [each for each in answers if isinstance(each, Exception)], answers
    kept = [label for code, label in answers if code == 200]
    assert len(kept) == 1, answers
    assert sorted(code for code, _ in answers) == [200] + [400] * 7
    item.refresh_from_db()
    assert (item.status, item.label) == ("done", kept[0])


@pytest.mark.django_db
def test_every_vote_is_listed_for_the_organizers_alone(cast, rival, entries):
    team, olivia = rival
    item = services.validation_next(shared_task=cast.shared_task, user=olivia)
    services.validation_submit(validation_id=item.id, user=olivia, label="negative", note="=1+1")
    client = APIClient()
    client.force_authenticate(cast.organizer)
    answer = client.get("/api/v1/shared-tasks/sst/validation/votes/")
    assert answer.status_code == 200
    (row,) = answer.json()["rows"]
    assert (row["pair_id"], row["validator"], row["validator_team"], row["label"]) == (
        item.pair_id,
        "olivia",
        "OSU",
        "negative",
    )
    assert row["pair_team"] == item.pair.pair_set.team.name and row["submitted_at"]
    for user in (olivia, cast.breaker, cast.builder, invited_validator(cast)):
        client.force_authenticate(user)
        assert client.get("/api/v1/shared-tasks/sst/validation/votes/").status_code in (403, 404)
