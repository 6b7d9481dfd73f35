"""Creating and changing shared tasks, and adding organizers."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from bibi.sharedtasks import signals
from bibi.sharedtasks.models import (
    Membership,
    Organizer,
    SharedTask,
)
from bibi.sharedtasks.services.access import organizer_require
from bibi.sharedtasks.services.audit import audit_record
from bibi.tasktypes import task_type

SHARED_TASK_EDITABLE_FIELDS = (
    "name",
    "description",
    "is_public",
    "labels",
    "editable_text",
    "answer_mode",
    "answer_f1_threshold",
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
    "validation_mode",
    "validation_sample_fraction",
    "validations_per_pair",
    "validation_agreement",
    "validation_quota_per_validator",
    "validation_pending",
)

# The settings a span answer's correctness depends on: changing one scores dev cells again.
ANSWER_RULE_FIELDS = ("answer_mode", "answer_f1_threshold")


@transaction.atomic
def shared_task_create(
    *, creator: AbstractBaseUser, name: str, slug: str, **fields: Any
) -> SharedTask:
    """Create a shared task; its creator becomes its first organizer. Settings its type
    starts with (``TaskType.setting_defaults``: a sentence-pair task's NLI labels) apply where
    ``fields`` leaves them out; ``task_type`` not given: text classification."""
    unknown = set(fields) - set(SHARED_TASK_EDITABLE_FIELDS) - {"task_type"}
    if unknown:
        raise ValidationError(f"Unknown shared task fields: {', '.join(sorted(unknown))}")
    kind_key = fields.get("task_type") or SharedTask._meta.get_field("task_type").default
    try:
        defaults = task_type(kind_key).setting_defaults
    except LookupError as error:
        raise ValidationError({"task_type": str(error)}) from None
    fields = {**defaults, **fields}
    return shared_task_store_new(
        creator=creator, shared_task=SharedTask(name=name, slug=slug, **fields)
    )


@transaction.atomic
def shared_task_store_new(
    *, creator: AbstractBaseUser, shared_task: SharedTask, via: str | None = None
) -> SharedTask:
    """Store ``shared_task``, built but not saved (by ``shared_task_create``, or by the
    admin's form, ``via="admin"``); its creator becomes its first organizer, and the audit
    log says so."""
    slug = shared_task.slug
    if SharedTask.objects.filter(slug=slug).exists():
        raise ValidationError({"slug": f"A shared task with the slug '{slug}' already exists."})
    shared_task.full_clean()
    shared_task.save()
    Organizer.objects.get_or_create(shared_task=shared_task, user=creator)
    audit_record(
        shared_task=shared_task,
        actor=creator,
        action="shared_task.create",
        target=f"shared_task:{slug}",
        details={"via": via} if via else None,
    )
    return shared_task


def shared_task_changes_check(*, shared_task: SharedTask, changes: dict[str, Any]) -> None:
    """May ``changes`` (field → new value) be made to the stored ``shared_task``? Raises
    ValidationError if not: the slug and task type never change, nor, once examples have been
    imported, the label set or which text breakers may edit (systems' λmax and hints on the
    starter set are computed over that text)."""
    unknown = set(changes) - set(SHARED_TASK_EDITABLE_FIELDS)
    if unknown:
        raise ValidationError(f"These fields cannot be changed: {', '.join(sorted(unknown))}")
    frozen = {
        "labels": "The label set cannot change once examples have been imported.",
        "editable_text": "Which text breakers may edit cannot change once examples have been "
        "imported.",
    }
    moved = [f for f in frozen if f in changes and changes[f] != getattr(shared_task, f)]
    if moved and shared_task.datasets.filter(examples__isnull=False).exists():
        raise ValidationError({field: frozen[field] for field in moved})


@transaction.atomic
def shared_task_update(
    *, shared_task: SharedTask, actor: AbstractBaseUser, via: str | None = None, **changes: Any
) -> SharedTask:
    """Change the fields of the stored ``shared_task`` (``shared_task_changes_check``);
        audited with each field's old and new value (and ``via``, e.g. "admin", if given). A new
        answer rule (``ANSWER_RULE_FIELDS``) computes every version's dev figures again from its
        stored cells (``signals.answer_rule_changed``: evaluation's
    ``triggers.dev_scores_after_answer_rule``)."""
    organizer_require(user=actor, shared_task=shared_task, doing="that")
    shared_task_changes_check(shared_task=shared_task, changes=changes)
    before = {field: getattr(shared_task, field) for field in changes}
    for field, value in changes.items():
        setattr(shared_task, field, value)
    shared_task.full_clean()
    shared_task.save()
    changed: dict[str, Any] = {
        f: {"from": before[f], "to": changes[f]} for f in changes if before[f] != changes[f]
    }
    if set(changed) & set(ANSWER_RULE_FIELDS):
        # Dev figures are stored with the rule they were computed under: compute them again.
        signals.answer_rule_changed.send(sender=SharedTask, shared_task=shared_task)
    if changed:
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action="shared_task.update",
            target=f"shared_task:{shared_task.slug}",
            details={**changed, "via": via} if via else changed,
        )
    return shared_task


def organizer_add_check(*, shared_task: SharedTask, user: AbstractBaseUser) -> None:
    """May ``user`` organize ``shared_task``? Not while in one of its teams."""
    if Membership.objects.filter(shared_task=shared_task, user=user).exists():
        raise ValidationError("A member of a team in this shared task cannot also organize it.")


@transaction.atomic
def organizer_add(
    *, shared_task: SharedTask, actor: AbstractBaseUser, user: AbstractBaseUser
) -> Organizer:
    organizer_require(user=actor, shared_task=shared_task, doing="that")
    organizer_add_check(shared_task=shared_task, user=user)
    organizer, created = Organizer.objects.get_or_create(shared_task=shared_task, user=user)
    if created:
        audit_record(
            shared_task=shared_task,
            actor=actor,
            action="organizer.add",
            target=f"user:{user.get_username()}",
        )
    return organizer
