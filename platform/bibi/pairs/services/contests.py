"""Contests: a team contests the label of another team's entry pair (``contest_create``), an
organizer decides (``contest_adjudicate``), and the pair's effective state follows the
contest decided last."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.labelmaps import LabelLookup
from bibi.pairs import selectors
from bibi.pairs.models import Contest, Pair
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.sharedtasks.services import audit_record
from bibi.texts import moment_text

REASON_MAX_CHARS = 2000


@dataclass(frozen=True)
class Adjudication:
    """An organizer's decision and what it did to the pair.

    ``effective_changed``: the pair's effective label or exclusion changed, so scores that
    read it are out of date. ``superseded``: the contest whose decision this one replaced as
    the pair's state, if another.
    """

    contest: Contest
    effective_changed: bool
    superseded: Contest | None


def _clean_free_text(text: str, *, field: str, what: str, limit: int) -> str:
    text = text.strip()
    if not text:
        raise ValidationError({field: what})
    if len(text) > limit:
        raise ValidationError({field: f"At most {limit} characters, please."})
    if "\x00" in text:
        raise ValidationError({field: "The text has a NUL character."})
    return text


@transaction.atomic
def contest_create(*, pair: Pair, user: AbstractBaseUser, reason: str) -> Contest:
    """A member of another team than the author contests the label of an entry pair."""
    pair_set = pair.pair_set
    shared_task = pair_set.shared_task
    if task_selectors.is_organizer(user=user, shared_task=shared_task):
        raise PermissionDenied("Organizers adjudicate contests; teams file them.")
    team = selectors.team_of(user=user, shared_task=shared_task)
    if team is None:
        raise PermissionDenied("Only members of a team in this shared task may contest a label.")
    if team.id == pair_set.team_id:
        raise PermissionDenied("A team cannot contest its own pairs.")
    task_services.phase_require_open(
        shared_task=shared_task, kind=Phase.Kind.CONTEST, doing="contesting a label"
    )
    withheld = selectors.labels_withheld_until(team=team)
    if withheld is not None:
        raise ValidationError(
            "Builder teams see and contest the variants' labels once their pair predictions "
            f"are final, at {moment_text(withheld)} (server time)."
        )
    if pair.id in selectors.pairs_held_for_validation(user=user, shared_task=shared_task):
        raise ValidationError(
            "This pair waits for validators' votes, and your team may be asked to label it "
            "blind: it can be contested once its votes are in, or label validation closes."
        )
    entry = selectors.pair_set_entry(team=pair_set.team)
    if entry is None or entry.id != pair_set.id:
        raise ValidationError(
            "Only the pairs of a team's entry are scored, so only they can be contested."
        )
    reason = _clean_free_text(
        reason, field="reason", what="Say why the label is wrong.", limit=REASON_MAX_CHARS
    )
    if Contest.objects.filter(pair=pair, team=team).exists():
        raise ValidationError("Your team has already contested this pair.")
    try:
        with transaction.atomic():
            return Contest.objects.create(pair=pair, team=team, created_by=user, reason=reason)
    except IntegrityError:
        raise ValidationError("Your team has already contested this pair.") from None


_OUTCOME = {
    Contest.Decision.KEEP: Contest.Status.KEPT,
    Contest.Decision.RELABEL: Contest.Status.RELABELLED,
    Contest.Decision.EXCLUDE: Contest.Status.EXCLUDED,
}


def _pair_state(pair: Pair) -> dict[str, object]:
    return {
        "effective_label": pair.effective_label,
        "is_excluded": pair.is_excluded,
        "decision": pair.decision_id,
    }


def _decision_check(
    *,
    shared_task: SharedTask,
    actor: AbstractBaseUser,
    pair: Pair,
    decision: str,
    note: str,
    new_label: str,
) -> str:
    """Raise unless ``actor`` may make this decision on ``pair``; returns the cleaned note."""
    if not task_selectors.is_organizer(user=actor, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task adjudicate contests.")
    if decision not in _OUTCOME:
        raise ValidationError(
            {"decision": f"'{decision}' is not a decision: use keep, relabel or exclude."}
        )
    note = _clean_free_text(
        note,
        field="note",
        what="Explain the decision: the teams concerned read it.",
        limit=REASON_MAX_CHARS,
    )
    if decision == Contest.Decision.RELABEL:
        if new_label not in shared_task.labels:
            raise ValidationError(
                {"new_label": f"Relabel to one of {', '.join(shared_task.labels)}."}
            )
        if new_label == pair.variant_label:
            raise ValidationError(
                {"new_label": "That is the label the team submitted: decide 'keep' instead."}
            )
    elif new_label:
        raise ValidationError({"new_label": "A new label goes with the decision 'relabel' only."})
    return note


def _superseded_by(contest: Contest, pair: Pair) -> Contest | None:
    """The other contest whose decision is the pair's state now, if any: this one replaces it."""
    if pair.decision_id is not None and pair.decision_id != contest.id:
        return Contest.objects.get(pk=pair.decision_id)
    return None


