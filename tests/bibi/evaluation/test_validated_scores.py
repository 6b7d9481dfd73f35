"""Scores on validated pairs: validated labels, left-out pairs counted, the unvalidated score
beside, and no gpu work for a re-score after validation."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from bibi.evaluation import compute
from bibi.evaluation.exports import TABLES, snapshot_summary
from bibi.evaluation.models import CellChunk, ScoringRun
from bibi.evaluation.selectors import ItemFilter, Viewer, names_for, snapshot_items_filtered
from bibi.pairs import selectors as pair_selectors
from bibi.pairs import validation
from bibi.pairs.models import LabelValidation, Pair
from bibi.pairs.validation import services as validation_services
from bibi.sharedtasks import services as task_services

from .conftest import (
    assert_leaderboards_match,
    direct_report,
    score_now,
    upload_self_reported_pairs,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def ready_task(scored_task):
    upload_self_reported_pairs(scored_task)
    return scored_task


def validators(task, *names: str) -> list:
    """The organizer, then people let in by a link that grants the validator role."""
    link = task_services.task_invitation_create(
        shared_task=task.shared_task,
        actor=task.cast.organizer,
        grants_validator=True,
        max_uses=max(1, len(names)),
    )
    people = [task.cast.organizer]
    for name in names:
        user = get_user_model().objects.create_user(name, password=f"pw-{name}-123")
        task_services.task_invitation_accept(token=link.token, user=user)
        people.append(user)
    return people


def vote_on(task, variant_text: str, voters: list, labels: list[str], **flags) -> None:
    pair = Pair.objects.get(variant_text=variant_text)
    for user, label in zip(voters, labels, strict=True):
        role = validation.validator_role(user=user, shared_task=task.shared_task)
        handed = LabelValidation.objects.create(pair=pair, validator=user, role=role)
        validation_services.validation_submit(
            validation_id=handed.id, user=user, label=label, unclear=not label, **flags
        )


def by_team(tables: dict) -> dict[int, dict]:
    return {row["team_id"]: row for row in tables["breakers"]}


def test_scores_use_validated_labels_count_what_is_left_out_and_show_the_unvalidated_score(
    ready_task,
):
    task = ready_task
    before = score_now(task).snapshot
    chunks = CellChunk.objects.count()
    task_services.shared_task_update(
        shared_task=task.shared_task, actor=task.cast.organizer, validation_mode="all"
    )
    task.shared_task.refresh_from_db()
    voters = validators(task, "vera", "wim")
    vote_on(task, "I'm mad for this movie!", voters, ["positive"] * 3)
    vote_on(
        task,
        'Russell is "terrific" as coach Herb Brooks.',
        voters,
        ["positive", "positive", "negative"],
    )
    vote_on(
        task,
        "[Bettis] has a smoldering, humorless intensity that's hilarious.",
        voters,
        ["positive", "negative", "positive"],
        not_fluent=True,
    )
    vote_on(
        task,
        "It's not harmless, sure, but it's also not charmless.",
        voters,
        ["positive", "negative", ""],
    )
    assert not ScoringRun.objects.filter(trigger="validation").exists()  # OSU's pairs wait
    vote_on(task, "I loved this movie!", voters, ["positive"] * 3)
    vote_on(task, "It's harmless, sure, and it's also charming.", voters, ["positive"] * 3)
    vote_on(task, "Russell is terrible as coach Herb Brooks.", voters, ["negative"] * 3)

    # The last pair decided asked for a run; it needs no new cell (labels are not in cells).
    run = compute.scoring_run_complete(run_id=ScoringRun.objects.get(trigger="validation").id)
    assert run.status == "done"
    assert CellChunk.objects.count() == chunks
    snapshot = run.snapshot
    assert_leaderboards_match(snapshot.tables, direct_report(task))

    utrecht, osu = task.cast.breaker_team.id, task.osu.id
    breakers, earlier = by_team(snapshot.tables), by_team(before.tables)
    assert (breakers[utrecht]["pairs"], breakers[utrecht]["validated"]) == (2, 1)
    assert (breakers[utrecht]["relabelled"], breakers[utrecht]["left_out"]) == (1, 2)
    assert (breakers[osu]["validated"], breakers[osu]["left_out"]) == (3, 0)
    for team in (utrecht, osu):
        assert breakers[team]["unvalidated_score"] == pytest.approx(earlier[team]["score"])
        assert earlier[team]["unvalidated_score"] is None  # validation was off
    unvalidated = {
        row["system_id"]: row["unvalidated_broken_pct"] for row in snapshot.tables["builders"]
    }
    assert unvalidated == pytest.approx(
        {row["system_id"]: row["broken_pct"] for row in before.tables["builders"]}
    )

    relabelled = Pair.objects.get(variant_text='Russell is "terrific" as coach Herb Brooks.')
    item = snapshot.items.get(pair_id=relabelled.id)
    assert (item.variant_label, item.validation_state) == ("positive", "relabelled")
    assert item.validation["claimed_label"] == "negative"
    assert item.validation["agreement"] == pytest.approx(2 / 3)
    explored = snapshot_items_filtered(
        snapshot=snapshot, filters=ItemFilter(validation_state="relabelled")
    )
    assert [each.pair_id for each in explored] == [relabelled.id]
    states = {row["pair_id"]: row["state"] for row in snapshot.tables["validation"]}
    assert sorted(states.values()) == sorted(
        ["validated", "relabelled", "invalid", "disputed", "validated", "validated", "validated"]
    )
    assert snapshot.settings_used["validation"]["mode"] == "all"
    assert (snapshot.counts["pairs_validated"], snapshot.counts["pairs_relabelled"]) == (4, 1)
    assert (snapshot.counts["pairs_left_out"], snapshot.counts["pairs"]) == (2, 5)
    summary = snapshot.tables["validation_summary"]
    assert summary["votes"] == 21 and summary["alpha"] is not None
    assert {team["team_id"] for team in summary["teams"]} == {utrecht, osu}


def test_exports_carry_each_pairs_status_votes_and_agreement(ready_task):
    task = ready_task
    task_services.shared_task_update(
        shared_task=task.shared_task,
        actor=task.cast.organizer,
        validation_mode="all",
        validations_per_pair=1,
    )
    task.shared_task.refresh_from_db()
    vote_on(task, 'Russell is "terrific" as coach Herb Brooks.', validators(task), ["positive"])
    snapshot = score_now(task).snapshot
    viewer = Viewer.of(user=task.cast.organizer, shared_task=task.shared_task)
    names = names_for(viewer=viewer, snapshot=snapshot)
    csv = TABLES["validation"].as_csv(snapshot, names)
    assert csv.splitlines()[0].startswith("pair_id,team,state,claimed_label,scored_label")
    assert ",relabelled,negative,positive,False,1,positive," in csv
    assert csv.count(",pending,") == 6
    items = TABLES["items"].as_csv(snapshot, names)
    assert "validation_state,claimed_label,votes,vote_labels,agreement" in items.splitlines()[0]
    breakers = TABLES["breakers"].as_csv(snapshot, names).splitlines()[0]
    assert (
        "score,unvalidated_score,validated,relabelled,left_out,pending,claimed_unchecked"
        in breakers
    )
    summary = snapshot_summary(snapshot, names)
    assert summary["validation"]["counts"]["relabelled"] == 1
    assert {team["team"] for team in summary["validation"]["teams"]} == {"Utrecht", "OSU"}


def test_unverified_pairs_are_left_out_and_counted_while_validation_is_off(ready_task):
    task = ready_task
    pair = Pair.objects.get(variant_text="Russell is terrible as coach Herb Brooks.")
    Pair.objects.filter(id=pair.id).update(label_unverified=True)

    snapshot = score_now(task).snapshot

    osu = by_team(snapshot.tables)[task.osu.id]
    assert (osu["pairs"], osu["left_out"]) == (2, 1)
    assert not snapshot.items.filter(pair_id=pair.id).exists()
    row = next(row for row in snapshot.tables["validation"] if row["pair_id"] == pair.id)
    assert (row["state"], row["scored_label"], row["label_unverified"]) == (
        "unverified",
        None,
        True,
    )
    # Self-reported systems still predict its texts: validators may let it in later.
    assert (pair.variant_text,) in pair_selectors.pair_items(shared_task=task.shared_task)


def test_an_unverified_pair_counts_once_validators_confirm_it(ready_task):
    task = ready_task
    pair = Pair.objects.get(variant_text="Russell is terrible as coach Herb Brooks.")
    Pair.objects.filter(id=pair.id).update(label_unverified=True)
    task_services.shared_task_update(
        shared_task=task.shared_task,
        actor=task.cast.organizer,
        validation_mode="contested",
        validations_per_pair=1,
    )
    task.shared_task.refresh_from_db()
    assert by_team(score_now(task).snapshot.tables)[task.osu.id]["left_out"] == 1
    # Contested mode: only the unverified pair is in scope, so its one vote completes it.
    vote_on(task, "Russell is terrible as coach Herb Brooks.", validators(task), ["negative"])

    run = compute.scoring_run_complete(run_id=ScoringRun.objects.get(trigger="validation").id)

    osu = by_team(run.snapshot.tables)[task.osu.id]
    assert (osu["pairs"], osu["validated"], osu["left_out"]) == (3, 1, 0)
    assert run.snapshot.items.get(pair_id=pair.id).validation_state == "validated"
