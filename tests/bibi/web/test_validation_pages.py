"""Label validation pages: the validator's queue (blind; never a breaker's own team's pairs;
who may open it), the organizers' overview (progress, outcomes, agreement, disputes linked
to adjudication), and the link into the task for validators."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser

from bibi.pairs.models import Contest, LabelValidation, Pair
from bibi.pairs.validation import validator_role
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask, TaskAccess
from bibi.web.access import validator_role_of

from ..pairs.conftest import start_phase_now
from .conftest import page_client, score_crowd
from .test_security_headers import assert_policies, refused_in
from .validation_scene import (
    QUEUE,
    ValidationScene,
    add_ready_system,
    build_validation_scene,
    handed,
    label_all,
    signed_in,
)

OVERVIEW = "/tasks/sst/organize/validation/"


@pytest.fixture
def scene(db) -> ValidationScene:
    return build_validation_scene()


def claimed(pair: Pair) -> dict[str, str]:
    return {"label": pair.variant_label}


def without_tokens(html: str) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", html)


# --- Who opens the queue ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "code"),
    [
        ("organizer", 200),
        ("breaker", 200),
        ("dora", 200),
        ("val", 200),
        ("builder", 403),
        ("outsider", 403),
        ("other_organizer", 403),
        ("anonymous", 302),
    ],
)
def test_the_queue_opens_to_organizers_breakers_and_invited_validators(scene, who, code):
    if who in ("dora", "val"):
        client = signed_in(getattr(scene, who))
    else:
        client = page_client(scene.cast, who)
    response = client.get(QUEUE)
    assert response.status_code == code
    if code == 403:
        assert "validators the organizers invite" in response.content.decode()
    if code == 200:
        assert 'aria-current="page">Validate</a>' in response.content.decode()


@pytest.mark.parametrize("mode", ["all", "off"])
def test_the_pages_know_every_role_as_the_pairs_app_does(scene, mode):
    task = scene.cast.shared_task
    SharedTask.objects.filter(pk=task.pk).update(validation_mode=mode)
    task.refresh_from_db()
    cast = scene.cast
    people = [cast.organizer, cast.other_organizer, cast.builder, cast.breaker, cast.outsider]
    for user in [*people, scene.dora, scene.val, AnonymousUser()]:
        viewer = task_selectors.viewer_get(user=user, shared_task=task)
        assert validator_role_of(viewer, task) == validator_role(user=user, shared_task=task)


def test_the_queue_is_closed_to_everyone_while_validation_is_off(scene):
    SharedTask.objects.filter(pk=scene.cast.shared_task.pk).update(validation_mode="off")
    for user in (scene.cast.organizer, scene.cast.breaker, scene.val):
        response = signed_in(user).get(QUEUE)
        assert response.status_code == 403
        assert "Label validation is off for this shared task." in response.content.decode()
    # No link to a page that would refuse them.
    assert "/validate/" not in signed_in(scene.cast.breaker).get("/tasks/sst/").content.decode()


def test_the_queue_says_when_validation_opens(db):
    scene = build_validation_scene()
    start_phase_now(scene.cast.shared_task, "break")
    response = signed_in(scene.val).get(QUEUE)
    assert response.status_code == 200
    assert "Label validation opens when the break phase closes" in response.content.decode()
    assert "Label the next pair" not in response.content.decode()


def test_the_queue_keeps_to_the_security_policies(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    response = client.get(QUEUE)
    assert_policies(response)
    assert refused_in(response.content.decode()) == []


def test_reading_the_queue_hands_out_nothing(scene):
    client = signed_in(scene.val)
    response = client.get(QUEUE)
    assert "7 pairs wait for a label from you." in response.content.decode()
    assert not LabelValidation.objects.exists()


# --- Blind --------------------------------------------------------------------------------


def test_the_validator_never_reads_the_claimed_label_or_the_team(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    item = handed(scene.val)
    pair = item.pair
    first = without_tokens(client.get(QUEUE).content.decode())
    assert pair.variant_text.replace("'", "&#x27;").replace('"', "&quot;") in first
    assert pair.original_text.replace("'", "&#x27;").replace('"', "&quot;") in first
    for secret in (pair.pair_set.team.name, pair.rationale, f"pair set {pair.pair_set_id}"):
        if secret:
            assert secret not in first
    assert " checked" not in first  # no label is chosen for the validator
    # Another claimed label, another team name, another rationale: the same page.
    other = next(label for label in scene.cast.shared_task.labels if label != pair.variant_label)
    Pair.objects.filter(pk=pair.pk).update(
        variant_label=other, effective_label=other, rationale="something else entirely"
    )
    pair.pair_set.team.__class__.objects.filter(pk=pair.pair_set.team_id).update(name="Renamed")
    assert without_tokens(client.get(QUEUE).content.decode()) == first


def test_a_breaker_never_gets_their_own_teams_pairs(scene):
    brian = scene.cast.breaker
    labelled = label_all(signed_in(brian), brian, claimed)
    assert sorted(p.id for p in labelled) == sorted(p.id for p in scene.delft_entry.pairs.all())
    dora = label_all(signed_in(scene.dora), scene.dora, claimed)
    assert sorted(p.id for p in dora) == sorted(p.id for p in scene.utrecht_entry.pairs.all())
    page = signed_in(brian).get(QUEUE).content.decode()
    assert 'id="queue-finished"' in page
    assert "3 labelled, thank you" in page
    assert "Your own team's pairs never come to you." in page


# --- Votes ----------------------------------------------------------------------------------


def test_a_vote_without_a_label_is_refused_beside_the_field(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    item = handed(scene.val)
    response = client.post(f"{QUEUE}{item.id}/", {"not_fluent": "on"})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Give the variant a label, or mark it unclear." in page
    item.refresh_from_db()
    assert item.status == LabelValidation.Status.ASSIGNED


def test_an_unclear_variant_takes_no_label(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    item = handed(scene.val)
    response = client.post(f"{QUEUE}{item.id}/", {"unclear": "on", "label": "positive"})
    assert response.status_code == 400
    assert "An unclear variant gets no label: leave it empty." in response.content.decode()
    item.refresh_from_db()
    assert item.status == LabelValidation.Status.ASSIGNED


def test_a_vote_is_saved_with_its_flags_and_the_next_pair_is_handed_out(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    item = handed(scene.val)
    response = client.post(
        f"{QUEUE}{item.id}/", {"unclear": "on", "not_minimal": "on", "note": "two readings"}
    )
    assert response.status_code == 302
    item.refresh_from_db()
    assert (item.status, item.label, item.unclear, item.not_minimal, item.note) == (
        "done",
        "",
        True,
        True,
        "two readings",
    )
    following = handed(scene.val)
    assert following is not None and following.pair_id != item.pair_id
    page = client.get(QUEUE).content.decode()
    assert "Your label is saved." in page
    assert "unclear" in page  # the history


def test_nobody_votes_on_a_pair_handed_to_someone_else(scene):
    signed_in(scene.val).post(f"{QUEUE}next/")
    theirs = handed(scene.val)
    client = signed_in(scene.cast.organizer)
    response = client.post(f"{QUEUE}{theirs.id}/", {"label": "positive"}, follow=True)
    assert "This pair is no longer handed to you" in response.content.decode()
    assert client.post(f"{QUEUE}{theirs.id}/skip/").status_code == 302
    theirs.refresh_from_db()
    assert theirs.status == LabelValidation.Status.ASSIGNED
    assert not LabelValidation.objects.filter(validator=scene.cast.organizer).exists()


def test_a_skipped_pair_never_comes_back(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    skipped = handed(scene.val)
    response = client.post(f"{QUEUE}{skipped.id}/skip/", follow=True)
    assert "never back to you" in response.content.decode()
    labelled = label_all(client, scene.val, claimed)
    assert skipped.pair_id not in {pair.id for pair in labelled}
    assert len(labelled) == 6


def test_the_quota_stops_a_validator(scene):
    SharedTask.objects.filter(pk=scene.cast.shared_task.pk).update(validation_quota_per_validator=2)
    client = signed_in(scene.val)
    assert len(label_all(client, scene.val, claimed)) == 2
    page = client.get(QUEUE).content.decode()
    assert "You have labelled 2 pairs: the most one validator labels in this task." in page


# --- The organizers' overview ------------------------------------------------------------


def test_the_overview_is_the_organizers(scene):
    for who, code in (
        ("organizer", 200),
        ("breaker", 403),
        ("builder", 403),
        ("other_organizer", 403),
        ("anonymous", 302),
    ):
        assert page_client(scene.cast, who).get(OVERVIEW).status_code == code
    assert signed_in(scene.val).get(OVERVIEW).status_code == 403


def test_the_overview_shows_outcomes_agreement_and_a_careless_validator(scene):
    """Three votes a pair: the organizer and the validator give every pair its claimed
    label, then each breaker gives the other team's pairs the other label. Every pair is
    validated, and the breakers always disagree with the majority."""
    task = scene.cast.shared_task
    SharedTask.objects.filter(pk=task.pk).update(validations_per_pair=3)
    flip = {"positive": "negative", "negative": "positive"}
    label_all(signed_in(scene.cast.organizer), scene.cast.organizer, claimed)
    label_all(signed_in(scene.val), scene.val, claimed)
    label_all(
        signed_in(scene.cast.breaker),
        scene.cast.breaker,
        lambda p: {"label": flip[p.variant_label]},
    )
    label_all(signed_in(scene.dora), scene.dora, lambda p: {"label": flip[p.variant_label]})
    page = signed_in(scene.cast.organizer).get(OVERVIEW).content.decode()
    assert "7 of 7 pairs to validate have an outcome" in page
    validators = re.search(r'<caption id="validators-caption">.*?</table>', page, re.S).group(0)
    rows = re.findall(r"<tr>.*?</tr>", validators, re.S)
    # Least agreeing first; the breakers, always against the majority, are marked.
    assert "brian" in rows[1] and "check their votes" in rows[1]
    assert "olga" in validators and "100.0%" in validators
    assert "check their votes" not in "".join(r for r in rows if "olga" in r or ">val<" in r)
    assert re.search(r'id="task-alpha">-?[0-9]\.[0-9]{3}<', page)
    assert "Utrecht" in page and "Delft" in page  # per team, real names to organizers
    assert page.count("badge-validated") == 7


def test_a_disputed_pair_is_linked_to_its_adjudication(db):
    scene = build_validation_scene(votes_per_pair=2)
    flip = {"positive": "negative", "negative": "positive"}
    label_all(signed_in(scene.cast.organizer), scene.cast.organizer, claimed)
    label_all(signed_in(scene.val), scene.val, lambda p: {"label": flip[p.variant_label]})
    contests = Contest.objects.filter(origin=Contest.Origin.VALIDATION)
    assert contests.count() == 7
    organizer = signed_in(scene.cast.organizer)
    page = organizer.get(f"{OVERVIEW}?state=disputed").content.decode()
    assert "7 disputed pairs wait for your decision" in page
    contest = contests.first()
    assert f"/tasks/sst/organize/contests/#contest-{contest.id}-heading" in page
    adjudication = organizer.get("/tasks/sst/organize/contests/").content.decode()
    assert f'id="contest-{contest.id}-heading"' in adjudication
    assert "Opened by" in adjudication and "label validation" in adjudication


def test_the_dashboard_links_to_the_overview_while_validation_is_on(scene):
    organizer = signed_in(scene.cast.organizer)
    assert OVERVIEW in organizer.get("/tasks/sst/organize/").content.decode()
    SharedTask.objects.filter(pk=scene.cast.shared_task.pk).update(validation_mode="off")
    page = organizer.get("/tasks/sst/organize/").content.decode()
    assert page.count(OVERVIEW) == 1  # the section's tab only


def test_an_unknown_state_filter_shows_every_pair(scene):
    page = signed_in(scene.cast.organizer).get(f"{OVERVIEW}?state=nonsense").content.decode()
    assert "Entry pairs, page 1 of 1" in page


# --- A link for validators ------------------------------------------------------------------


def test_an_organizer_makes_a_link_for_validators_and_it_makes_a_validator(scene):
    organizer = signed_in(scene.cast.organizer)
    response = organizer.post(
        "/tasks/sst/organize/task-invitations/", {"note": "annotators", "grants_validator": "on"}
    )
    assert response.status_code == 302
    page = organizer.get("/tasks/sst/organize/teams/").content.decode()
    token = re.search(r"/task-invitations/([^/]+)/\">[^<]*</a></td>\s*<td>annotators", page)
    assert token, page
    assert 'annotators <span class="badge">validators</span>' in page
    newcomer = get_user_model().objects.create_user("nina", password="pw-nina-123")
    client = signed_in(newcomer)
    invitation = client.get(f"/task-invitations/{token.group(1)}/").content.decode()
    assert "validate labels" in invitation
    response = client.post(f"/task-invitations/{token.group(1)}/")
    assert response.status_code == 302 and response["Location"] == QUEUE
    assert TaskAccess.objects.get(user=newcomer).is_validator
    assert client.get(QUEUE).status_code == 200


# --- Results ---------------------------------------------------------------------------------


def test_the_results_say_what_validation_did_to_each_team(db):
    """The majority relabels one of Delft's pairs and validates the rest; the published
    leaderboards give each team's counts, its unvalidated score and the agreement, and the
    item explorer finds the relabelled pair by its state."""
    scene = build_validation_scene(votes_per_pair=2)
    hate = "I hate this movie!"

    def careful(pair: Pair) -> dict[str, str]:
        return {"label": "positive" if pair.variant_text == hate else pair.variant_label}

    label_all(signed_in(scene.cast.organizer), scene.cast.organizer, careful)
    label_all(signed_in(scene.val), scene.val, careful)
    add_ready_system(scene.cast)
    score_crowd(scene.cast)
    page = signed_in(scene.cast.organizer).get("/tasks/sst/results/").content.decode()
    section = re.search(r'<section aria-labelledby="validation-heading">.*?</section>', page, re.S)
    assert section, page
    rows = {
        cells[0]: cells[1:]
        for cells in (
            re.findall(r"<td[^>]*>(.*?)</td>", row)
            for row in re.findall(r"<tr><td>.*?</tr>", section.group(0))
        )
    }
    # score, unvalidated score, validated, relabelled, left out, waiting, alpha
    assert rows["Delft"][2:6] == ["2", "1", "0", "0"]
    assert rows["Utrecht"][2:6] == ["4", "0", "0", "0"]
    assert "over 14 votes" in section.group(0)
    items = signed_in(scene.cast.organizer).get(
        "/tasks/sst/results/items/", {"validation": "relabelled"}
    )
    assert "1 pair</h2>" in items.content.decode()
    assert "hate" in items.content.decode()  # the word the variant changed
    assert "relabelled by the majority</span> (2 votes, claimed negative)" in (
        items.content.decode()
    )


def test_the_leaderboards_say_nothing_of_validation_when_it_was_off(db):
    scene = build_validation_scene()
    SharedTask.objects.filter(pk=scene.cast.shared_task.pk).update(validation_mode="off")
    add_ready_system(scene.cast)
    score_crowd(scene.cast)
    page = signed_in(scene.cast.organizer).get("/tasks/sst/results/").content.decode()
    assert "validation-heading" not in page


# --- Label unverified -------------------------------------------------------------------------


def test_pairs_marked_label_unverified_say_so_wherever_they_are_listed(scene):
    pair = scene.utrecht_entry.pairs.order_by("row").first()
    Pair.objects.filter(pk=pair.pk).update(label_unverified=True)
    brian = signed_in(scene.cast.breaker)
    page = brian.get(f"/tasks/sst/pair-sets/{scene.utrecht_entry.id}/").content.decode()
    assert page.count(">label unverified</span>") == 2  # the pair, and the note saying what it is
    assert "counts in the scores only once validators confirm its label" in page
    organizer = signed_in(scene.cast.organizer)
    overview = organizer.get(OVERVIEW).content.decode()
    assert overview.count(">label unverified</span>") == 1
    # Without the mark, no badge and no note.
    Pair.objects.filter(pk=pair.pk).update(label_unverified=False)
    page = brian.get(f"/tasks/sst/pair-sets/{scene.utrecht_entry.id}/").content.decode()
    assert "label unverified" not in page
