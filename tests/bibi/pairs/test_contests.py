"""Contesting a pair's label and adjudicating it, from the break phase to the scores' input."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from bibi.pairs import selectors, services
from bibi.pairs.models import Contest
from bibi.sharedtasks.models import AuditLogEntry

from .conftest import GOOD_PAIRS, start_contests, start_phase_now, submit

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


@pytest.fixture
def entries(cast, rival):
    """Both breaker teams have an entry; the contest phase runs, and builders' pair
    predictions are final."""
    ours = submit(cast)
    theirs = submit(cast, GOOD_PAIRS[:2], team=rival[0], user=rival[1])
    start_contests(cast.shared_task)
    return ours, theirs


def test_the_contest_workflow_end_to_end_through_the_api(cast, rival, entries):
    ours, _ = entries
    scare_quotes = ours.pairs.get(original__external_id="s4")
    organizer, builder, breaker = (cast.client(r) for r in ("organizer", "builder", "breaker"))

    # A builder sees the other teams' entry pairs, without team or rationale, and contests one.
    listed = builder.get("/api/v1/shared-tasks/sst/contestable-pairs/").json()["results"]
    assert len(listed) == 6
    assert "rationale" not in listed[0] and "team" not in listed[0]
    filed = builder.post(
        f"/api/v1/pairs/{scare_quotes.id}/contests/",
        {"reason": "Scare quotes need not be sarcastic here."},
        format="json",
    )
    assert filed.status_code == 201, filed.json()
    contest_id = filed.json()["id"]
    assert filed.json()["status"] == "open"

    # The author team sees the contest on its pair; the organizers see it in their queue.
    on_pair = breaker.get(f"/api/v1/pairs/{scare_quotes.id}/contests/").json()
    assert [c["id"] for c in on_pair] == [contest_id]
    queue = organizer.get("/api/v1/shared-tasks/sst/contests/?status=open").json()["results"]
    assert [c["id"] for c in queue] == [contest_id]

    # The organizer relabels; the decision is audited and the author team reads it.
    decided = organizer.post(
        f"/api/v1/contests/{contest_id}/adjudicate/",
        {"decision": "relabel", "new_label": "positive", "note": "Praise, quoted."},
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    seen_by_author = breaker.get(f"/api/v1/contests/{contest_id}/").json()
    assert seen_by_author["status"] == "relabelled"
    assert seen_by_author["new_label"] == "positive"
    assert seen_by_author["note"] == "Praise, quoted."
    pair = breaker.get(f"/api/v1/pairs/{scare_quotes.id}/").json()
    assert (pair["variant_label"], pair["effective_label"]) == ("negative", "positive")
    audit = AuditLogEntry.objects.get(action="contest.adjudicate")
    assert audit.actor == cast.organizer
    assert audit.target == f"pair:{scare_quotes.id}"
    assert audit.details["from"]["effective_label"] == "negative"
    assert audit.details["to"]["effective_label"] == "positive"

    # Scoring reads the decision.
    effective = {
        row["pair_id"]: row for row in selectors.pairs_effective(shared_task=cast.shared_task)
    }
    assert effective[scare_quotes.id]["variant_label"] == "positive"
    assert len(effective) == 6


def test_exclusion_takes_a_pair_out_of_scoring_and_a_revised_decision_restores_it(
    cast, rival, entries
):
    ours, _ = entries
    pair = ours.pairs.get(original__external_id="s1")
    contest = services.contest_create(pair=pair, user=rival[1], reason="Not minimal at all.")
    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="exclude", note="An idiom swap."
    )
    ids = {row["pair_id"] for row in selectors.pairs_effective(shared_task=cast.shared_task)}
    assert pair.id not in ids and len(ids) == 5

    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="keep", note="On reflection, fine."
    )
    pair.refresh_from_db()
    contest.refresh_from_db()
    assert (pair.is_excluded, pair.effective_label, contest.status) == (False, "positive", "kept")
    assert AuditLogEntry.objects.filter(action="contest.adjudicate").count() == 2


def test_the_effective_rows_carry_what_scoring_needs(cast, entries):
    ours, _ = entries
    row = next(
        r
        for r in selectors.pairs_effective(shared_task=cast.shared_task)
        if r["team_id"] == cast.breaker_team.id and r["original_external_id"] == "s3"
    )
    assert row == {
        "pair_id": row["pair_id"],
        "pair_set_id": ours.id,
        "team_id": cast.breaker_team.id,
        "original_id": cast.starter.examples.get(external_id="s3").id,
        "original_external_id": "s3",
        "original_text": "It's harmless, sure, but it's also charmless.",
        "original_label": "negative",
        "variant_text": "It's not harmless, sure, but it's also not charmless.",
        "variant_label": "positive",
        "tags": ["morphosyntax", "semantics"],
        # Span tasks' fields, empty for a label task.
        "question": "",
        "original_answers": [],
        "variant_answers": [],
        # Second texts (a sentence pair's hypotheses), empty for one-text items.
        "original_text_b": "",
        "variant_text_b": "",
    }


def test_only_entry_pairs_count_for_scoring(cast):
    superseded = submit(cast)
    latest = submit(cast, GOOD_PAIRS[:1])
    rows = list(selectors.pairs_effective(shared_task=cast.shared_task))
    assert {row["pair_set_id"] for row in rows} == {latest.id}
    assert superseded.id not in {row["pair_set_id"] for row in rows}


# --- Who may contest what, and when -------------------------------------------------------


def test_a_team_cannot_contest_its_own_pairs(cast, entries):
    pair = entries[0].pairs.first()
    with pytest.raises(PermissionDenied, match="its own pairs"):
        services.contest_create(pair=pair, user=cast.breaker, reason="Oops.")


def test_organizers_and_outsiders_do_not_contest(cast, entries):
    pair = entries[0].pairs.first()
    with pytest.raises(PermissionDenied, match="Organizers adjudicate"):
        services.contest_create(pair=pair, user=cast.organizer, reason="Hm.")
    with pytest.raises(PermissionDenied, match="Only members of a team"):
        services.contest_create(pair=pair, user=cast.outsider, reason="Hm.")


def test_a_team_contests_a_pair_once(cast, entries):
    pair = entries[0].pairs.first()
    services.contest_create(pair=pair, user=cast.builder, reason="Wrong.")
    with pytest.raises(ValidationError, match="already contested this pair"):
        services.contest_create(pair=pair, user=cast.builder, reason="Still wrong.")


def test_contests_are_filed_in_the_contest_phase_only(cast, rival):
    pair = submit(cast).pairs.first()
    with pytest.raises(ValidationError, match="The contest phase opens at"):
        services.contest_create(pair=pair, user=rival[1], reason="Wrong.")
    start_phase_now(cast.shared_task, "results")
    with pytest.raises(ValidationError, match="The contest phase closed at"):
        services.contest_create(pair=pair, user=rival[1], reason="Wrong.")


def test_a_pair_outside_the_teams_entry_cannot_be_contested(cast, rival):
    superseded = submit(cast)
    submit(cast, GOOD_PAIRS[:1])
    start_phase_now(cast.shared_task, "contest")
    with pytest.raises(ValidationError, match="Only the pairs of a team's entry"):
        services.contest_create(pair=superseded.pairs.first(), user=rival[1], reason="x")


def test_a_contest_needs_a_reason(cast, entries):
    with pytest.raises(ValidationError, match="Say why"):
        services.contest_create(pair=entries[0].pairs.first(), user=cast.builder, reason="  ")


# --- Adjudication -------------------------------------------------------------------------


@pytest.fixture
def contest(cast, entries) -> Contest:
    pair = entries[0].pairs.get(original__external_id="s4")
    return services.contest_create(pair=pair, user=cast.builder, reason="Not sarcastic.")


def test_only_the_tasks_organizers_adjudicate(cast, contest):
    for who in (cast.other_organizer, cast.breaker, cast.builder):
        with pytest.raises(PermissionDenied):
            services.contest_adjudicate(contest=contest, actor=who, decision="keep", note="x")


@pytest.mark.parametrize(
    ("decision", "new_label", "message"),
    [
        ("relabel", "neutral", "Relabel to one of negative, positive"),
        ("relabel", "negative", "decide 'keep' instead"),
        ("keep", "positive", "with the decision 'relabel' only"),
        ("ignore", "", "is not a decision"),
    ],
)
def test_a_decision_must_make_sense(cast, contest, decision, new_label, message):
    with pytest.raises(ValidationError, match=message):
        services.contest_adjudicate(
            contest=contest, actor=cast.organizer, decision=decision, note="x", new_label=new_label
        )
    assert Contest.objects.get().status == "open"


def test_a_relabel_ignores_case_as_labels_do_everywhere(cast, contest):
    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="relabel", new_label=" Positive", note="x"
    )
    contest.pair.refresh_from_db()
    assert contest.pair.effective_label == "positive"
    with pytest.raises(ValidationError, match="decide 'keep' instead"):
        services.contest_adjudicate(
            contest=contest,
            actor=cast.organizer,
            decision="relabel",
            new_label="NEGATIVE",
            note="y",
        )


def test_a_decision_needs_a_note(cast, contest):
    with pytest.raises(ValidationError, match="Explain the decision"):
        services.contest_adjudicate(contest=contest, actor=cast.organizer, decision="keep", note="")


def test_contests_are_hidden_from_teams_they_do_not_concern(cast, rival, contest):
    assert list(selectors.contest_list(user=rival[1], shared_task=cast.shared_task)) == []
    assert list(selectors.contest_list(user=cast.outsider, shared_task=cast.shared_task)) == []
    for who in (cast.builder, cast.breaker, cast.organizer):
        assert list(selectors.contest_list(user=who, shared_task=cast.shared_task)) == [contest]


def test_a_second_team_contests_the_same_pair_and_the_latest_decision_stands(cast, rival, contest):
    second = services.contest_create(pair=contest.pair, user=rival[1], reason="Also wrong.")
    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="relabel", new_label="positive", note="a"
    )
    services.contest_adjudicate(contest=second, actor=cast.organizer, decision="exclude", note="b")
    contest.pair.refresh_from_db()
    assert contest.pair.is_excluded
    assert contest.pair.effective_label == "negative"


def test_a_later_decision_in_another_contest_supersedes_the_first_and_both_say_so(
    cast, rival, contest
):
    second = services.contest_create(pair=contest.pair, user=rival[1], reason="Fine as is.")
    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="relabel", new_label="positive", note="a"
    )
    services.contest_adjudicate(contest=second, actor=cast.organizer, decision="keep", note="b")
    organizer = cast.client("organizer")

    def states() -> dict[int, tuple]:
        rows = organizer.get("/api/v1/shared-tasks/sst/contests/").json()["results"]
        return {
            row["id"]: (
                row["status"],
                row["decision_state"],
                row["is_current"],
                row["pair_effective_label"],
            )
            for row in rows
        }

    # The pair has one state, the keep decided last; the relabel no longer holds.
    assert states() == {
        contest.id: ("relabelled", "superseded", False, "negative"),
        second.id: ("kept", "current", True, "negative"),
    }
    # The contesting team reads the same about its own contest.
    mine = cast.client("builder").get(f"/api/v1/contests/{contest.id}/").json()
    assert (mine["decision_state"], mine["pair_effective_label"]) == ("superseded", "negative")

    # Revising the first decision makes it the pair's state again.
    services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="relabel", new_label="positive", note="c"
    )
    assert states() == {
        contest.id: ("relabelled", "current", True, "positive"),
        second.id: ("kept", "superseded", False, "positive"),
    }
    effective = {r["pair_id"]: r for r in selectors.pairs_effective(shared_task=cast.shared_task)}
    assert effective[contest.pair_id]["variant_label"] == "positive"


def test_an_adjudication_says_and_audits_whether_the_pairs_state_changed(cast, rival, contest):
    second = services.contest_create(pair=contest.pair, user=rival[1], reason="Fine as is.")
    relabel = services.contest_adjudicate(
        contest=contest, actor=cast.organizer, decision="relabel", new_label="positive", note="a"
    )
    assert (relabel.effective_changed, relabel.superseded) == (True, None)
    # Excluding the pair again, in another contest, changes its state and supersedes the first.
    exclude = services.contest_adjudicate(
        contest=second, actor=cast.organizer, decision="exclude", note="b"
    )
    assert (exclude.effective_changed, exclude.superseded) == (True, contest)
    # The same decision again changes nothing that scoring reads.
    again = services.contest_adjudicate(
        contest=second, actor=cast.organizer, decision="exclude", note="b, on reflection"
    )
    assert (again.effective_changed, again.superseded) == (False, None)

    audits = list(AuditLogEntry.objects.filter(action="contest.adjudicate").order_by("id"))
    second_audit = audits[1].details
    assert second_audit["from"] == {
        "status": "open",
        "effective_label": "positive",
        "is_excluded": False,
        "decision": contest.id,
    }
    assert second_audit["to"] == {
        "status": "excluded",
        "effective_label": "negative",
        "is_excluded": True,
        "decision": second.id,
    }
    assert second_audit["superseded_contest"] == contest.id
    assert [a.details["effective_changed"] for a in audits] == [True, True, False]
    assert audits[0].details["results_published"] is False
