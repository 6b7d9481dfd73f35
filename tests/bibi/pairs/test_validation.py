"""Label validation: blind votes through the queue, outcomes, disputes, the validator role."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError

from bibi.pairs import selectors, services, validation
from bibi.pairs.models import Contest, LabelValidation
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import AuditLogEntry, SharedTask

from .conftest import GOOD_PAIRS, start_contests, submit

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

# GOOD_PAIRS' claimed labels, by original: s1-s3 positive, s4 negative.
CLAIMED = {row["original_id"]: row["variant_label"] for row in GOOD_PAIRS}


def validation_on(shared_task: SharedTask, actor, **fields) -> None:
    task_services.shared_task_update(
        shared_task=shared_task, actor=actor, **{"validation_mode": "all", **fields}
    )


def invited_validator(cast, name: str = "vera"):
    """Someone let in by a link that grants the validator role."""
    user = get_user_model().objects.create_user(name, password=f"pw-{name}-123")
    link = task_services.task_invitation_create(
        shared_task=cast.shared_task, actor=cast.organizer, grants_validator=True
    )
    task_services.task_invitation_accept(token=link.token, user=user)
    return user


@pytest.fixture
def entries(cast, rival):
    """Utrecht (cast.breaker) enters GOOD_PAIRS, OSU (rival) the first two; the break phase is
    over; validation of all pairs, 3 votes each, majority rule."""
    ours = submit(cast)
    theirs = submit(cast, GOOD_PAIRS[:2], team=rival[0], user=rival[1])
    start_contests(cast.shared_task)
    validation_on(cast.shared_task, cast.organizer)
    cast.shared_task.refresh_from_db()
    return ours, theirs


def vote(user, shared_task, label: str = "", **flags) -> services.ValidationVote:
    item = services.validation_next(shared_task=shared_task, user=user)
    assert item is not None
    return services.validation_submit(validation_id=item.id, user=user, label=label, **flags)


def votes_on(pair, users, labels, shared_task, **flags) -> list[services.ValidationVote]:
    """Each user votes the given label on ``pair`` (handed to them directly)."""
    done = []
    for user, label in zip(users, labels, strict=True):
        role = validation.validator_role(user=user, shared_task=shared_task)
        item = LabelValidation.objects.create(pair=pair, validator=user, role=role)
        done.append(
            services.validation_submit(
                validation_id=item.id, user=user, label=label, unclear=not label, **flags
            )
        )
    return done


def test_a_validator_never_sees_the_claimed_label_the_team_or_the_pair(cast, rival, entries):
    vera = invited_validator(cast)
    client = cast.client("organizer")
    client.force_authenticate(vera)
    answer = client.post("/api/v1/shared-tasks/sst/validation/next/")
    assert answer.status_code == 200, answer.content
    item = answer.json()
    assert set(item) == {
        "id",
        "status",
        "original_text",
        "original_label",
        "variant_text",
        "labels",
        "assigned_at",
        "expires_at",
        "label",
        "not_minimal",
        "not_fluent",
        "original_mislabelled",
        "unclear",
        "note",
        "submitted_at",
    }
    assert item["label"] == "" and item["labels"] == ["negative", "positive"]
    handed = LabelValidation.objects.get(id=item["id"])
    body = answer.content.decode()
    assert handed.pair.pair_set.team.name not in body and rival[0].name not in body
    assert '"pair_set"' not in body and "rationale" not in body
    # Asking again hands the same pair: one at a time.
    again = client.post("/api/v1/shared-tasks/sst/validation/next/").json()
    assert again["id"] == item["id"]


def test_a_breaker_never_gets_their_own_teams_pairs(cast, rival, entries):
    ours, theirs = entries
    handed = []
    while (
        item := services.validation_next(shared_task=cast.shared_task, user=rival[1])
    ) is not None:
        handed.append(item.pair.pair_set_id)
        services.validation_submit(validation_id=item.id, user=rival[1], label="positive")
    assert handed and set(handed) == {ours.id}
    assert len(handed) == 4  # each of Utrecht's pairs once, none twice


def test_the_queue_gives_the_pairs_with_fewest_votes_first(cast, rival, entries):
    first = services.validation_next(shared_task=cast.shared_task, user=cast.organizer)
    services.validation_submit(validation_id=first.id, user=cast.organizer, label="positive")
    vera = invited_validator(cast)
    second = services.validation_next(shared_task=cast.shared_task, user=vera)
    # Five pairs have no vote yet: vera gets one of them, not the one voted on.
    assert second.pair_id != first.pair_id
    counts = validation.validation_candidates(shared_task=cast.shared_task, exclude_team_id=None)
    assert [taken for _, taken in counts] == sorted(taken for _, taken in counts)


def test_builders_and_outsiders_are_not_validators(cast, entries):
    for user in (cast.builder, cast.outsider):
        with pytest.raises(PermissionDenied):
            services.validation_next(shared_task=cast.shared_task, user=user)
    answer = cast.client("builder").post("/api/v1/shared-tasks/sst/validation/next/")
    assert answer.status_code == 403


def test_the_validator_role_comes_with_an_invitation_link_that_grants_it(cast, entries):
    plain = task_services.task_invitation_create(shared_task=cast.shared_task, actor=cast.organizer)
    task_services.task_invitation_accept(token=plain.token, user=cast.outsider)
    assert validation.validator_role(user=cast.outsider, shared_task=cast.shared_task) is None
    granting = cast.client("organizer").post(
        "/api/v1/shared-tasks/sst/task-invitations/", {"grants_validator": True}, format="json"
    )
    assert granting.status_code == 201 and granting.json()["grants_validator"] is True
    accepted = cast.client("outsider").post(
        f"/api/v1/task-invitations/{granting.json()['token']}/accept/"
    )
    assert accepted.status_code == 200 and accepted.json()["is_validator"] is True
    assert (
        validation.validator_role(user=cast.outsider, shared_task=cast.shared_task) == "validator"
    )
    assert services.validation_next(shared_task=cast.shared_task, user=cast.outsider) is not None


def test_validation_is_closed_while_off_and_before_the_break_phase_ends(cast, rival):
    submit(cast)
    with pytest.raises(PermissionDenied):
        services.validation_next(shared_task=cast.shared_task, user=cast.organizer)
    validation_on(cast.shared_task, cast.organizer)
    with pytest.raises(ValidationError, match="opens when the break phase closes"):
        services.validation_next(shared_task=cast.shared_task, user=cast.organizer)


def test_the_agreement_rule_validates_relabels_disputes_and_invalidates(cast, rival, entries):
    ours, _ = entries
    task = cast.shared_task
    pairs = {pair.original.external_id: pair for pair in ours.pairs.select_related("original")}
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    voters = [cast.organizer, vera, wim]
    votes_on(pairs["s1"], voters, ["positive", "positive", "negative"], task)  # claimed positive
    votes_on(pairs["s4"], voters, ["positive", "positive", "negative"], task)  # claimed negative
    votes_on(pairs["s2"], voters, ["positive", "negative", ""], task)
    votes_on(pairs["s3"], voters, ["positive", "positive", "positive"], task, not_fluent=True)
    states = validation.pair_validations(shared_task=task)
    assert states[pairs["s1"].id].state == "validated"
    assert states[pairs["s4"].id].state == "relabelled"
    assert states[pairs["s4"].id].scored_label == "positive"
    assert states[pairs["s2"].id].state == "disputed"
    assert states[pairs["s3"].id].state == "invalid"
    assert states[pairs["s3"].id].outcome.reason == "not_fluent"
    scored = {row["pair_id"]: row for row in selectors.pairs_effective(shared_task=task)}
    assert scored[pairs["s4"].id]["variant_label"] == "positive"
    assert pairs["s2"].id not in scored and pairs["s3"].id not in scored
    unvalidated = {
        row["pair_id"]: row for row in selectors.pairs_effective(shared_task=task, validated=False)
    }
    assert unvalidated[pairs["s4"].id]["variant_label"] == "negative"
    assert len(unvalidated) == 6


def test_a_disputed_pair_opens_a_contest_the_organizers_decide(cast, rival, entries):
    ours, _ = entries
    task = cast.shared_task
    pair = ours.pairs.get(original__external_id="s2")
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    done = votes_on(pair, [cast.organizer, vera, wim], ["positive", "negative", ""], task)
    contest = done[-1].contest
    assert contest is not None and contest.origin == Contest.Origin.VALIDATION
    assert contest.team is None and "1 negative, 1 positive, 1 unclear" in contest.reason
    assert AuditLogEntry.objects.filter(action="validation.dispute").count() == 1
    listed = cast.client("organizer").get("/api/v1/shared-tasks/sst/contests/?status=open")
    assert [row["id"] for row in listed.json()["results"]] == [contest.id]
    assert listed.json()["results"][0]["team"] is None
    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="relabel", new_label="negative", note="Dry."
    )
    state = validation.pair_validations(shared_task=task)[pair.id]
    assert state.state == "adjudicated" and state.scored_label == "negative"
