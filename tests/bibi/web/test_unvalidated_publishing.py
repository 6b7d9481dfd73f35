"""Publishing on unvalidated labels never happens without a word (issue 31, point 3), and
the leaderboards and scoring page say the truth (point 13): publishing a snapshot scored
while pairs waited for votes, and closing the contest phase (which ends validation), warn
with the counts and ask to confirm (page, API, management command); the leaderboards count
each team's pairs scored on claimed labels, or leave them out as the task's setting says;
systems not scored are listed with why; the scoring page says what starts runs here."""

from __future__ import annotations

import re
import time

import pytest
import redis
from django.conf import settings
from django.core.management import CommandError, call_command

from bibi.evaluation.models import Snapshot
from bibi.health import BEAT_TICK_KEY
from bibi.pairs.models import LabelValidation
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.systems.models import System, SystemVersion

from .conftest import score_crowd
from .validation_scene import (
    QUEUE,
    ValidationScene,
    add_ready_system,
    build_validation_scene,
    handed,
    signed_in,
)

SCORING = "/tasks/sst/organize/scoring/"
PHASES = "/tasks/sst/organize/phases/"
API = "/api/v1/shared-tasks/sst/"


def vote_on(scene: ValidationScene, count: int) -> None:
    """The organizer labels ``count`` pairs (the queue's first), each with its claimed label:
    with one vote a pair, they are validated and the others wait."""
    organizer = signed_in(scene.cast.organizer)
    for _ in range(count):
        assert organizer.post(f"{QUEUE}next/").status_code == 302
        item = handed(scene.cast.organizer)
        assert item is not None
        response = organizer.post(f"{QUEUE}{item.id}/", {"label": item.pair.variant_label})
        assert response.status_code == 302


def waiting_by_team(scene: ValidationScene) -> dict[str, int]:
    voted = set(
        LabelValidation.objects.filter(status=LabelValidation.Status.DONE).values_list(
            "pair_id", flat=True
        )
    )
    return {
        name: entry.pairs.exclude(id__in=voted).count()
        for name, entry in (("Utrecht", scene.utrecht_entry), ("Delft", scene.delft_entry))
    }


@pytest.fixture
def scene(db) -> ValidationScene:
    """Seven entry pairs (Utrecht 4, Delft 3), one vote a pair; three are voted on, four
    wait; a ready system; a snapshot scored, not published."""
    scene = build_validation_scene(votes_per_pair=1)
    vote_on(scene, 3)
    add_ready_system(scene.cast)
    return scene


def validation_section(page: str) -> str:
    section = re.search(r'<section aria-labelledby="validation-heading">.*?</section>', page, re.S)
    assert section, page
    return section.group(0)


# --- Publishing -------------------------------------------------------------------------------


def test_publishing_on_the_page_warns_with_the_counts_and_asks_to_confirm(scene):
    snapshot = score_crowd(scene.cast, publish=False)
    waiting = waiting_by_team(scene)
    organizer = signed_in(scene.cast.organizer)

    scoring = organizer.get(SCORING).content.decode()
    assert "4 pairs were still waiting for votes" in scoring
    assert f'<button type="submit">Publish snapshot {snapshot.id}</button>' not in scoring

    url = f"/tasks/sst/organize/snapshots/{snapshot.id}/publish/"
    asked = organizer.get(url)
    assert asked.status_code == 200
    page = asked.content.decode()
    assert 'id="publish-pending"' in page
    assert "4 of the 7 pairs scored were still waiting for validators&#x27; votes" in page
    for team, count in waiting.items():
        if count:
            assert f"{team} {count}" in page
    assert "scored with the labels their teams claimed" in page

    refused = organizer.post(url)  # the button alone, without the confirmation
    assert refused.status_code == 400
    snapshot.refresh_from_db()
    assert snapshot.published_at is None

    published = organizer.post(url, {"confirm_pending": "on"})
    assert published.status_code == 302
    snapshot.refresh_from_db()
    assert snapshot.published_at is not None


