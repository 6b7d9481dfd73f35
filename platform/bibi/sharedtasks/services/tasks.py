"""Creating and changing shared tasks, and adding organizers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from bibi.sharedtasks.models import (
    Membership,
    Organizer,
    SharedTask,
)
from bibi.sharedtasks.services.access import organizer_require
from bibi.sharedtasks.services.audit import audit_record

SHARED_TASK_EDITABLE_FIELDS = (
    "name",
    "description",
    "is_public",
    "labels",
    "weight_mode",
    "break_rate_mode",
    "pair_min_shared_token_ratio",
    "pair_max_edit_distance",
    "pair_max_edit_ratio",
    "pair_require_rationale",
    "pair_max_text_chars",
    "strategy_tags",
    "guidance_visibility",
    "guidance_shows_systems",
    "max_systems_per_team",
    "max_uploads_per_system",
    "max_pair_sets_per_team",
    "max_pairs_per_set",
    "allow_anonymous_teams",
)


@transaction.atomic
def shared_task_create(
    *, creator: AbstractBaseUser, name: str, slug: str, **fields: Any
) -> SharedTask:
    """Create a shared task; its creator becomes its first organizer."""
    unknown = set(fields) - set(SHARED_TASK_EDITABLE_FIELDS) - {"task_type"}
    if unknown:
        raise ValidationError(f"Unknown shared task fields: {', '.join(sorted(unknown))}")
    if SharedTask.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": f"A shared task with the slug '{slug}' already exists."})
    shared_task = SharedTask(name=name, slug=slug, **fields)
    shared_task.full_clean()
    shared_task.save()
    Organizer.objects.create(shared_task=shared_task, user=creator)
    audit_record(
        shared_task=shared_task,
        actor=creator,
        action="shared_task.create",
        target=f"shared_task:{slug}",
    )
    return shared_task


@transaction.atomic
def shared_task_update(
    *, shared_task: SharedTask, actor: AbstractBaseUser, **changes: Any
) -> SharedTask:
    organizer_require(user=actor, shared_task=shared_task, doing="that")
    unknown = set(changes) - set(SHARED_TASK_EDITABLE_FIELDS)
    if unknown:
        raise ValidationError(f"These fields cannot be changed: {', '.join(sorted(unknown))}")
    if (
        "labels" in changes
        and changes["labels"] != shared_task.labels
        and shared_task.datasets.filter(examples__isnull=False).exists()
    ):
        raise ValidationError(
            {"labels": "The label set cannot change once examples have been imported."}
        )
    before = {field: getattr(shared_task, field) for field in changes}
    for field, value in changes.items():
        setattr(shared_task, field, value)
    shared_task.full_clean()
    shared_task.save()
    changed = {f: {"from": before[f], "to": changes[f]} for f in changes if before[f] != changes[f]}
    if changed:
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action="shared_task.update",
            target=f"shared_task:{shared_task.slug}",
            details=changed,
        )
    return shared_task


@transaction.atomic
def organizer_add(
    *, shared_task: SharedTask, actor: AbstractBaseUser, user: AbstractBaseUser
) -> Organizer:
    organizer_require(user=actor, shared_task=shared_task, doing="that")
    if Membership.objects.filter(shared_task=shared_task, user=user).exists():
        raise ValidationError("A member of a team in this shared task cannot also organize it.")
    organizer, created = Organizer.objects.get_or_create(shared_task=shared_task, user=user)
    if created:
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action="organizer.add",
            target=f"user:{user.get_username()}",
        )
    return organizer
