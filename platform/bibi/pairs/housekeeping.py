"""The beat's housekeeping for breaker teams: a reminder before the break deadline to every
team whose draft holds pairs it has not submitted (they count for nothing otherwise, and a
draft cannot be submitted once the phase has ended).

A team is reminded once when its deadline comes within ``DRAFT_REMINDER_HOURS``, by e-mail to
its members who have an address; the pages say the same to whoever looks
(``selectors.draft_unsubmitted``). Moving the deadline later brings a new reminder when the
new one nears.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.core.mail import send_mass_mail
from django.utils import timezone

from bibi.pairs.models import PairSet
from bibi.pairs.selectors import drafts_to_remind
from bibi.sharedtasks.selectors import team_members
from bibi.texts import moment_text


def _message(draft: PairSet) -> tuple[str, str]:
    count = getattr(draft, "pair_count", 0)
    deadline = getattr(draft, "deadline", None)
    when = moment_text(deadline) if deadline else "the break deadline"
    subject = f"{draft.shared_task.name}: your team's draft of {count} pairs is not submitted"
    body = (
        f"Your team {draft.team.name} has a draft of {count} pair"
        f"{'' if count == 1 else 's'} in {draft.shared_task.name} that is not submitted.\n"
        f"Draft pairs count for nothing until the draft is submitted, and the break phase "
        f"ends at {when}: after that the draft cannot be submitted.\n\n"
        f"Submit it on the Pairs page of the task (/tasks/{draft.shared_task.slug}/pairs/ "
        f"on the platform).\n"
    )
    return subject, body


def draft_reminders_send(*, now: datetime | None = None) -> int:
    """E-mail the members of each team whose unsubmitted draft nears its deadline; the
    number of drafts reminded. A draft is marked reminded only once its mail has gone."""
    now = now or timezone.now()
    within = timedelta(hours=settings.DRAFT_REMINDER_HOURS)
    reminded = 0
    for draft in drafts_to_remind(now=now, within=within):
        addresses = [
            membership.user.email
            for membership in team_members(team=draft.team)
            if membership.user.email
        ]
        if addresses:
            subject, body = _message(draft)
            send_mass_mail(
                [(subject, body, settings.DEFAULT_FROM_EMAIL, [address]) for address in addresses]
            )
        PairSet.objects.filter(id=draft.id).update(draft_reminded_at=now)
        reminded += 1
    return reminded
