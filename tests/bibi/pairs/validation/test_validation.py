"""Label validation: blind votes through the queue, outcomes, disputes, the validator role."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from bibi.pairs import selectors, services, validation
from bibi.pairs.models import Contest, LabelValidation, Pair
from bibi.pairs.validation import services as validation_services
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import AuditLogEntry

from ..conftest import submit
from .conftest import invited_validator, validation_on, votes_on

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


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
        item := validation_services.validation_next(shared_task=cast.shared_task, user=rival[1])
    ) is not None:
        handed.append(item.pair.pair_set_id)
        validation_services.validation_submit(
            validation_id=item.id, user=rival[1], label="positive"
        )
    assert handed and set(handed) == {ours.id}
    assert len(handed) == 4  # each of Utrecht's pairs once, none twice


def test_the_queue_gives_the_pairs_with_fewest_votes_first(cast, rival, entries):
    first = validation_services.validation_next(shared_task=cast.shared_task, user=cast.organizer)
    validation_services.validation_submit(
        validation_id=first.id, user=cast.organizer, label="positive"
    )
    vera = invited_validator(cast)
    second = validation_services.validation_next(shared_task=cast.shared_task, user=vera)
    # Five pairs have no vote yet: vera gets one of them, not the one voted on.
    assert second.pair_id != first.pair_id
    counts = validation.validation_candidates(shared_task=cast.shared_task, exclude_team_id=None)
    assert [taken for _, taken in counts] == sorted(taken for _, taken in counts)


def test_builders_and_outsiders_are_not_validators(cast, entries):
    for user in (cast.builder, cast.outsider):
        with pytest.raises(PermissionDenied):
            validation_services.validation_next(shared_task=cast.shared_task, user=user)
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
    assert (
        validation_services.validation_next(shared_task=cast.shared_task, user=cast.outsider)
        is not None
    )


def test_validation_is_closed_while_off_and_before_the_break_phase_ends(cast, rival):
    submit(cast)
    with pytest.raises(PermissionDenied):
        validation_services.validation_next(shared_task=cast.shared_task, user=cast.organizer)
    validation_on(cast.shared_task, cast.organizer)
    with pytest.raises(ValidationError, match="opens when the break phase closes"):
        validation_services.validation_next(shared_task=cast.shared_task, user=cast.organizer)


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


def test_one_pairs_validation_is_the_one_the_task_reads(cast, rival, entries):
    ours, _ = entries
    task = cast.shared_task
    pairs = {pair.original.external_id: pair for pair in ours.pairs.select_related("original")}
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    votes_on(pairs["s1"], [cast.organizer, vera, wim], ["positive", "negative", ""], task)
    votes_on(pairs["s2"], [cast.organizer, vera], ["negative", "negative"], task)
    Pair.objects.filter(id=pairs["s3"].id).update(label_unverified=True)
    every = validation.pair_validations(shared_task=task)
    for pair in Pair.objects.filter(pair_set__in=entries):
        one = validation.pair_validation(pair=pair, team_id=pair.pair_set.team_id, shared_task=task)
        assert one == every[pair.id]
    assert {every[pair.id].state for pair in pairs.values()} == {
        "disputed",
        "pending",
        "unverified",
    }


def test_a_vote_on_a_pair_that_left_the_scope_decides_nothing(cast, rival, entries):
    """The state rule reads the scope: a pair handed out before the organizers narrowed the
    scope is scored with its claim, so its votes open no dispute and ask for no run."""
    ours, _ = entries
    task = cast.shared_task
    pair = ours.pairs.get(original__external_id="s2")
    vera, wim = invited_validator(cast), invited_validator(cast, "wim")
    votes_on(pair, [cast.organizer, vera], ["positive", "negative"], task)
    handed = LabelValidation.objects.create(pair=pair, validator=wim, role="validator")
    task_services.shared_task_update(
        shared_task=task, actor=cast.organizer, validation_mode="contested"
    )
    task.refresh_from_db()

    vote = validation_services.validation_submit(
        validation_id=handed.id, user=wim, label="", unclear=True
    )

    assert (vote.before.status, vote.after.status, vote.contest) == ("pending", "pending", None)
    assert not Contest.objects.filter(pair=pair).exists()
    assert validation.pair_validations(shared_task=task)[pair.id].state == "not_validated"
    # In scope, the same three votes dispute the pair.
    validation_on(task, cast.organizer)
    task.refresh_from_db()
    assert validation.pair_validations(shared_task=task)[pair.id].state == "disputed"
