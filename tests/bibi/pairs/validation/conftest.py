"""What the label-validation tests share: validation turned on, invited validators, votes
given directly, and two teams' entries ready to validate."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from bibi.pairs.models import LabelValidation
from bibi.pairs.validation import services as validation_services
from bibi.pairs.validation import validator_role
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import SharedTask

from ..conftest import GOOD_PAIRS, start_contests, submit


def validation_on(shared_task: SharedTask, actor, **fields) -> None:
    task_services.shared_task_update(
        shared_task=shared_task, actor=actor, **{"validation_mode": "all", **fields}
    )


def invited_validator(cast, name: str = "vera"):
    """Someone let in by a link that grants the validator role."""
    user = get_user_model().objects.create_user(name, password=f"pw-{name}-123")
    link = task_services.task_invitation_create(
        shared_task=cast.shared_task, actor=cast.organizer, grants_validator=True
    )
    task_services.task_invitation_accept(token=link.token, user=user)
    return user


@pytest.fixture
def entries(cast, rival):
    """Utrecht (cast.breaker) enters GOOD_PAIRS, OSU (rival) the first two; the break phase is
    over; validation of all pairs, 3 votes each, majority rule."""
    ours = submit(cast)
    theirs = submit(cast, GOOD_PAIRS[:2], team=rival[0], user=rival[1])
    start_contests(cast.shared_task)
    validation_on(cast.shared_task, cast.organizer)
    cast.shared_task.refresh_from_db()
    return ours, theirs


def votes_on(pair, users, labels, shared_task, **flags) -> list[validation_services.ValidationVote]:
    """Each user votes the given label on ``pair`` (handed to them directly)."""
    done = []
    for user, label in zip(users, labels, strict=True):
        role = validator_role(user=user, shared_task=shared_task)
        item = LabelValidation.objects.create(pair=pair, validator=user, role=role)
        done.append(
            validation_services.validation_submit(
                validation_id=item.id, user=user, label=label, unclear=not label, **flags
            )
        )
    return done
