"""Reads of pair sets, pairs and contests, and the one place that says who sees them.

Visibility:

- A pair set and its pairs: the team's members and the task's organizers; once the task's
  results are published, every submitted set is visible to whoever can see the task (a
  draft never is).
- During the contest phase, members of every team in the task (builders too) see the
  *entry* pairs of the other teams: texts and labels, with no team name and no rationale.
  Contesting a label means reading it; this is the least that allows it. A builder team
  sees them only once builders' pair predictions are final (the pair-prediction window
  has closed): a self-reported system must not predict pairs whose labels its team has read.
  Never a pair its viewer may still be asked to validate (``pairs_held_for_validation``):
  while validation is open, a validator's team reads no claimed label of a pair still
  waiting for votes, so contest and validation stay apart.
- A contest: the contesting team, the author team and the organizers.

Also the one place that says when self-reported systems predict the pair texts (the
*pair-prediction window*, ``pair_predictions_window``): from the end of the break phase,
for ``PAIR_PREDICTIONS_WINDOW_HOURS``, and never past the start of the results phase, when
the labels are published; and which texts they predict (``pair_texts``). The systems app
reads both; pairs imports nothing of systems.

The entry of a breaker team is the set it marked final, else its latest set submitted
before the break deadline (server clock); drafts are never entries.
"""

from __future__ import annotations

import csv
import io
import itertools
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, F, Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify

# The entries are read in their own module (label validation reads them too); re-exported.
from bibi.files.csv_out import restored
from bibi.files.refused import HEADER_RULE
from bibi.pairs.entries import entry_pair_sets as entry_pair_sets
from bibi.pairs.entries import entry_pairs as entry_pairs
from bibi.pairs.entries import pair_set_entry as pair_set_entry
from bibi.pairs.models import Contest, LabelValidation, Pair, PairSet
from bibi.pairs.validation.selectors import queue as validation_queue
from bibi.pairs.validation.selectors import states as validation_states
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Phase, SharedTask, Team

User = task_selectors.User
EFFECTIVE_PAIR_KEYS = validation_states.EFFECTIVE_PAIR_KEYS


def pair_items(*, shared_task: SharedTask) -> list[tuple[str, ...]]:
    """Every distinct item of every pair in the task's entries (originals and variants, as
    its type has them: a text, a sentence and its question, a premise and hypothesis),
    sorted: what self-reported systems predict, and what their builders download.

    Pairs excluded by an organizer are left out; pairs label validation may yet leave out
    or let in (invalid, disputed, label unverified) are not: votes come after the
    predictions, and an item predicted for nothing costs less than a system left out."""
    kind = shared_task.kind
    original, variant = kind.pair_fields("original"), kind.pair_fields("variant")
    rows = (
        entry_pairs(shared_task=shared_task)
        .filter(is_excluded=False)
        .values_list(*original, *variant)
    )
    size = len(original)
    return sorted({item for row in rows for item in (row[:size], row[size:])})


def pairs_effective(*, shared_task: SharedTask, validated: bool = True) -> list[dict[str, Any]]:
    """What scoring uses: the entry pairs of every breaker team, with decisions applied.

    One dict per scored pair, ordered by team then row, with the keys
    ``pair_id, pair_set_id, team_id, original_id`` (the starter example's database id),
    ``original_external_id, original_text, original_label, variant_text, variant_label``
    (the label scored: relabelled if an organizer, or a validators' majority, said so),
    ``tags`` (a list), and for span tasks ``question``, ``original_answers`` and
    ``variant_answers`` ('' and [] else). Label validation (``bibi.pairs.validation``) decides
    which pairs are left out; ``validated=False`` gives the task as if validation were off.
    """
    scored = validation_states.pairs_scored(shared_task=shared_task)
    return scored.validated if validated else scored.unvalidated


def team_of(*, user: User, shared_task: SharedTask) -> Team | None:
    membership = task_selectors.membership_get(user=user, shared_task=shared_task)
    return membership.team if membership else None


