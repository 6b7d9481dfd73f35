"""Label validation, the writes: the queue hands a validator a pair (``validation_next``),
the validator votes (``validation_submit``) or hands it back (``validation_skip``).

The queue finishes pairs quickly: of the pairs in scope still short of their votes, the one
with the fewest votes (given or handed out) first, ties broken by a fixed hash of the pair's
id (``selectors.queue.validation_candidates``), never a pair of the validator's own team,
never a pair they have voted on or skipped, never a pair another member of their team holds or
voted on. Handing out takes the task's row lock, so two validators asking at once are served
one after the other and a pair is never handed out more often than it needs; the database
holds one vote per validator and pair, and one per team and pair (``LabelValidation.team``:
the validator's breaker team; none for invited validators and organizers, each their own
team), so no team decides a rival's pair alone. A vote rechecks the team under the pair's
row lock. A pair handed out and not answered within ``VALIDATION_ASSIGNMENT_MINUTES`` goes
back to the queue; a validator hands back at most ``VALIDATION_SKIPS_MAX`` pairs (skipping
without a limit would let them walk the queue to a pair they chose).

Answering or handing back locks the assignment's row and acts only while it is still handed
out: of simultaneous answers to one pair, the first is kept and the others are refused.

What the votes decide is the pair's state (``selectors.states.pair_validation``, by
``scoring.agreement.pair_state``). When a vote makes a pair's votes *disputed*, a contest is
opened for the organizers (one per pair, ``Contest.Origin.VALIDATION``); their decision is
absolute. When a vote changes the outcome of a pair's votes and no pair in scope is left
waiting for votes, the task is scored again.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.labelmaps import LabelLookup
from bibi.pairs.models import Contest, LabelValidation, Pair
from bibi.pairs.services.contests import REASON_MAX_CHARS
from bibi.pairs.validation.selectors import queue, states
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask
from bibi.sharedtasks.services import audit_record
from scoring import agreement

Status = LabelValidation.Status


def _validator_require(*, user: AbstractBaseUser, shared_task: SharedTask) -> str:
    """The user's validator role; PermissionDenied without one, ValidationError when closed."""
    role = queue.validator_role(user=user, shared_task=shared_task)
    if role is None:
        raise PermissionDenied(
            "Only organizers, members of breaker teams and invited validators validate labels."
        )
    reason = queue.validation_closed_reason(shared_task=shared_task)
    if reason is not None:
        raise ValidationError(reason)
    return role


def _expired_release(shared_task: SharedTask) -> None:
    """Pairs handed out too long ago go back to the queue."""
    stale = timezone.now() - timedelta(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES)
    LabelValidation.objects.filter(
        pair__pair_set__shared_task=shared_task, status=Status.ASSIGNED, assigned_at__lt=stale
    ).delete()


@transaction.atomic
def validation_next(*, shared_task: SharedTask, user: AbstractBaseUser) -> LabelValidation | None:
    """The pair ``user`` labels next: the one handed to them and not yet answered, else the
    next one of the queue (see the module doc); None when the queue has nothing for them.

    Raises PermissionDenied for someone who is not a validator of the task, ValidationError
    when validation is closed or the validator has reached the task's quota.
    """
    role = _validator_require(user=user, shared_task=shared_task)
    # Serializes handing out for the task: counts read below stay true until commit.
    SharedTask.objects.select_for_update().filter(pk=shared_task.pk).first()
    _expired_release(shared_task)
    mine = LabelValidation.objects.filter(validator=user, pair__pair_set__shared_task=shared_task)
    current = mine.filter(status=Status.ASSIGNED).select_related("pair").first()
    if current is not None:
        return current
    quota = shared_task.validation_quota_per_validator
    done = mine.filter(status=Status.DONE).count()
    if quota and done >= quota:
        raise ValidationError(f"You have labelled {done} pairs: the quota of this shared task.")
    membership = task_selectors.membership_get(user=user, shared_task=shared_task)
    team_id = queue.breaker_team_id(user=user, shared_task=shared_task)
    seen = queue.pairs_seen(shared_task=shared_task, user=user, team_id=team_id)
    candidates = queue.validation_candidates(
        shared_task=shared_task, exclude_team_id=membership.team_id if membership else None
    )
    pair_id = next((pair_id for pair_id, _ in candidates if pair_id not in seen), None)
    if pair_id is None:
        return None
    try:
        with transaction.atomic():
            handed = LabelValidation.objects.create(
                pair_id=pair_id, validator=user, role=role, team_id=team_id
            )
    except IntegrityError as error:
        # A teammate's vote took the pair for the team a moment ago (one vote per team).
        raise ValidationError("That pair was just taken by your team: ask again.") from error
    return LabelValidation.objects.select_related("pair").get(pk=handed.pk)


