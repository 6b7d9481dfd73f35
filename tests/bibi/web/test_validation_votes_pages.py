"""Label validation pages after issue 31: the word diff on the Validate page (still blind),
the organizers' CSV of every vote, the skips they read, and links for validators that let
in one person by default and say who accepted them."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from bibi.pairs.models import LabelValidation, Pair
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import TaskInvitation

from .validation_scene import QUEUE, ValidationScene, build_validation_scene, handed, signed_in

VOTES_CSV = "/tasks/sst/organize/validation/votes.csv"
OVERVIEW = "/tasks/sst/organize/validation/"
TEAMS = "/tasks/sst/organize/teams/"


@pytest.fixture
def scene(db) -> ValidationScene:
    return build_validation_scene()


def test_the_validate_page_shows_the_word_diff_and_stays_blind(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    item = handed(scene.val)
    words = "a quiet and careful film that takes its time with every one of its many " * 3
    original = words.strip()
    variant = original.replace("careful", "careless", 1)
    Pair.objects.filter(pk=item.pair_id).update(original_text=original, variant_text=variant)
    page = client.get(QUEUE).content.decode()
    diff = page[page.index('id="validation-diff"') :]
    diff = diff[: diff.index("</div>")]
    assert '<del><span class="visually-hidden">[removed: </span>careful<' in diff
    assert '<ins><span class="visually-hidden">[added: </span>careless<' in diff
    assert diff.count("<ins>") == 1 and diff.count("<del>") == 1
    pair = item.pair
    for secret in (pair.pair_set.team.name, pair.rationale, "claimed"):
        if secret:
            assert secret not in diff


def vote_through_the_page(scene, user, note: str = "") -> LabelValidation:
    client = signed_in(user)
    client.post(f"{QUEUE}next/")
    item = handed(user)
    response = client.post(f"{QUEUE}{item.id}/", {"label": "Positive", "note": note})
    assert response.status_code == 302, response.content.decode()[:2000]
    item.refresh_from_db()
    return item


def test_the_votes_csv_is_for_organizers_with_every_vote_and_no_formula(scene):
    given = vote_through_the_page(scene, scene.val, note='=HYPERLINK("http://x")')
    brian = vote_through_the_page(scene, scene.cast.breaker)
    organizer = signed_in(scene.cast.organizer)
    response = organizer.get(VOTES_CSV)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    by_id = {int(row["validation_id"]): row for row in rows}
    assert set(by_id) == {given.id, brian.id}
    row = by_id[given.id]
    assert row["validator"] == "val" and row["validator_team"] == ""
    assert row["label"] == "positive" and row["note"] == '\'=HYPERLINK("http://x")'
    assert row["pair_team"] == given.pair.pair_set.team.name and row["submitted_at"]
    assert by_id[brian.id]["validator_team"] == scene.cast.breaker_team.name
    assert by_id[brian.id]["validator_role"] == "breaker"
    # Everyone else: refused (a validator, a breaker, a builder) or sent to sign in.
    for user in (scene.val, scene.cast.breaker, scene.dora, scene.cast.builder):
        assert signed_in(user).get(VOTES_CSV).status_code == 403
    assert Client().get(VOTES_CSV).status_code == 302
    assert (
        'href="/tasks/sst/organize/validation/votes.csv"'
        in organizer.get(OVERVIEW).content.decode()
    )


def test_the_overview_counts_each_validators_skips(scene):
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    item = handed(scene.val)
    client.post(f"{QUEUE}{item.id}/skip/")
    page = signed_in(scene.cast.organizer).get(OVERVIEW).content.decode()
    assert '<th scope="col" class="num">Skipped</th>' in page
    row = page[page.index('<span class="mono">val</span>') :]
    row = row[: row.index("</tr>")]
    assert row.rstrip().endswith('<td class="num">1</td>')


def test_skipping_past_the_limit_is_refused_on_the_page(scene, settings):
    settings.VALIDATION_SKIPS_MAX = 1
    client = signed_in(scene.val)
    client.post(f"{QUEUE}next/")
    client.post(f"{QUEUE}{handed(scene.val).id}/skip/")
    item = handed(scene.val)
    page = client.get(QUEUE).content.decode()
    assert 'id="no-skips-left"' in page and "Skip this pair" not in page
    response = client.post(f"{QUEUE}{item.id}/skip/", follow=True)
    assert response.status_code == 200
    assert "skipped 1 pairs" in response.content.decode()
    item.refresh_from_db()
    assert item.status == "assigned"


def test_a_validators_link_lets_in_one_person_and_says_who(scene):
    users = get_user_model().objects
    organizer = signed_in(scene.cast.organizer)
    response = organizer.post(
        "/tasks/sst/organize/task-invitations/", {"note": "for Ann", "grants_validator": "on"}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    link = TaskInvitation.objects.get(note="for Ann")
    assert link.max_uses == 1
    ann, ann2 = (
        users.create_user("ann", password="pw-ann-123"),
        users.create_user("ann2", password="pw-ann2-123"),
    )
    task_services.task_invitation_accept(token=link.token, user=ann)
    with pytest.raises(Exception, match="used as often as it may be"):
        task_services.task_invitation_accept(token=link.token, user=ann2)
    # Someone already let in who becomes a validator by a link takes a use of it too.
    plain = task_services.task_invitation_create(
        shared_task=scene.cast.shared_task, actor=scene.cast.organizer, note="plain"
    )
    assert plain.max_uses is None
    task_services.task_invitation_accept(token=plain.token, user=ann2)
    raised = task_services.task_invitation_create(
        shared_task=scene.cast.shared_task,
        actor=scene.cast.organizer,
        grants_validator=True,
        max_uses=3,
        note="three",
    )
    task_services.task_invitation_accept(token=raised.token, user=ann2)
    page = organizer.get(TEAMS).content.decode()
    assert "gives whoever accepts it the validator role in this task" in page
    assert "these links matter when it is private" not in page.lower()
    rows = {
        note: page[page.index(f"<td>{note}") :][: page[page.index(f"<td>{note}") :].index("</tr>")]
        for note in ("for Ann", "plain", "three")
    }
    assert ">1 of 1<" in rows["for Ann"] and '<span class="mono">ann</span>' in rows["for Ann"]
    assert '<span class="mono">ann2</span>' in rows["plain"] and "ann2" in rows["three"]
    assert ">1 of 3<" in rows["three"]
    api = organizer.get("/api/v1/shared-tasks/sst/task-invitations/").json()
    listed = {row["note"]: row for row in api["results"]}
    assert [each["username"] for each in listed["for Ann"]["used_by"]] == ["ann"]
    assert listed["three"]["uses"] == 1
