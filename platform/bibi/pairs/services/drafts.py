"""A team's draft, built one pair at a time (``pair_add``, ``pair_remove``) and submitted
as a version (``pair_set_draft_submit``); and choosing the team's entry
(``pair_set_mark_final``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from bibi.files import RowError
from bibi.pairs import selectors
from bibi.pairs.models import Pair, PairSet
from bibi.pairs.services.pair_sets import (
    PairSetRejected,
    PairSetSubmission,
    breaker_member_require,
    pair_build,
    set_quota_require,
    starter_index,
    submission_describe,
    team_lock,
)
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask, Team
from bibi.tasktypes.rules import CheckedPair, PairInput, PairRules


@transaction.atomic
def pair_add(
    *,
    team: Team,
    user: AbstractBaseUser,
    pair: PairInput,
    label_map: Mapping[str, str] | None = None,
) -> Pair:
    """Check one pair and add it to the team's draft set, which is created if need be.

    The pair's row is its place in the draft; the returned pair carries ``warnings`` (a list
    of ``RowError``, as a submission's). Raises like ``pair_set_submit``.
    """
    shared_task = team.shared_task
    breaker_member_require(team=team, user=user)
    task_services.phase_require_open(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing="adding pairs"
    )
    rules = PairRules.for_shared_task(shared_task)
    team_lock(team)
    draft = selectors.pair_set_draft(team=team)
    if draft is None:
        draft = PairSet.objects.create(
            shared_task=shared_task,
            team=team,
            status=PairSet.Status.DRAFT,
            source=PairSet.Source.FORM,
            created_by=user,
        )
    kind = shared_task.kind
    taken = {
        tuple(row[:-1]): row[-1]
        for row in draft.pairs.values_list(*kind.pair_fields("variant"), "row")
    }
    if len(taken) >= shared_task.max_pairs_per_set:
        raise ValidationError(
            f"The draft already has {len(taken)} pairs, the most this shared task allows in "
            "one set: submit it, and start another."
        )
    pair = dataclasses.replace(pair, row=max(taken.values(), default=0) + 1)
    checked, errors = _draft_pair_checked(
        shared_task, draft, pair, rules=rules, label_map=label_map, taken=taken
    )
    if errors:
        raise PairSetRejected(errors, source="the pair")
    stored = pair_build(draft, checked[0])
    stored.save()
    stored.warnings = [RowError(line=stored.row, reason=w) for w in checked[0].warnings]
    return stored


def _draft_pair_checked(
    shared_task: SharedTask,
    draft: PairSet,
    pair: PairInput,
    *,
    rules: PairRules,
    label_map: Mapping[str, str] | None,
    taken: dict[tuple[str, ...], int],
) -> tuple[list[CheckedPair], list[RowError]]:
    """One pair checked against the task and the draft's pairs (by their variant items)."""
    try:
        return shared_task.kind.check_pairs(
            [pair],
            starter=starter_index(shared_task, [pair]),
            rules=rules,
            label_map=label_map,
            taken_variants=taken,
        )
    except ValidationError as error:
        return [], [RowError(line=0, reason=m) for m in error.messages]


@transaction.atomic
def pair_remove(*, pair: Pair, user: AbstractBaseUser) -> None:
    """Take a pair out of its team's draft. Submitted sets never change."""
    pair_set = pair.pair_set
    breaker_member_require(team=pair_set.team, user=user)
    if pair_set.status != PairSet.Status.DRAFT:
        raise ValidationError(
            "Only pairs of a draft can be removed: a submitted set never changes, so submit "
            "a new one instead."
        )
    pair.delete()


@transaction.atomic
def pair_set_draft_submit(*, pair_set: PairSet, user: AbstractBaseUser) -> PairSetSubmission:
    """Turn the team's draft into a submitted set: a version, counted against the quota."""
    team = pair_set.team
    breaker_member_require(team=team, user=user)
    now = timezone.now()
    task_services.phase_require_open(
        shared_task=team.shared_task, kind=Phase.Kind.BREAK, doing="submitting pairs", now=now
    )
    team_lock(team)
    pair_set.refresh_from_db()
    if pair_set.status != PairSet.Status.DRAFT:
        raise ValidationError("This pair set has already been submitted.")
    kind = team.shared_task.kind
    pairs = list(pair_set.pairs.order_by("row"))
    if not pairs:
        raise ValidationError("The draft has no pairs yet: add some before submitting it.")
    set_quota_require(team)
    length = settings.SYSTEM_MAX_SEQUENCE_LENGTH
    warnings = [
        RowError(line=pair.row, reason=warning)
        for pair in pairs
        for warning in kind.pair_warnings(*kind.pair_items(pair), max_sequence_length=length)
    ]
    submission = submission_describe(
        pair_set, pair_count=len(pairs), warnings=warnings, dry_run=False
    )
    pair_set.status = PairSet.Status.SUBMITTED
    pair_set.submitted_at = now
    pair_set.submitted_by = user
    pair_set.save(update_fields=["status", "submitted_at", "submitted_by"])
    return submission


@transaction.atomic
def pair_set_mark_final(*, pair_set: PairSet, user: AbstractBaseUser, is_final: bool) -> PairSet:
    """Choose (or stop choosing) which set is the team's entry, during the break phase."""
    team = pair_set.team
    breaker_member_require(team=team, user=user)
    task_services.phase_require_open(
        shared_task=team.shared_task, kind=Phase.Kind.BREAK, doing="choosing the entry"
    )
    if pair_set.status != PairSet.Status.SUBMITTED:
        raise ValidationError("Submit the draft before marking it final.")
    team_lock(team)
    if is_final:
        PairSet.objects.filter(team=team, is_final=True).exclude(pk=pair_set.pk).update(
            is_final=False
        )
    pair_set.is_final = is_final
    pair_set.save(update_fields=["is_final"])
    return pair_set