def _decision_write(
    *,
    contest: Contest,
    pair: Pair,
    actor: AbstractBaseUser,
    decision: str,
    note: str,
    new_label: str,
) -> None:
    """Set the pair's effective state to this decision, and the contest's outcome."""
    pair.is_excluded = decision == Contest.Decision.EXCLUDE
    pair.effective_label = new_label if decision == Contest.Decision.RELABEL else pair.variant_label
    pair.decision = contest
    pair.save(update_fields=["is_excluded", "effective_label", "decision"])

    contest.pair = pair
    contest.status = _OUTCOME[decision]
    contest.new_label = new_label
    contest.note = note
    contest.decided_by = actor
    contest.decided_at = timezone.now()
    contest.save(update_fields=["status", "new_label", "note", "decided_by", "decided_at"])


@transaction.atomic
def contest_adjudicate(
    *,
    contest: Contest,
    actor: AbstractBaseUser,
    decision: str,
    note: str,
    new_label: str = "",
) -> Adjudication:
    """An organizer decides a contest: keep, relabel (to ``new_label``) or exclude the pair.

    A decision is absolute and may be revised: keep restores the submitted label, relabel
    sets another, exclude takes the pair out of scoring. The pair's effective state is set
    here and nowhere else; it is the state of the contest decided last (``Pair.decision``),
    and any other decided contest of the pair is superseded. Every decision is audited with
    the pair's state and the contest's status before and after.
    """
    pair = Pair.objects.select_for_update().select_related("pair_set").get(pk=contest.pair_id)
    shared_task = pair.pair_set.shared_task
    # Labels ignore case here as everywhere (bibi.labelmaps): "Positive" is "positive".
    labels = LabelLookup.build(None, labels=shared_task.labels)
    new_label = labels.resolve(new_label) or new_label.strip()
    note = _decision_check(
        shared_task=shared_task,
        actor=actor,
        pair=pair,
        decision=decision,
        note=note,
        new_label=new_label,
    )
    before = {"status": contest.status, **_pair_state(pair)}
    superseded = _superseded_by(contest, pair)
    _decision_write(
        contest=contest, pair=pair, actor=actor, decision=decision, note=note, new_label=new_label
    )
    after = {"status": contest.status, **_pair_state(pair)}
    effective_changed = (before["effective_label"], before["is_excluded"]) != (
        after["effective_label"],
        after["is_excluded"],
    )
    audit_record(
        shared_task=shared_task,
        actor=actor,
        action="contest.adjudicate",
        target=f"pair:{pair.id}",
        details={
            "contest": contest.id,
            "decision": decision,
            "new_label": new_label,
            "note": note,
            "from": before,
            "to": after,
            "superseded_contest": superseded.id if superseded else None,
            "effective_changed": effective_changed,
            "results_published": shared_task.results_published,
        },
    )
    evaluation_triggers.scoring_run_after_decision(
        shared_task=shared_task, actor=actor, changed=effective_changed
    )
    return Adjudication(contest=contest, effective_changed=effective_changed, superseded=superseded)