def can_view_pair_set(*, user: User, pair_set: PairSet) -> bool:
    shared_task = pair_set.shared_task
    if not task_selectors.can_view_shared_task(user=user, shared_task=shared_task):
        return False
    if task_selectors.is_team_member(user=user, team=pair_set.team):
        return True
    if task_selectors.is_organizer(user=user, shared_task=shared_task):
        return True
    return pair_set.status == PairSet.Status.SUBMITTED and shared_task.results_published


def pair_sets_left(*, team: Team) -> int:
    """How many more sets ``team`` may submit (``SharedTask.max_pair_sets_per_team``)."""
    submitted = PairSet.objects.filter(team=team, status=PairSet.Status.SUBMITTED).count()
    return max(team.shared_task.max_pair_sets_per_team - submitted, 0)


def refused_rows(*, pair_set: PairSet, limit: int) -> list[dict[str, str]]:
    """The first ``limit`` rows a partial upload refused, read back from its CSV (the file's
    header row, there to upload the file again, left out), each cell as it was refused."""
    reader = csv.DictReader(io.StringIO(pair_set.refused_csv))
    rows = (
        {name: restored(value or "") for name, value in row.items()}
        for row in reader
        if row.get("rule") != HEADER_RULE
    )
    return list(itertools.islice(rows, limit))


def team_pair_set(*, team: Team, pk: int) -> PairSet | None:
    """The submitted set ``pk`` of ``team``, or None (another team's, a draft, none)."""
    return PairSet.objects.filter(team=team, pk=pk, status=PairSet.Status.SUBMITTED).first()


def refused_rows_filename(*, pair_set: PairSet) -> str:
    """``pairs-refused-set-12.csv``: the download's name, after the file uploaded."""
    stem = slugify(pair_set.filename.rsplit(".", 1)[0])[:100] or "pairs"
    return f"{stem}-refused-set-{pair_set.id}.csv"


def can_view_refused_rows(*, user: User, pair_set: PairSet) -> bool:
    """The rows a partial upload refused are the team's and the organizers' only, even once
    results are published: they were never part of the set."""
    return task_selectors.is_team_member(
        user=user, team=pair_set.team
    ) or task_selectors.is_organizer(user=user, shared_task=pair_set.shared_task)


def pair_set_list(*, user: User, shared_task: SharedTask) -> QuerySet[PairSet]:
    """The sets ``user`` may see, newest first, each with ``pair_count``."""
    queryset = PairSet.objects.filter(shared_task=shared_task)
    if not task_selectors.can_view_shared_task(user=user, shared_task=shared_task):
        return queryset.none()
    if not task_selectors.is_organizer(user=user, shared_task=shared_task):
        visible = Q(pk__in=[])
        team = team_of(user=user, shared_task=shared_task)
        if team is not None:
            visible |= Q(team=team)
        if shared_task.results_published:
            visible |= Q(status=PairSet.Status.SUBMITTED)
        queryset = queryset.filter(visible)
    return (
        queryset.select_related("team", "submitted_by", "shared_task")
        .annotate(pair_count=Count("pairs"))
        .order_by(F("submitted_at").desc(nulls_first=True), "-id")
    )


def pair_set_draft(*, team: Team) -> PairSet | None:
    return PairSet.objects.filter(team=team, status=PairSet.Status.DRAFT).first()


@dataclass(frozen=True)
class UnsubmittedDraft:
    """A team's draft that holds pairs: they count for nothing until it is submitted, and a
    draft cannot be submitted once the break phase has ended."""

    pair_set_id: int
    pairs: int
    # The end of the running break phase; None once it has ended (the pairs never counted)
    # or before it has started.
    deadline: datetime | None
    break_ended: bool


def draft_unsubmitted(*, team: Team, now: datetime | None = None) -> UnsubmittedDraft | None:
    """The team's draft with its number of pairs, if it has any (two queries)."""
    draft = (
        PairSet.objects.filter(team=team, status=PairSet.Status.DRAFT)
        .annotate(pair_count=Count("pairs"))
        .filter(pair_count__gt=0)
        .values("id", "pair_count")
        .first()
    )
    if draft is None:
        return None
    now = now or timezone.now()
    phase = Phase.objects.filter(shared_task_id=team.shared_task_id, kind=Phase.Kind.BREAK).first()
    running = phase is not None and phase.is_open(now)
    return UnsubmittedDraft(
        pair_set_id=draft["id"],
        pairs=draft["pair_count"],
        deadline=phase.ends_at if running and phase else None,
        break_ended=phase is not None and phase.ends_at <= now,
    )