def test_publishing_through_the_api_is_refused_unless_confirmed(scene):
    snapshot = score_crowd(scene.cast, publish=False)
    organizer = signed_in(scene.cast.organizer)
    url = f"{API}snapshots/{snapshot.id}/publish/"
    refused = organizer.post(url)
    assert refused.status_code == 400
    body = refused.content.decode()
    assert "4 of the 7 pairs scored were still waiting" in body
    assert Snapshot.objects.get(id=snapshot.id).published_at is None
    assert organizer.post(f"{url}?confirm=true").status_code == 200
    assert Snapshot.objects.get(id=snapshot.id).published_at is not None


def test_publishing_with_the_command_is_refused_unless_forced(scene):
    score_crowd(scene.cast, publish=False)
    with pytest.raises(CommandError, match="Not published: 4 of the 7 pairs scored"):
        call_command("score", "sst", "--publish", verbosity=0)
    assert not Snapshot.objects.filter(published_at__isnull=False).exists()
    call_command("score", "sst", "--publish", "--force", verbosity=0)
    assert Snapshot.objects.filter(published_at__isnull=False).count() == 1


def test_a_snapshot_with_every_vote_in_is_published_without_a_question(db):
    scene = build_validation_scene(votes_per_pair=1)
    vote_on(scene, 7)
    add_ready_system(scene.cast)
    snapshot = score_crowd(scene.cast)  # publishes, unconfirmed
    snapshot.refresh_from_db()
    assert snapshot.published_at is not None
    page = signed_in(scene.cast.organizer).get("/tasks/sst/results/").content.decode()
    section = validation_section(page)
    assert "The scores above use the validated labels" in section
    assert 'id="claimed-labels"' not in section


# --- Closing the contest phase ------------------------------------------------------------


def test_closing_the_contest_phase_warns_that_validation_ends_with_the_counts(scene):
    organizer = signed_in(scene.cast.organizer)
    page = organizer.get(PHASES).content.decode()
    assert 'id="close-contest-validation"' in page
    assert "ends label validation for good: 4 pairs are still waiting for votes" in page

    url = f"{PHASES}contest/close-now/"
    response = organizer.post(url, {"confirm": "on"}, follow=True)
    assert "Nothing was closed" in response.content.decode()
    assert "4 pairs are still waiting for votes" in response.content.decode()
    contest = Phase.objects.get(shared_task=scene.cast.shared_task, kind="contest")
    assert contest.is_open()

    organizer.post(url, {"confirm": "on", "confirm_validation": "1"})
    contest.refresh_from_db()
    assert not contest.is_open()


def test_closing_the_contest_phase_through_the_api_is_refused_unless_confirmed(scene):
    organizer = signed_in(scene.cast.organizer)
    url = f"{API}phases/contest/close-now/"
    refused = organizer.post(url)
    assert refused.status_code == 400
    assert "4 pairs are still waiting for votes" in refused.content.decode()
    contest = Phase.objects.get(shared_task=scene.cast.shared_task, kind="contest")
    assert contest.is_open()
    done = organizer.post(url, {"confirm": True}, content_type="application/json")
    assert done.status_code == 200
    contest.refresh_from_db()
    assert not contest.is_open()


# --- The leaderboards -------------------------------------------------------------------------


def test_the_leaderboards_count_each_teams_pairs_on_claimed_labels(scene):
    snapshot = score_crowd(scene.cast, publish=False)
    signed_in(scene.cast.organizer).post(
        f"/tasks/sst/organize/snapshots/{snapshot.id}/publish/", {"confirm_pending": "on"}
    )
    waiting = waiting_by_team(scene)
    page = signed_in(scene.cast.organizer).get("/tasks/sst/results/").content.decode()
    section = validation_section(page)
    assert "The scores above use the validated labels" not in section
    assert 'id="claimed-labels"' in section
    assert "4 pairs are scored with the label their teams claimed" in section
    assert "On claimed labels" in section
    rows = {
        cells[0]: cells[1:]
        for cells in (
            re.findall(r"<td[^>]*>(.*?)</td>", row)
            for row in re.findall(r"<tr><td>.*?</tr>", section)
        )
    }
    # score, unvalidated score, validated, relabelled, left out, waiting, on claimed labels
    for team, count in waiting.items():
        assert rows[team][5] == str(count)
        assert rows[team][6] == str(count)


