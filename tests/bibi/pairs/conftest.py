"""What the pair tests share: the four BACKGROUND.md pairs, files made of them, the clock.

The cast's starter set holds exactly the four 2017 originals of BACKGROUND.md (ids s1-s4),
so ``GOOD_PAIRS`` is a valid set for it. Phases move with ``start_phase_now``, the way an
organizer closing a phase early would move them: the sets already submitted stay before
the break deadline.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.files.base import ContentFile
from django.db.models import F
from django.utils import timezone

from bibi.pairs import services
from bibi.pairs.models import PairSet
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.tasktypes.rules import PairInput

from ..conftest import Cast

REPO_ROOT = Path(__file__).resolve().parents[3]
PAIR_FIXTURES = REPO_ROOT / "fixtures" / "pairs"
PAIRS_URL = "/api/v1/shared-tasks/sst/pair-sets/"

GOOD_PAIRS = [
    {
        "original_id": "s1",
        "variant_text": "I'm mad for this movie!",
        "variant_label": "positive",
        "rationale": "An idiom a bag of words reads literally",
        "tags": "semantics",
    },
    {
        "original_id": "s2",
        "variant_text": "[Bettis] has a smoldering, humorless intensity that's hilarious.",
        "variant_label": "positive",
        "rationale": "Funny can be positive and negative",
        "tags": "semantics",
    },
    {
        "original_id": "s3",
        "variant_text": "It's not harmless, sure, but it's also not charmless.",
        "variant_label": "positive",
        "rationale": "Two negations flip the judgement",
        "tags": "morphosyntax;semantics",
    },
    {
        "original_id": "s4",
        "variant_text": 'Russell is "terrific" as coach Herb Brooks.',
        "variant_label": "negative",
        "rationale": "Scare quotes make praise sarcastic",
        "tags": "pragmatics",
    },
]
# A pair that fails exactly one check: its variant is its original.
BAD_PAIR = {"original_id": "s1", "variant_text": "I love this movie!", "variant_label": "positive"}


def csv_bytes(rows: list[dict], *, delimiter: str = ",", encoding: str = "utf-8") -> bytes:
    columns = list(dict.fromkeys(key for row in rows for key in row))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, delimiter=delimiter, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue().encode(encoding)


def jsonl_bytes(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def pair_inputs(rows: list[dict]) -> list[PairInput]:
    return [
        PairInput(
            row=number,
            original_id=row.get("original_id", ""),
            original_text=row.get("original_text", ""),
            variant_text=row["variant_text"],
            variant_label=row["variant_label"],
            rationale=row.get("rationale", ""),
            tags=tuple(t for t in row.get("tags", "").split(";") if t),
        )
        for number, row in enumerate(rows, start=1)
    ]


def submit(
    cast: Cast, rows: list[dict] = GOOD_PAIRS, *, team: Team | None = None, user=None
) -> PairSet:
    return services.pair_set_submit(
        team=team or cast.breaker_team, user=user or cast.breaker, pairs=pair_inputs(rows)
    ).pair_set


def upload(cast: Cast, data: bytes, name: str, **kwargs) -> PairSet:
    return upload_submission(cast, data, name, **kwargs).pair_set


def upload_submission(cast: Cast, data: bytes, name: str, **kwargs) -> services.PairSetSubmission:
    return services.pair_set_upload(
        team=cast.breaker_team, user=cast.breaker, file=ContentFile(data, name=name), **kwargs
    )


def start_phase_now(shared_task: SharedTask, kind: str) -> None:
    """Reschedule the phases so that ``kind`` starts now and the phase before it ends now."""
    order = [choice.value for choice in Phase.Kind]
    now = timezone.now()
    shared_task.phases.all().delete()
    for index, each in enumerate(order):
        starts_at = now + timedelta(days=10 * (index - order.index(kind)))
        Phase.objects.create(
            shared_task=shared_task,
            kind=each,
            starts_at=starts_at,
            ends_at=starts_at + timedelta(days=10),
        )


def let_time_pass(shared_task: SharedTask, delta: timedelta) -> None:
    """Move the phases and every submission ``delta`` into the past, as if that much time
    had passed: entries stay entries, and a phase that started now started ``delta`` ago."""
    Phase.objects.filter(shared_task=shared_task).update(
        starts_at=F("starts_at") - delta, ends_at=F("ends_at") - delta
    )
    PairSet.objects.filter(shared_task=shared_task, submitted_at__isnull=False).update(
        submitted_at=F("submitted_at") - delta
    )


# Past the window in which self-reported builders predict the pair texts: builder teams may
# then read the variants' labels.
PAST_THE_PAIR_PREDICTIONS = timedelta(hours=settings.PAIR_PREDICTIONS_WINDOW_HOURS + 1)


def start_contests(shared_task: SharedTask) -> None:
    """The contest phase runs, and builders' pair predictions are final."""
    start_phase_now(shared_task, "contest")
    let_time_pass(shared_task, PAST_THE_PAIR_PREDICTIONS)


@pytest.fixture
def rival(cast: Cast):
    """A second breaker team, OSU, with its member Olivia."""
    user = get_user_model().objects.create_user("olivia", password="pw-olivia-123")
    team = task_services.team_create(
        shared_task=cast.shared_task, owner=user, kind="breaker", name="OSU"
    )
    return team, user