def drafts_to_remind(*, now: datetime, within: timedelta) -> QuerySet[PairSet]:
    """Drafts holding pairs whose break phase is running and ends within ``within``, and
    whose team has not been reminded since the deadline came that close (an extended
    deadline brings a new reminder when it nears again)."""
    # One filter() call: every condition on the phase must hold for the same phase row.
    return (
        PairSet.objects.filter(
            Q(draft_reminded_at__isnull=True)
            | Q(draft_reminded_at__lt=F("shared_task__phases__ends_at") - within),
            status=PairSet.Status.DRAFT,
            shared_task__phases__kind=Phase.Kind.BREAK,
            shared_task__phases__starts_at__lte=now,
            shared_task__phases__ends_at__gt=now,
            shared_task__phases__ends_at__lte=now + within,
        )
        .annotate(
            pair_count=Count("pairs", distinct=True), deadline=F("shared_task__phases__ends_at")
        )
        .filter(pair_count__gt=0)
        .select_related("team", "shared_task")
        .order_by("id")
    )


def pair_list(*, pair_set: PairSet) -> QuerySet[Pair]:
    return pair_set.pairs.select_related("original").order_by("row")


@dataclass(frozen=True)
class PairPredictionsWindow:
    opens_at: datetime
    closes_at: datetime

    def is_open(self, moment: datetime | None = None) -> bool:
        moment = moment or timezone.now()
        return self.opens_at <= moment < self.closes_at

    def has_closed(self, moment: datetime | None = None) -> bool:
        return (moment or timezone.now()) >= self.closes_at


def pair_predictions_window(*, shared_task: SharedTask) -> PairPredictionsWindow | None:
    """When self-reported pair predictions are taken; None while the task has no break phase."""
    phases = {phase.kind: phase for phase in shared_task.phases.all()}
    break_phase = phases.get(Phase.Kind.BREAK)
    if break_phase is None:
        return None
    closes_at = break_phase.ends_at + timedelta(hours=settings.PAIR_PREDICTIONS_WINDOW_HOURS)
    results = phases.get(Phase.Kind.RESULTS)
    if results is not None:
        closes_at = min(closes_at, results.starts_at)
    return PairPredictionsWindow(opens_at=break_phase.ends_at, closes_at=closes_at)


def contest_phase_is_open(*, shared_task: SharedTask) -> bool:
    phase = shared_task.phase_at(timezone.now())
    return phase is not None and phase.kind == Phase.Kind.CONTEST


def labels_withheld_until(*, team: Team, now: datetime | None = None) -> datetime | None:
    """When ``team`` may first see other teams' variant labels, if it may not yet.

    Breaker teams may whenever pairs are shown to them. A builder team waits until its pair
    predictions are final: the pair-prediction window has closed. (Without a break phase
    there are no entries, so nothing to withhold.)
    """
    if team.kind != Team.Kind.BUILDER:
        return None
    window = pair_predictions_window(shared_task=team.shared_task)
    if window is None or window.has_closed(now):
        return None
    return window.closes_at


def pairs_held_for_validation(*, user: User, shared_task: SharedTask) -> set[int]:
    """The other teams' entry pairs whose claimed label ``user`` may not read yet.

    While validation is open, a validator (a breaker team's member) may be handed any pair
    still waiting for votes (``validation_queue.pending_pair_ids``), and a vote must be
    blind: so none of those pairs is shown to them with its label, anywhere (contestable
    pairs, page and API, a pair's detail, the contest form), nor contested by them. The
    rule holds for every member of the team, voted or not, so that one member's reading is
    no other's answer. A pair comes back once its votes are in (or an organizer decides
    it), and all of them when validation closes (the results phase).
    """
    if validation_queue.validation_closed_reason(shared_task=shared_task) is not None:
        return set()
    if validation_queue.validator_role(user=user, shared_task=shared_task) is None:
        return set()
    team = team_of(user=user, shared_task=shared_task)
    pending = validation_queue.pending_pair_ids(
        shared_task=shared_task, exclude_team_id=team.id if team else None
    )
    # One vote per team and pair: once a member has voted on a pair, no member of the
    # team is handed it again, so its label may be read.
    voted = LabelValidation.objects.filter(
        pair_id__in=pending, team=team, status=LabelValidation.Status.DONE
    ).values_list("pair_id", flat=True)
    return pending - set(voted)


