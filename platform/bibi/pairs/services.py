"""Writes for pair sets, pairs and contests.

Pair sets are submitted whole (``pair_set_upload`` for a file, ``pair_set_submit`` for
pairs already parsed, e.g. a JSON list) or built one pair at a time in the team's draft
(``pair_add``, ``pair_remove``, then ``pair_set_draft_submit``). Every pair is checked by
``checks``; a set with one failing pair stores nothing, and ``PairSetRejected`` lists every
problem by row. The break phase is read off the server clock once per call, and that moment
is the set's ``submitted_at``.

A submission answers with a ``PairSetSubmission``: whether the new set is the team's entry,
which entry it replaced or which set marked final stays the entry, and warnings that do not
stop the set (an edit systems may not see, a row repeated in a 2017 file). A *dry run* goes
through every check and answers the same, and stores nothing.

Submissions of one team are serialized by locking the team's row, so two uploads at once
cannot both slip under the quota or leave two drafts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePath

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files import File
from django.db import IntegrityError, transaction
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.files import FileFormatError, FileRejected, RowError, RowErrors
from bibi.pairs import selectors
from bibi.pairs.checks import (
    CheckedPair,
    PairInput,
    PairRules,
    StarterExample,
    StarterIndex,
    check_pairs,
    edit_out_of_sight,
)
from bibi.pairs.layouts import read_pair_file
from bibi.pairs.models import Contest, Pair, PairSet
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Dataset, Example, Phase, SharedTask, Team
from bibi.sharedtasks.services import audit_record
from bibi.uploads import upload_size_require

PAIR_SET_FILE = "the pair-set file"
REASON_MAX_CHARS = 2000
# A set may name the same few originals many times; below this many pairs, fetching just
# those examples beats reading the whole starter set.
_FEW_PAIRS = 100


class PairSetRejected(FileRejected):
    """Nothing was stored. ``errors`` lists every problem by row (0: the set as a whole);
    see ``bibi.files.FileRejected``."""


@dataclass(frozen=True)
class PairSetSubmission:
    """What a submission did or, for a dry run, would do.

    ``pair_set`` is the submitted set (for a dry run, an unsaved one with no id), with
    ``pair_count`` set. ``is_entry`` says whether it is the team's entry now; if so,
    ``replaced_entry`` is the entry it took over from, if any; if not, ``final_entry`` is the
    set the team marked final, which stays the entry. Both carry ``pair_count``.
    ``warnings`` do not stop the set: by row, 0 for the set as a whole.
    """

    pair_set: PairSet
    is_entry: bool
    replaced_entry: PairSet | None
    final_entry: PairSet | None
    warnings: tuple[RowError, ...]
    dry_run: bool = False


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


def _require_breaker_member(*, team: Team, user: AbstractBaseUser) -> None:
    task_services.team_member_require(
        user=user, team=team, kind=Team.Kind.BREAKER, doing="submitting or changing pairs"
    )


def _lock_team(team: Team) -> None:
    Team.objects.select_for_update().filter(pk=team.pk).first()


def _require_set_quota(team: Team) -> None:
    limit = team.shared_task.max_pair_sets_per_team
    submitted = PairSet.objects.filter(team=team, status=PairSet.Status.SUBMITTED).count()
    if submitted >= limit:
        raise ValidationError(
            f"Your team has submitted {submitted} pair sets, the most this shared task allows "
            f"({limit}): mark the one you want scored as final instead."
        )


def pair_set_submit_require(
    *, team: Team, user: AbstractBaseUser, now: datetime | None = None
) -> None:
    """Raise unless ``user`` may submit a pair set for ``team`` at ``now``: a member of this
    breaker team, in the break phase, under the quota. The API asks before it reads the body,
    so a refused set is never received."""
    _require_breaker_member(team=team, user=user)
    task_services.phase_require_open(
        shared_task=team.shared_task, kind=Phase.Kind.BREAK, doing="submitting pairs", now=now
    )
    _require_set_quota(team)


def pair_set_size_require(
    *,
    shared_task: SharedTask,
    count: int,
    source: str,
    encoding: str = "",
    file_format: str = "",
) -> None:
    """Raise ``PairSetRejected`` when a set of ``count`` pairs is more than the task allows."""
    if count > shared_task.max_pairs_per_set:
        reason = (
            f"the set has {count} pairs; this shared task allows at most "
            f"{shared_task.max_pairs_per_set} per set"
        )
        raise PairSetRejected(
            [RowError(line=0, reason=reason)],
            source=source,
            encoding=encoding,
            file_format=file_format,
        )


def _starter_index(shared_task: SharedTask, pairs: Sequence[PairInput]) -> StarterIndex:
    examples = Example.objects.filter(
        dataset__shared_task=shared_task, dataset__split=Dataset.Split.STARTER
    ).order_by("position")
    if len(pairs) < _FEW_PAIRS and all(pair.original_id.strip() for pair in pairs):
        examples = examples.filter(external_id__in={pair.original_id.strip() for pair in pairs})
    rows = examples.values_list("id", "external_id", "text", "label")
    return StarterIndex(StarterExample(*row) for row in rows)


def _pair(pair_set: PairSet, checked: CheckedPair) -> Pair:
    return Pair(
        pair_set=pair_set,
        row=checked.row,
        source_id=checked.source_id,
        original_id=checked.original.id,
        original_text=checked.original.text,
        original_label=checked.original.label,
        variant_text=checked.variant_text,
        variant_label=checked.variant_label,
        effective_label=checked.variant_label,
        rationale=checked.rationale,
        tags=list(checked.tags),
        edit_distance=checked.edit_distance,
    )


def _pairs(count: int) -> str:
    return f"{count} pair" if count == 1 else f"{count} pairs"


def _submission(
    pair_set: PairSet, *, pair_count: int, warnings: Sequence[RowError], dry_run: bool
) -> PairSetSubmission:
    """Say what submitting ``pair_set`` does to the team's entry. Call under the team lock,
    before the set is saved."""
    pair_set.pair_count = pair_count
    current = selectors.pair_set_entry(team=pair_set.team)
    notes = list(warnings)
    if current is not None:
        current.pair_count = current.pairs.count()
        described = (
            f"set {current.id} ({_pairs(current.pair_count)}, submitted "
            f"{task_services.moment_text(current.submitted_at)})"
        )
        if current.is_final:
            notes.append(
                RowError(
                    line=0,
                    reason=f"The entry stays {described}, which your team marked final: this "
                    f"set {'would be' if dry_run else 'is'} kept as a version but not scored "
                    "unless you mark it final.",
                )
            )
        else:
            notes.append(
                RowError(
                    line=0,
                    reason=f"This set ({_pairs(pair_count)}) "
                    f"{'would replace' if dry_run else 'replaces'} {described} as your team's "
                    "entry, the set that is scored. To keep the earlier set, mark it final.",
                )
            )
    is_entry = current is None or not current.is_final
    return PairSetSubmission(
        pair_set=pair_set,
        is_entry=is_entry,
        replaced_entry=current if is_entry else None,
        final_entry=None if is_entry else current,
        warnings=tuple(sorted(notes, key=lambda note: note.line)),
        dry_run=dry_run,
    )


def pair_set_submit(
    *,
    team: Team,
    user: AbstractBaseUser,
    pairs: Sequence[PairInput],
    label_map: Mapping[str, str] | None = None,
    source: str = PairSet.Source.API,
    filename: str = "",
    file_format: str = "",
    layout: str = "",
    encoding: str = "",
    read_errors: Sequence[RowError] | RowErrors = (),
    read_warnings: Sequence[RowError] = (),
    dry_run: bool = False,
) -> PairSetSubmission:
    """Check ``pairs`` and store them as a new submitted set of ``team``, or nothing.

    ``read_errors`` are rows of the same file that could not be read; they reject the set
    like failing pairs; ``read_warnings`` go with the answer. Raises PermissionDenied (not a
    member of this breaker team), ValidationError (outside the break phase, over the quota)
    or PairSetRejected, whose ``source`` is ``filename`` or, without one, "the JSON list".
    With ``dry_run`` everything is checked and answered the same, and nothing is stored.
    """
    shared_task = team.shared_task
    now = timezone.now()
    pair_set_submit_require(team=team, user=user, now=now)

    def rejected(errors: Sequence[RowError] | RowErrors) -> PairSetRejected:
        return PairSetRejected(
            errors,
            source=filename or "the JSON list",
            encoding=encoding,
            file_format=file_format,
        )

    if len(pairs) + len(read_errors) == 0:
        raise rejected([RowError(line=0, reason="the set has no pairs")])
    pair_set_size_require(
        shared_task=shared_task,
        count=len(pairs),
        source=filename or "the JSON list",
        encoding=encoding,
        file_format=file_format,
    )
    rules = PairRules.for_shared_task(shared_task)
    try:
        checked, errors = check_pairs(
            pairs, starter=_starter_index(shared_task, pairs), rules=rules, label_map=label_map
        )
    except ValidationError as error:
        raise rejected([RowError(line=0, reason=m) for m in error.messages]) from None
    if errors or read_errors:
        problems = read_errors if isinstance(read_errors, RowErrors) else RowErrors(read_errors)
        problems.extend(errors)
        raise rejected(problems)
    warnings = [
        *read_warnings,
        *(RowError(line=pair.row, reason=warning) for pair in checked for warning in pair.warnings),
    ]

    with transaction.atomic():
        _lock_team(team)
        _require_set_quota(team)
        pair_set = PairSet(
            shared_task=shared_task,
            team=team,
            status=PairSet.Status.SUBMITTED,
            source=source,
            filename=filename,
            file_format=file_format,
            layout=layout,
            encoding=encoding,
            created_by=user,
            submitted_by=user,
            submitted_at=now,
        )
        submission = _submission(
            pair_set, pair_count=len(checked), warnings=warnings, dry_run=dry_run
        )
        if not dry_run:
            pair_set.save()
            Pair.objects.bulk_create((_pair(pair_set, c) for c in checked), batch_size=2000)
    return submission


def pair_set_upload(
    *,
    team: Team,
    user: AbstractBaseUser,
    file: File,
    file_format: str | None = None,
    label_map: Mapping[str, str] | None = None,
    dry_run: bool = False,
) -> PairSetSubmission:
    """Read a pair-set file (see ``layouts``) and submit it with ``pair_set_submit``.

    ``file`` is any Django ``File`` (an upload, a ``ContentFile`` with a name). A file that
    cannot be read at all is rejected like a set with failing pairs; one over
    ``PAIR_SET_UPLOAD_MAX_BYTES`` raises ``bibi.uploads.UploadTooLarge`` unread.
    """
    pair_set_submit_require(team=team, user=user)
    upload_size_require(file.size, limit=settings.PAIR_SET_UPLOAD_MAX_BYTES, what=PAIR_SET_FILE)
    filename = PurePath((file.name or "").replace("\\", "/")).name[:255]
    file.seek(0)
    max_pairs = team.shared_task.max_pairs_per_set
    try:
        pair_file = read_pair_file(
            file.read(), filename=filename, file_format=file_format, max_pairs=max_pairs
        )
    except FileFormatError as error:
        raise PairSetRejected.from_format_error(error, source=filename or "the file") from None
    pair_set_size_require(
        shared_task=team.shared_task,
        count=pair_file.pair_count,
        source=filename or "the file",
        encoding=pair_file.encoding,
        file_format=pair_file.file_format,
    )
    return pair_set_submit(
        team=team,
        user=user,
        pairs=pair_file.pairs,
        label_map=label_map,
        source=PairSet.Source.FILE,
        filename=filename,
        file_format=pair_file.file_format,
        layout=pair_file.layout,
        encoding=pair_file.encoding,
        read_errors=pair_file.errors,
        read_warnings=pair_file.warnings,
        dry_run=dry_run,
    )


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
    _require_breaker_member(team=team, user=user)
    task_services.phase_require_open(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing="adding pairs"
    )
    rules = PairRules.for_shared_task(shared_task)
    _lock_team(team)
    draft = selectors.pair_set_draft(team=team)
    if draft is None:
        draft = PairSet.objects.create(
            shared_task=shared_task,
            team=team,
            status=PairSet.Status.DRAFT,
            source=PairSet.Source.FORM,
            created_by=user,
        )
    taken = dict(draft.pairs.values_list("variant_text", "row"))
    if len(taken) >= shared_task.max_pairs_per_set:
        raise ValidationError(
            f"The draft already has {len(taken)} pairs, the most this shared task allows in "
            "one set: submit it, and start another."
        )
    pair = dataclasses.replace(pair, row=max(taken.values(), default=0) + 1)
    try:
        checked, errors = check_pairs(
            [pair],
            starter=_starter_index(shared_task, [pair]),
            rules=rules,
            label_map=label_map,
            taken_variants=taken,
        )
    except ValidationError as error:
        errors = [RowError(line=0, reason=m) for m in error.messages]
    if errors:
        raise PairSetRejected(errors, source="the pair")
    stored = _pair(draft, checked[0])
    stored.save()
    stored.warnings = [RowError(line=stored.row, reason=w) for w in checked[0].warnings]
    return stored


@transaction.atomic
def pair_remove(*, pair: Pair, user: AbstractBaseUser) -> None:
    """Take a pair out of its team's draft. Submitted sets never change."""
    pair_set = pair.pair_set
    _require_breaker_member(team=pair_set.team, user=user)
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
    _require_breaker_member(team=team, user=user)
    now = timezone.now()
    task_services.phase_require_open(
        shared_task=team.shared_task, kind=Phase.Kind.BREAK, doing="submitting pairs", now=now
    )
    _lock_team(team)
    pair_set.refresh_from_db()
    if pair_set.status != PairSet.Status.DRAFT:
        raise ValidationError("This pair set has already been submitted.")
    texts = list(pair_set.pairs.values_list("row", "original_text", "variant_text"))
    if not texts:
        raise ValidationError("The draft has no pairs yet: add some before submitting it.")
    _require_set_quota(team)
    length = settings.SYSTEM_MAX_SEQUENCE_LENGTH
    warnings = [
        RowError(line=row, reason=warning)
        for row, original, variant in texts
        if (warning := edit_out_of_sight(original, variant, max_sequence_length=length))
    ]
    submission = _submission(pair_set, pair_count=len(texts), warnings=warnings, dry_run=False)
    pair_set.status = PairSet.Status.SUBMITTED
    pair_set.submitted_at = now
    pair_set.submitted_by = user
    pair_set.save(update_fields=["status", "submitted_at", "submitted_by"])
    return submission


@transaction.atomic
def pair_set_mark_final(*, pair_set: PairSet, user: AbstractBaseUser, is_final: bool) -> PairSet:
    """Choose (or stop choosing) which set is the team's entry, during the break phase."""
    team = pair_set.team
    _require_breaker_member(team=team, user=user)
    task_services.phase_require_open(
        shared_task=team.shared_task, kind=Phase.Kind.BREAK, doing="choosing the entry"
    )
    if pair_set.status != PairSet.Status.SUBMITTED:
        raise ValidationError("Submit the draft before marking it final.")
    _lock_team(team)
    if is_final:
        PairSet.objects.filter(team=team, is_final=True).exclude(pk=pair_set.pk).update(
            is_final=False
        )
    pair_set.is_final = is_final
    pair_set.save(update_fields=["is_final"])
    return pair_set


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
            f"are final, at {task_services.moment_text(withheld)} (server time)."
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
    new_label = new_label.strip()
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

    before = {"status": contest.status, **_pair_state(pair)}
    superseded = None
    if pair.decision_id is not None and pair.decision_id != contest.id:
        superseded = Contest.objects.get(pk=pair.decision_id)
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
