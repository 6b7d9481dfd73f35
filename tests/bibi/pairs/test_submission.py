"""Submitting pair sets: all or nothing, within the break phase, within quota, as versions."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import RestrictedError

from bibi.pairs import selectors, services
from bibi.pairs.models import Pair, PairSet
from bibi.tasktypes.rules import PairInput

from ..conftest import build_cast
from .conftest import BAD_PAIR, GOOD_PAIRS, csv_bytes, start_phase_now, submit, upload

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_a_good_set_is_stored_with_originals_resolved_and_the_server_time(cast):
    pair_set = submit(cast)
    assert pair_set.status == PairSet.Status.SUBMITTED
    assert pair_set.submitted_by == cast.breaker
    assert pair_set.submitted_at is not None
    pairs = list(pair_set.pairs.order_by("row"))
    assert [p.original.external_id for p in pairs] == ["s1", "s2", "s3", "s4"]
    assert pairs[0].original_text == "I love this movie!"
    assert pairs[0].original_label == "positive"
    assert [p.effective_label for p in pairs] == [p.variant_label for p in pairs]
    assert [p.edit_distance for p in pairs] == [3, 1, 2, 2]


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_one_bad_row_anywhere_stores_nothing_and_names_its_line(cast, where):
    rows = list(GOOD_PAIRS)
    position = {"first": 0, "middle": 2, "last": len(rows)}[where]
    rows.insert(position, BAD_PAIR)
    with pytest.raises(services.PairSetRejected) as rejected:
        upload(cast, csv_bytes(rows), "pairs.csv")
    # The header is line 1.
    assert [(e.line, e.reason) for e in rejected.value.errors] == [
        (position + 2, "the variant is identical to the original")
    ]
    assert not PairSet.objects.exists()
    assert not Pair.objects.exists()


def test_every_failing_pair_is_listed_not_just_the_first(cast):
    rows = [
        {**GOOD_PAIRS[0], "variant_label": "great"},
        GOOD_PAIRS[1],
        {**GOOD_PAIRS[2], "original_id": "d1"},
        {**GOOD_PAIRS[3], "tags": "irony"},
        GOOD_PAIRS[1],
    ]
    with pytest.raises(services.PairSetRejected) as rejected:
        upload(cast, csv_bytes(rows), "pairs.csv")
    assert [e.line for e in rejected.value.errors] == [2, 4, 5, 6]
    assert rejected.value.errors[-1].reason == "the same variant as row 3"


def test_the_task_may_require_a_rationale(cast):
    cast.shared_task.pair_require_rationale = True
    cast.shared_task.save()
    rows = [GOOD_PAIRS[0], {**GOOD_PAIRS[1], "rationale": ""}]
    with pytest.raises(services.PairSetRejected) as rejected:
        submit(cast, rows)
    assert [(e.line, e.reason) for e in rejected.value.errors] == [
        (2, "this task requires a rationale for every pair")
    ]


def test_a_label_map_whose_targets_are_not_labels_is_refused_as_a_whole(cast):
    with pytest.raises(services.PairSetRejected) as rejected:
        upload(cast, csv_bytes(GOOD_PAIRS), "p.csv", label_map={"1": "pos"})
    assert rejected.value.errors[0].line == 0
    assert "which is not one of this task's labels" in rejected.value.errors[0].reason


# --- Phases and the server clock ----------------------------------------------------------


def test_it_refuses_a_set_after_the_deadline_and_names_it(db):
    cast = build_cast(current_phase="contest")
    deadline = cast.shared_task.phases.get(kind="break").ends_at
    with pytest.raises(ValidationError) as refused:
        submit(cast)
    message = refused.value.messages[0]
    assert message.startswith("The break phase closed at ")
    assert deadline.strftime("%Y-%m-%d %H:%M:%S UTC") in message
    assert not PairSet.objects.exists()


def test_it_refuses_a_set_before_the_break_phase_opens_and_says_when(db):
    cast = build_cast(current_phase="build")
    opens = cast.shared_task.phases.get(kind="break").starts_at
    with pytest.raises(ValidationError, match=f"opens at {opens:%Y-%m-%d %H:%M:%S} UTC"):
        submit(cast)


def test_it_refuses_a_set_when_the_task_has_no_break_phase(cast):
    cast.shared_task.phases.all().delete()
    with pytest.raises(ValidationError, match="has no break phase"):
        submit(cast)


def test_a_file_after_the_deadline_is_refused_before_it_is_read(db):
    cast = build_cast(current_phase="results")
    with pytest.raises(ValidationError, match="The break phase closed"):
        upload(cast, b"\x00 not even text", "p.csv")


# --- Who may submit -----------------------------------------------------------------------


def test_only_members_of_the_breaker_team_submit_for_it(cast, rival):
    with pytest.raises(PermissionDenied, match="Only the members of the team"):
        submit(cast, user=rival[1])
    with pytest.raises(PermissionDenied, match="Only breaker teams"):
        submit(cast, team=cast.builder_team, user=cast.builder)


# --- Quotas -------------------------------------------------------------------------------


def test_it_refuses_a_set_over_the_tasks_pair_quota(cast):
    cast.shared_task.max_pairs_per_set = 3
    cast.shared_task.save()
    with pytest.raises(services.PairSetRejected) as rejected:
        submit(cast)
    assert rejected.value.errors[0].reason == (
        "the set has 4 pairs; this shared task allows at most 3 per set"
    )


def test_it_refuses_a_set_over_the_tasks_set_quota(cast):
    cast.shared_task.max_pair_sets_per_team = 2
    cast.shared_task.save()
    submit(cast)
    submit(cast)
    with pytest.raises(ValidationError, match="submitted 2 pair sets, the most this shared task"):
        submit(cast)
    assert PairSet.objects.count() == 2


def test_an_empty_set_is_refused(cast):
    with pytest.raises(services.PairSetRejected, match="the set has no pairs"):
        submit(cast, [])


# --- Versions and the entry ---------------------------------------------------------------


def test_the_latest_set_is_the_entry_unless_another_is_marked_final(cast):
    first, second = submit(cast), submit(cast, GOOD_PAIRS[:2])
    assert selectors.pair_set_entry(team=cast.breaker_team) == second
    services.pair_set_mark_final(pair_set=first, user=cast.breaker, is_final=True)
    third = submit(cast, GOOD_PAIRS[:1])
    assert selectors.pair_set_entry(team=cast.breaker_team) == first
    services.pair_set_mark_final(pair_set=third, user=cast.breaker, is_final=True)
    first.refresh_from_db()
    assert not first.is_final
    assert selectors.pair_set_entry(team=cast.breaker_team) == third
    services.pair_set_mark_final(pair_set=third, user=cast.breaker, is_final=False)
    assert selectors.pair_set_entry(team=cast.breaker_team) == third


def test_a_set_submitted_after_a_moved_deadline_is_not_the_entry(cast):
    before, after = submit(cast), submit(cast, GOOD_PAIRS[:2])
    cast.shared_task.phases.filter(kind="break").update(ends_at=after.submitted_at)
    assert selectors.pair_set_entry(team=cast.breaker_team) == before


def test_the_entry_cannot_be_chosen_after_the_break_phase(cast):
    pair_set = submit(cast)
    start_phase_now(cast.shared_task, "contest")
    with pytest.raises(ValidationError, match="choosing the entry is no longer possible"):
        services.pair_set_mark_final(pair_set=pair_set, user=cast.breaker, is_final=True)


def test_every_breaker_teams_entry_is_found_at_once(cast, rival):
    ours = submit(cast)
    theirs = submit(cast, GOOD_PAIRS[:1], team=rival[0], user=rival[1])
    assert selectors.entry_pair_sets(shared_task=cast.shared_task) == {
        cast.breaker_team.id: ours,
        rival[0].id: theirs,
    }


# --- One pair at a time -------------------------------------------------------------------


def one(row: dict) -> PairInput:
    return PairInput(
        row=0,
        original_id=row["original_id"],
        variant_text=row["variant_text"],
        variant_label=row["variant_label"],
    )


def test_pairs_added_one_at_a_time_build_a_draft_that_is_submitted_as_a_version(cast):
    for row in GOOD_PAIRS[:3]:
        services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(row))
    draft = selectors.pair_set_draft(team=cast.breaker_team)
    assert draft.source == PairSet.Source.FORM
    assert list(draft.pairs.order_by("row").values_list("row", flat=True)) == [1, 2, 3]
    assert selectors.pair_set_entry(team=cast.breaker_team) is None

    services.pair_set_draft_submit(pair_set=draft, user=cast.breaker)
    assert selectors.pair_set_entry(team=cast.breaker_team) == draft
    assert selectors.pair_set_draft(team=cast.breaker_team) is None


def test_a_pair_added_to_a_draft_is_checked_at_once_against_the_draft(cast):
    services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[0]))
    with pytest.raises(services.PairSetRejected) as rejected:
        services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[0]))
    assert [(e.line, e.reason) for e in rejected.value.errors] == [(2, "the same variant as row 1")]
    with pytest.raises(services.PairSetRejected):
        services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(BAD_PAIR))
    assert Pair.objects.count() == 1


def test_a_draft_pair_can_be_removed_but_a_submitted_one_cannot(cast):
    pair = services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[0]))
    services.pair_remove(pair=pair, user=cast.breaker)
    assert not Pair.objects.exists()
    submitted = submit(cast).pairs.first()
    with pytest.raises(ValidationError, match="a submitted set never changes"):
        services.pair_remove(pair=submitted, user=cast.breaker)


def test_an_empty_draft_cannot_be_submitted_nor_a_draft_twice(cast):
    pair = services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[0]))
    draft = pair.pair_set
    services.pair_remove(pair=pair, user=cast.breaker)
    with pytest.raises(ValidationError, match="no pairs yet"):
        services.pair_set_draft_submit(pair_set=draft, user=cast.breaker)
    services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[0]))
    services.pair_set_draft_submit(pair_set=draft, user=cast.breaker)
    with pytest.raises(ValidationError, match="already been submitted"):
        services.pair_set_draft_submit(pair_set=draft, user=cast.breaker)


def test_a_draft_is_bound_by_the_pair_quota_and_the_break_phase(cast):
    cast.shared_task.max_pairs_per_set = 1
    cast.shared_task.save()
    services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[0]))
    with pytest.raises(ValidationError, match="already has 1 pairs"):
        services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[1]))
    start_phase_now(cast.shared_task, "contest")
    with pytest.raises(ValidationError, match="adding pairs is no longer possible"):
        services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=one(GOOD_PAIRS[1]))


# --- Deleting -----------------------------------------------------------------------------


def test_a_starter_example_that_a_pair_uses_cannot_be_deleted(cast):
    submit(cast)
    with pytest.raises(RestrictedError):
        cast.starter.examples.get(external_id="s1").delete()


def test_deleting_a_shared_task_deletes_its_pair_sets(cast):
    submit(cast)
    cast.shared_task.delete()
    assert not Pair.objects.exists()