def _assignment_get(*, validation_id: int, user: AbstractBaseUser) -> LabelValidation:
    """The validation handed to ``user``, its row locked until the transaction ends: two
    answers to one pair at once are served one after the other, and the second reads the
    first's answer."""
    found = (
        LabelValidation.objects.select_for_update(of=("self",))
        .select_related("pair__pair_set__shared_task")
        .filter(id=validation_id, validator=user)
        .first()
    )
    if found is None:
        raise LabelValidation.DoesNotExist("No such pair was handed to you.")
    return found


@dataclass(frozen=True)
class ValidationVote:
    """A submitted vote and what it did: the pair's outcome before and after it, and the
    contest it opened (a pair the votes left disputed), if any."""

    validation: LabelValidation
    before: agreement.Outcome
    after: agreement.Outcome
    contest: Contest | None


def _vote_clean(
    *, shared_task: SharedTask, label: str, unclear: bool, note: str
) -> tuple[str, str]:
    label, note = label.strip(), note.strip()
    if unclear and label:
        raise ValidationError({"label": "An unclear variant gets no label: leave it empty."})
    if not unclear:
        # Labels ignore case here as everywhere (bibi.labelmaps): "Positive" is "positive".
        known = LabelLookup.build(None, labels=shared_task.labels).resolve(label)
        if known is None:
            raise ValidationError(
                {"label": f"Give one of {', '.join(shared_task.labels)}, or mark it unclear."}
            )
        label = known
    if len(note) > REASON_MAX_CHARS:
        raise ValidationError({"note": f"At most {REASON_MAX_CHARS} characters, please."})
    if "\x00" in note:
        raise ValidationError({"note": "The text has a NUL character."})
    return label, note


@transaction.atomic
def validation_submit(
    *,
    validation_id: int,
    user: AbstractBaseUser,
    label: str,
    not_minimal: bool = False,
    not_fluent: bool = False,
    original_mislabelled: bool = False,
    unclear: bool = False,
    note: str = "",
) -> ValidationVote:
    """``user`` votes on the pair handed to them: the variant's ``label`` (one of the task's
    labels; empty when ``unclear``) and flags. A vote is final.

    Raises ``LabelValidation.DoesNotExist`` for a pair not handed to ``user`` (or handed
    back to the queue since), ValidationError for a bad vote or one already given.
    """
    found = _assignment_get(validation_id=validation_id, user=user)
    shared_task = found.pair.pair_set.shared_task
    _validator_require(user=user, shared_task=shared_task)
    if found.status != Status.ASSIGNED:
        raise ValidationError("You have already answered this pair; a vote is final.")
    label, note = _vote_clean(shared_task=shared_task, label=label, unclear=unclear, note=note)
    # The pair's row lock: votes on one pair are counted, and disputes opened, one at a time.
    # Before and after are what the pair's votes decide (pending while it is out of scope).
    pair = Pair.objects.select_for_update().get(pk=found.pair_id)
    team_id = found.pair.pair_set.team_id
    found.team_id = _team_recheck(found, shared_task=shared_task, author_team_id=team_id)
    before = states.pair_validation(pair=pair, team_id=team_id, shared_task=shared_task).outcome
    found.status = Status.DONE
    found.label = label
    found.not_minimal, found.not_fluent = not_minimal, not_fluent
    found.original_mislabelled, found.unclear = original_mislabelled, unclear
    found.note = note
    found.submitted_at = timezone.now()
    try:
        with transaction.atomic():
            found.save()
    except IntegrityError as error:
        raise ValidationError(TEAM_VOTED) from error
    now = states.pair_validation(pair=pair, team_id=team_id, shared_task=shared_task)
    after = now.outcome
    contest = _dispute_open(pair, now, shared_task) if after.status == agreement.DISPUTED else None
    changed = (before.status, before.label) != (after.status, after.label)
    if changed and queue.pending_count(shared_task=shared_task) == 0:
        evaluation_triggers.scoring_run_after_validation(shared_task=shared_task, actor=user)
    return ValidationVote(validation=found, before=before, after=after, contest=contest)


