"""The validation queue: concurrency, quotas, skipping, expiry, scope, settings, permissions."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection
from django.utils import timezone

from bibi.pairs import validation
from bibi.pairs.models import Contest, LabelValidation
from bibi.pairs.validation import services
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import SharedTask

from ...conftest import ROLES, build_cast
from ...evaluation.test_run_requests import at_once
from ..conftest import start_contests, start_phase_now, submit
from .conftest import invited_validator, validation_on, votes_on

VALIDATION = "/api/v1/shared-tasks/sst/validation/"


@pytest.mark.django_db(transaction=True)
def test_eight_validators_asking_at_once_never_get_a_pair_more_often_than_it_needs():
    if connection.vendor != "postgresql":
        pytest.skip("threads on their own connections need a server database")
    cast = build_cast()
    submit(cast)
    start_contests(cast.shared_task)
    validation_on(cast.shared_task, cast.organizer, validations_per_pair=1)
    people = [invited_validator(cast, f"val{index}") for index in range(8)]
    shared_task = SharedTask.objects.get(pk=cast.shared_task.pk)

    queue, lock = iter(people), threading.Lock()

    def ask():
        with lock:
            user = next(queue)
        return services.validation_next(shared_task=shared_task, user=user)

    handed = at_once(ask, 8)

    assert not [item for item in handed if isinstance(item, Exception)], handed
    pairs = [item.pair_id for item in handed if item is not None]
    assert len(pairs) == 4 and len(set(pairs)) == 4  # four pairs, each handed out once
    assert LabelValidation.objects.count() == 4


@pytest.mark.django_db
def test_a_validator_stops_at_the_quota(cast, rival, entries):
    task_services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, validation_quota_per_validator=1
    )
    cast.shared_task.refresh_from_db()
    vera = invited_validator(cast)
    item = services.validation_next(shared_task=cast.shared_task, user=vera)
    services.validation_submit(validation_id=item.id, user=vera, label="positive")
    with pytest.raises(ValidationError, match="quota"):
        services.validation_next(shared_task=cast.shared_task, user=vera)
    state = validation.validation_queue_state(shared_task=cast.shared_task, user=vera)
    assert (state["role"], state["done"], state["quota"]) == ("validator", 1, 1)


@pytest.mark.django_db
def test_a_skipped_pair_is_never_handed_back_to_its_skipper_but_goes_to_others(cast, entries):
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    task_services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, validations_per_pair=1
    )
    cast.shared_task.refresh_from_db()
    first = services.validation_next(shared_task=cast.shared_task, user=vera)
    services.validation_skip(validation_id=first.id, user=vera)
    seen = set()
    while (item := services.validation_next(shared_task=cast.shared_task, user=vera)) is not None:
        seen.add(item.pair_id)
        services.validation_submit(validation_id=item.id, user=vera, label="positive")
    assert first.pair_id not in seen and len(seen) == 5
    assert services.validation_next(shared_task=cast.shared_task, user=wim).pair_id == first.pair_id


@pytest.mark.django_db
def test_a_pair_held_too_long_goes_back_to_the_queue(cast, entries, settings):
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    task_services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, validations_per_pair=1
    )
    cast.shared_task.refresh_from_db()
    held = services.validation_next(shared_task=cast.shared_task, user=vera)
    late = timezone.now() - timedelta(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES + 1)
    LabelValidation.objects.filter(id=held.id).update(assigned_at=late)
    handed = []
    while (item := services.validation_next(shared_task=cast.shared_task, user=wim)) is not None:
        handed.append(item.pair_id)
        services.validation_submit(validation_id=item.id, user=wim, label="positive")
    assert held.pair_id in handed
    with pytest.raises(LabelValidation.DoesNotExist):
        services.validation_submit(validation_id=held.id, user=vera, label="positive")


@pytest.mark.django_db
def test_a_bad_or_repeated_vote_is_refused_and_stores_nothing(cast, entries):
    vera = invited_validator(cast)
    item = services.validation_next(shared_task=cast.shared_task, user=vera)
    for kwargs, message in [
        ({"label": "neutral"}, "Give one of negative, positive"),
        ({"label": "positive", "unclear": True}, "unclear variant gets no label"),
        ({"label": "", "unclear": False}, "Give one of"),
        ({"label": "positive", "note": "x" * 2001}, "At most 2000"),
    ]:
        with pytest.raises(ValidationError, match=message):
            services.validation_submit(validation_id=item.id, user=vera, **kwargs)
    item.refresh_from_db()
    assert item.status == "assigned" and item.label == ""
    services.validation_submit(validation_id=item.id, user=vera, label="", unclear=True)
    with pytest.raises(ValidationError, match="already answered"):
        services.validation_submit(validation_id=item.id, user=vera, label="positive")


@pytest.mark.django_db
def test_the_vote_api_answers_404_for_a_pair_handed_to_someone_else(cast, entries):
    item = services.validation_next(shared_task=cast.shared_task, user=cast.organizer)
    answer = cast.client("breaker").post(
        f"/api/v1/validations/{item.id}/", {"label": "positive"}, format="json"
    )
    assert answer.status_code == 404
    mine = cast.client("organizer").post(
        f"/api/v1/validations/{item.id}/", {"label": "positive", "not_fluent": True}, format="json"
    )
    assert mine.status_code == 200 and mine.json()["not_fluent"] is True
    assert "variant_label" not in mine.json()
    history = cast.client("organizer").get(f"{VALIDATION}mine/").json()["results"]
    assert [row["id"] for row in history] == [item.id]


ORGANIZER_ONLY = ["pairs/", "validators/", "summary/"]


@pytest.mark.django_db
@pytest.mark.parametrize("who", ROLES)
@pytest.mark.parametrize("path", ORGANIZER_ONLY)
def test_only_organizers_read_every_pairs_votes_and_the_validators_agreement(
    cast, entries, who, path
):
    answer = cast.client(who).get(f"{VALIDATION}{path}")
    expected = {"organizer": 200, "anonymous": 401}.get(who, 403)
    assert answer.status_code == expected, (who, answer.content)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("who", "role", "status"),
    [
        ("organizer", "organizer", 200),
        ("breaker", "breaker", 200),
        ("builder", None, 403),
        ("outsider", None, 403),
        ("other_organizer", None, 403),
    ],
)
def test_who_may_take_a_pair_from_the_queue(cast, rival, entries, who, role, status):
    state = cast.client(who).get(VALIDATION).json()
    assert state["role"] == role
    assert cast.client(who).post(f"{VALIDATION}next/").status_code == status


@pytest.mark.django_db
def test_organizers_read_votes_agreement_and_alpha(cast, rival, entries):
    ours, _ = entries
    pair = ours.pairs.get(original__external_id="s1")
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    votes_on(
        pair, [cast.organizer, vera, wim], ["positive", "positive", "negative"], cast.shared_task
    )
    rows = {
        row["username"]: row
        for row in validation.validator_agreement_list(shared_task=cast.shared_task)
    }
    assert (rows["wim"]["compared"], rows["wim"]["agreed"], rows["wim"]["agreement"]) == (1, 0, 0.0)
    assert rows["vera"]["agreement"] == 1.0
    assert (
        next(iter(validation.validator_agreement_list(shared_task=cast.shared_task)))["username"]
        == "wim"
    )
    pairs = cast.client("organizer").get(f"{VALIDATION}pairs/?state=validated").json()["rows"]
    assert [row["pair_id"] for row in pairs] == [pair.id]
    assert pairs[0]["vote_labels"] == ["negative", "positive", "positive"]
    summary = cast.client("organizer").get(f"{VALIDATION}summary/").json()
    assert summary["counts"]["validated"] == 1 and summary["votes"] == 3
    assert summary["counts"]["pending"] == 5


@pytest.mark.django_db
def test_the_sampled_mode_validates_a_fixed_share_contested_and_unverified_pairs(
    cast, rival, entries
):
    ours, theirs = entries
    task_services.shared_task_update(
        shared_task=cast.shared_task,
        actor=cast.organizer,
        validation_mode="sampled",
        validation_sample_fraction=0.5,
    )
    cast.shared_task.refresh_from_db()
    states = validation.pair_validations(shared_task=cast.shared_task)
    sampled = {pair_id for pair_id in states if validation.in_sample(pair_id, 0.5)}
    assert {pair_id for pair_id, state in states.items() if state.in_scope} == sampled
    outside = sorted(set(states) - sampled)
    assert outside, "some pair lies outside a half sample"
    Contest.objects.create(pair_id=outside[0], team=rival[0], reason="Wrong.")
    ours.pairs.filter(id__in=outside[1:2]).update(label_unverified=True)
    theirs.pairs.filter(id__in=outside[1:2]).update(label_unverified=True)
    again = validation.pair_validations(shared_task=cast.shared_task)
    assert {pair_id for pair_id, state in again.items() if state.in_scope} == {
        *sampled,
        *outside[:2],
    }


@pytest.mark.django_db
def test_contested_mode_validates_only_contested_pairs(cast, rival, entries):
    ours, _ = entries
    task_services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, validation_mode="contested"
    )
    cast.shared_task.refresh_from_db()
    pair = ours.pairs.first()
    Contest.objects.create(pair=pair, team=rival[0], reason="Wrong.")
    states = validation.pair_validations(shared_task=cast.shared_task)
    assert [pair_id for pair_id, state in states.items() if state.in_scope] == [pair.id]
    assert states[ours.pairs.last().id].state == "not_validated"


@pytest.mark.django_db
def test_validation_closes_when_the_results_phase_starts(cast, entries):
    start_phase_now(cast.shared_task, "results")
    with pytest.raises(ValidationError, match="closed when the results phase started"):
        services.validation_next(shared_task=cast.shared_task, user=cast.organizer)


@pytest.mark.django_db
def test_the_settings_are_set_through_the_api_and_checked(cast):
    client = cast.client("organizer")
    url = "/api/v1/shared-tasks/sst/"
    answer = client.patch(
        url,
        {"validation_mode": "sampled", "validation_sample_fraction": 0.3, "validations_per_pair": 5,
         "validation_agreement": "unanimous", "validation_quota_per_validator": 40},
        format="json",
    )  # fmt: skip
    assert answer.status_code == 200, answer.content
    assert answer.json()["validation_agreement"] == "unanimous"
    assert client.patch(url, {"validation_sample_fraction": 1.5}, format="json").status_code == 400
    assert client.patch(url, {"validations_per_pair": 0}, format="json").status_code == 400
    assert (
        cast.client("breaker").patch(url, {"validation_mode": "off"}, format="json").status_code
        == 403
    )


@pytest.mark.django_db
def test_a_span_task_cannot_turn_label_validation_on(cast):
    span = task_services.shared_task_create(
        creator=cast.organizer, name="QA-SRL", slug="qasrl", task_type="span_extraction"
    )
    with pytest.raises(ValidationError, match="items have labels"):
        task_services.shared_task_update(
            shared_task=span, actor=cast.organizer, validation_mode="all"
        )


@pytest.mark.django_db
def test_an_existing_access_becomes_a_validator_with_a_granting_link(cast):
    plain = task_services.task_invitation_create(shared_task=cast.shared_task, actor=cast.organizer)
    task_services.task_invitation_accept(token=plain.token, user=cast.outsider)
    granting = task_services.task_invitation_create(
        shared_task=cast.shared_task, actor=cast.organizer, grants_validator=True
    )
    access, created = task_services.task_invitation_accept(token=granting.token, user=cast.outsider)
    assert not created and access.is_validator
    user = get_user_model().objects.get(username="oscar")
    assert validation.validator_role(user=user, shared_task=cast.shared_task) is None  # mode off