def contestable_pair_list(
    *, user: User, shared_task: SharedTask, held: set[int] | None = None
) -> QuerySet[Pair]:
    """During the contest phase: the entry pairs ``user``'s team may contest (not its own).

    None for a builder team whose labels are still withheld (``labels_withheld_until``);
    never a pair held for validation (``pairs_held_for_validation``; ``held``: that set,
    when the caller has read it already).
    """
    team = team_of(user=user, shared_task=shared_task)
    if team is None or not contest_phase_is_open(shared_task=shared_task):
        return Pair.objects.none()
    if labels_withheld_until(team=team) is not None:
        return Pair.objects.none()
    if held is None:
        held = pairs_held_for_validation(user=user, shared_task=shared_task)
    return (
        entry_pairs(shared_task=shared_task)
        .exclude(pair_set__team=team)
        .exclude(id__in=held)
        .select_related("original")
        .order_by("pair_set_id", "row")
    )


def can_contest_view(*, user: User, pair: Pair) -> bool:
    """Whether ``user`` sees ``pair`` at all: through its set, or as a contestable pair."""
    if can_view_pair_set(user=user, pair_set=pair.pair_set):
        return True
    return (
        contestable_pair_list(user=user, shared_task=pair.pair_set.shared_task)
        .filter(id=pair.id)
        .exists()
    )


def _contests_visible(*, user: User, shared_task: SharedTask) -> Q | None:
    """None: all of them (organizers)."""
    if task_selectors.is_organizer(user=user, shared_task=shared_task):
        return None
    team = team_of(user=user, shared_task=shared_task)
    if team is None:
        return Q(pk__in=[])
    return Q(team=team) | Q(pair__pair_set__team=team)


def contest_list(*, user: User, shared_task: SharedTask) -> QuerySet[Contest]:
    queryset = Contest.objects.filter(pair__pair_set__shared_task=shared_task)
    if not task_selectors.can_view_shared_task(user=user, shared_task=shared_task):
        return queryset.none()
    visible = _contests_visible(user=user, shared_task=shared_task)
    if visible is not None:
        queryset = queryset.filter(visible)
    return queryset.select_related(
        "pair__pair_set__team", "team", "created_by", "decided_by"
    ).order_by("-created_at", "-id")


def can_view_contest(*, user: User, contest: Contest) -> bool:
    shared_task = contest.pair.pair_set.shared_task
    return contest_list(user=user, shared_task=shared_task).filter(id=contest.id).exists()


def entry_pair_count(*, shared_task: SharedTask) -> int:
    """How many pairs scoring uses: the entries' pairs, less the excluded ones."""
    return entry_pairs(shared_task=shared_task).filter(is_excluded=False).count()


def team_pair_set_list(*, team: Team) -> QuerySet[PairSet]:
    """One team's own sets, its draft first, then newest first, each with ``pair_count``."""
    return (
        PairSet.objects.filter(team=team)
        .select_related("submitted_by")
        .annotate(pair_count=Count("pairs"))
        .order_by(F("submitted_at").desc(nulls_first=True), "-id")
    )


def contest_open_count(*, shared_task: SharedTask) -> int:
    """Contests waiting for the organizers' decision."""
    return Contest.objects.filter(
        pair__pair_set__shared_task=shared_task, status=Contest.Status.OPEN
    ).count()


def contested_pair_ids(*, team: Team) -> set[int]:
    """The pairs ``team`` has contested."""
    return set(Contest.objects.filter(team=team).values_list("pair_id", flat=True))