TEAM_VOTED = (
    "Another member of your team has labelled this pair or holds it: one vote per team and "
    "pair. Skip it to get another."
)


def _team_recheck(
    found: LabelValidation, *, shared_task: SharedTask, author_team_id: int
) -> int | None:
    """The validator's team now (they may have joined one since the pair was handed out):
    never the pair's own team, and no other member of it voted on or holds the pair. Run
    under the pair's row lock, so two members' votes are checked one after the other."""
    team_id = queue.breaker_team_id(user=found.validator, shared_task=shared_task)
    if team_id is not None and team_id == author_team_id:
        raise ValidationError("This pair is your own team's: validators never label those.")
    if (
        team_id is not None
        and LabelValidation.objects.filter(
            pair_id=found.pair_id,
            team_id=team_id,
            status__in=[Status.ASSIGNED, Status.DONE],
        )
        .exclude(pk=found.pk)
        .exists()
    ):
        raise ValidationError(TEAM_VOTED)
    return team_id


def _dispute_open(
    pair: Pair, disputed: states.PairValidation, shared_task: SharedTask
) -> Contest | None:
    """Open the organizers' contest of a disputed pair, once."""
    counts = Counter(vote.label or "unclear" for vote in disputed.votes)
    tally = ", ".join(f"{count} {label}" for label, count in sorted(counts.items()))
    reason = f"Label validation: the {disputed.outcome.votes} votes do not agree ({tally})."
    try:
        with transaction.atomic():
            contest = Contest.objects.create(
                pair=pair, origin=Contest.Origin.VALIDATION, team=None, reason=reason
            )
    except IntegrityError:
        return None
    audit_record(
        shared_task=shared_task,
        actor=None,
        action="validation.dispute",
        target=f"pair:{pair.id}",
        details={"contest": contest.id, "votes": dict(counts)},
    )
    return contest


@transaction.atomic
def validation_skip(*, validation_id: int, user: AbstractBaseUser) -> LabelValidation:
    """``user`` hands back the pair handed to them unanswered; it is never handed to them
    again, and goes back to the queue for others. Refused (ValidationError) once validation
    has closed and past ``VALIDATION_SKIPS_MAX`` pairs handed back in the task."""
    found = _assignment_get(validation_id=validation_id, user=user)
    shared_task = found.pair.pair_set.shared_task
    _validator_require(user=user, shared_task=shared_task)
    if found.status != Status.ASSIGNED:
        raise ValidationError("Only a pair you have not answered can be handed back.")
    skipped = LabelValidation.objects.filter(
        validator=user, pair__pair_set__shared_task=shared_task, status=Status.SKIPPED
    ).count()
    if skipped >= settings.VALIDATION_SKIPS_MAX:
        raise ValidationError(
            f"You have skipped {skipped} pairs, the most a validator may in a shared task: "
            "label this one, or mark it unclear."
        )
    found.status = Status.SKIPPED
    found.save(update_fields=["status"])
    return found
