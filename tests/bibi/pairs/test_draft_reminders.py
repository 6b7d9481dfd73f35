"""No silent loss of a draft: the pages say that a team's draft holds unsubmitted pairs and
when the break phase ends, and housekeeping e-mails the team once as the deadline nears."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from bibi.housekeeping import housekeeping_task
from bibi.pairs import services as pair_services
from bibi.pairs.housekeeping import draft_reminders_send
from bibi.pairs.models import PairSet
from bibi.sharedtasks.models import Phase
from bibi.texts import moment_text

from ..web.conftest import TASK, page_client
from .conftest import GOOD_PAIRS, pair_inputs, start_phase_now

pytestmark = pytest.mark.django_db


def add_to_draft(cast, count: int = 2) -> PairSet:
    for pair in pair_inputs(GOOD_PAIRS[:count]):
        pair_services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=pair)
    return PairSet.objects.get(team=cast.breaker_team, status=PairSet.Status.DRAFT)


def break_phase(cast) -> Phase:
    return cast.shared_task.phases.get(kind=Phase.Kind.BREAK)


def words(response) -> str:
    text = re.sub(r"<[^>]+>", " ", response.content.decode())
    return re.sub(r"\s+", " ", text)


def test_every_task_page_warns_the_team_of_its_unsubmitted_draft(cast):
    add_to_draft(cast)
    deadline = break_phase(cast).ends_at
    client = page_client(cast, "breaker")
    for path in ["", "pairs/", "results/", "data/starter/"]:
        response = client.get(f"{TASK}{path}")
        assert response.status_code == 200, path
        text = words(response)
        assert "Your team's draft holds 2 unsubmitted pairs." in text, path
        assert f"the break phase ends {moment_text(deadline)}" in text, path
    # Nobody else is told about this team's draft.
    for role in ["organizer", "builder", "outsider", "anonymous"]:
        assert "data-draft-warning" not in page_client(cast, role).get(TASK).content.decode()


def test_an_empty_or_submitted_draft_gives_no_warning(cast):
    draft = add_to_draft(cast, count=1)
    pair_services.pair_remove(pair=draft.pairs.get(), user=cast.breaker)
    client = page_client(cast, "breaker")
    assert "data-draft-warning" not in client.get(f"{TASK}pairs/").content.decode()
    add_to_draft(cast, count=1)
    assert client.post(f"{TASK}pairs/draft/submit/").status_code == 302
    assert "data-draft-warning" not in client.get(f"{TASK}pairs/").content.decode()


def test_after_the_break_phase_the_page_says_the_draft_was_never_submitted(cast):
    add_to_draft(cast)
    start_phase_now(cast.shared_task, "contest")
    text = words(page_client(cast, "breaker").get(f"{TASK}pairs/"))
    assert "Your team's draft of 2 pairs was never submitted" in text
    assert "not part of your entry and are not scored" in text


def set_deadline(cast, in_hours: float) -> None:
    phase = break_phase(cast)
    phase.ends_at = timezone.now() + timedelta(hours=in_hours)
    phase.save()


@pytest.fixture
def reachable(cast):
    for user, address in [(cast.breaker, "brian@example.org")]:
        user.email = address
        user.save()
    return cast


def test_a_draft_near_its_deadline_is_reminded_once(reachable, settings):
    settings.DRAFT_REMINDER_HOURS = 24
    draft = add_to_draft(reachable)
    set_deadline(reachable, 30)
    assert draft_reminders_send() == 0 and not mail.outbox

    set_deadline(reachable, 20)
    assert draft_reminders_send() == 1
    (message,) = mail.outbox
    assert message.to == ["brian@example.org"]
    assert "draft of 2 pairs is not submitted" in message.subject
    deadline = moment_text(break_phase(reachable).ends_at)
    assert deadline in message.body and "/tasks/sst/pairs/" in message.body
    draft.refresh_from_db()
    assert draft.draft_reminded_at is not None
    # Once: the next housekeeping round sends nothing more.
    assert draft_reminders_send() == 0 and len(mail.outbox) == 1


def test_a_later_deadline_brings_a_new_reminder_when_it_nears(reachable, settings):
    settings.DRAFT_REMINDER_HOURS = 24
    add_to_draft(reachable)
    set_deadline(reachable, 20)
    assert draft_reminders_send() == 1
    set_deadline(reachable, 24 * 5)
    assert draft_reminders_send() == 0
    later = timezone.now() + timedelta(days=4, hours=2)
    assert draft_reminders_send(now=later) == 1 and len(mail.outbox) == 2


def test_no_reminder_for_empty_or_submitted_drafts_or_a_closed_phase(reachable, settings):
    settings.DRAFT_REMINDER_HOURS = 24
    set_deadline(reachable, 20)
    draft = add_to_draft(reachable, count=1)
    pair_services.pair_remove(pair=draft.pairs.get(), user=reachable.breaker)
    assert draft_reminders_send() == 0
    add_to_draft(reachable, count=1)
    pair_services.pair_set_draft_submit(pair_set=draft, user=reachable.breaker)
    assert draft_reminders_send() == 0
    add_to_draft(reachable, count=1)
    start_phase_now(reachable.shared_task, "contest")
    assert draft_reminders_send() == 0
    assert not mail.outbox


def test_the_beats_housekeeping_sends_the_reminders(reachable, settings):
    settings.DRAFT_REMINDER_HOURS = 24
    add_to_draft(reachable)
    set_deadline(reachable, 1)
    assert housekeeping_task()["draft_reminders"] == 1
    assert len(mail.outbox) == 1