def test_the_task_setting_leaves_pairs_waiting_for_votes_out(scene):
    organizer = signed_in(scene.cast.organizer)
    patched = organizer.patch(
        "/api/v1/shared-tasks/sst/",
        {"validation_pending": "left_out"},
        content_type="application/json",
    )
    assert patched.status_code == 200, patched.content
    assert SharedTask.objects.get(slug="sst").validation_pending == "left_out"
    snapshot = score_crowd(scene.cast, publish=False)
    assert snapshot.counts["pairs"] == 3  # the three with their votes in
    organizer.post(
        f"/tasks/sst/organize/snapshots/{snapshot.id}/publish/", {"confirm_pending": "on"}
    )
    section = validation_section(organizer.get("/tasks/sst/results/").content.decode())
    assert 'id="claimed-labels"' not in section
    assert "4 pairs were still waiting for votes and are left out of the scores" in section
    assert "The scores above use the validated labels" in section


# --- Systems left out, and what starts runs ------------------------------------------------------


def test_the_leaderboard_lists_the_systems_left_out_and_why(scene):
    cast = scene.cast
    validating = System.objects.create(
        shared_task=cast.shared_task, team=cast.builder_team, name="still-checking", kind="hosted"
    )
    SystemVersion.objects.create(system=validating, number=1, status=SystemVersion.Status.RUNNING)
    failed = System.objects.create(
        shared_task=cast.shared_task, team=cast.builder_team, name="broken", kind="hosted"
    )
    SystemVersion.objects.create(
        system=failed,
        number=2,
        status=SystemVersion.Status.FAILED,
        failure_reason=SystemVersion.FailureReason.LABEL_MISMATCH,
    )
    score_crowd(cast, publish=False)
    snapshot = Snapshot.objects.latest("id")
    signed_in(cast.organizer).post(
        f"/tasks/sst/organize/snapshots/{snapshot.id}/publish/", {"confirm_pending": "on"}
    )
    page = signed_in(cast.organizer).get("/tasks/sst/results/").content.decode()
    assert "Left out of this scoring" in page
    assert re.search(r"<li>[^<]*still-checking[^<]*: version 1 is still being validated", page)
    assert re.search(r"<li>[^<]*broken[^<]*: version 2 failed validation \(The model", page)


@pytest.fixture
def beat_tick():
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    yield client
    client.delete(BEAT_TICK_KEY)
    client.close()


def test_the_scoring_page_says_what_starts_runs_on_the_embedded_default(db, settings, beat_tick):
    scene = build_validation_scene()
    organizer = signed_in(scene.cast.organizer)
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded default: no beat
    page = organizer.get(SCORING).content.decode()
    assert "This deployment is the embedded default: it runs no periodic tasks (no beat)" in page
    assert "no run starts when the break phase closes" in page
    assert "manage.py score sst" in page
    assert "Runs also start by themselves when the break phase closes" not in page

    settings.CELERY_TASK_ALWAYS_EAGER = False  # workers, and beat ticking
    beat_tick.set(BEAT_TICK_KEY, repr(time.time()))
    page = organizer.get(SCORING).content.decode()
    assert "Runs also start by themselves when the break phase closes" in page
    beat_tick.delete(BEAT_TICK_KEY)  # beat stopped: the page says so
    page = organizer.get(SCORING).content.decode()
    assert "Beat, which runs the periodic tasks, has not ticked lately" in page
