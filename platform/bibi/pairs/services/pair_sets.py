"""Submitting a pair set whole: a file (``pair_set_upload``) or pairs already parsed
(``pair_set_submit``, e.g. a JSON list), checked, then stored whole or not at all; and the
rules every way of submitting shares (membership, the quota, the team's lock, what a
submission does to the team's entry)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from bibi.files import FileRejected, RowError, RowErrors, refused_rows_csv
from bibi.pairs import selectors
from bibi.pairs.models import Pair, PairSet
from bibi.pairs.services.appending import (
    added_to,
    append_base_require,
    base_variants,
    pair_copy,
)
from bibi.pairs.services.appending import pairs_said as _pairs
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Dataset, Example, Phase, SharedTask, Team
from bibi.tasktypes.rules import (
    KIND_SUMMARIES,
    CheckedPair,
    PairInput,
    PairRules,
    StarterExample,
    StarterIndex,
)
from bibi.texts import moment_text

PAIR_SET_FILE = "the pair-set file"
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
    ``warnings`` do not stop the set: by row, 0 for the set as a whole. A partial upload
    stores the pairs that pass: ``refused`` are the problems of the rows it left out (the
    first ``ERRORS_SHOWN``, summarised by kind), ``pair_set.refused_count`` how many rows
    and ``pair_set.refused_csv`` every one of them with its line.
    """

    pair_set: PairSet
    is_entry: bool
    replaced_entry: PairSet | None
    final_entry: PairSet | None
    warnings: tuple[RowError, ...]
    dry_run: bool = False
    refused: RowErrors | None = None


def breaker_member_require(*, team: Team, user: AbstractBaseUser) -> None:
    task_services.team_member_require(
        user=user, team=team, kind=Team.Kind.BREAKER, doing="submitting or changing pairs"
    )


def team_lock(team: Team) -> None:
    Team.objects.select_for_update().filter(pk=team.pk).first()


def set_quota_require(team: Team) -> None:
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
    breaker_member_require(team=team, user=user)
    task_services.phase_require_open(
        shared_task=team.shared_task, kind=Phase.Kind.BREAK, doing="submitting pairs", now=now
    )
    set_quota_require(team)


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


# The ``Example`` fields a starter example is checked with (``StarterExample``'s that exist).
_STARTER_FIELDS = [
    name
    for name in StarterExample.__dataclass_fields__
    if name in {field.name for field in Example._meta.concrete_fields}
]


def starter_index(shared_task: SharedTask, pairs: Sequence[PairInput] = ()) -> StarterIndex:
    """The task's starter set as its type's pair checks look originals up in it; when a few
    pairs all name their originals by id, only those."""
    examples = Example.objects.filter(
        dataset__shared_task=shared_task, dataset__split=Dataset.Split.STARTER
    ).order_by("position")
    if pairs and len(pairs) < _FEW_PAIRS and all(pair.original_id.strip() for pair in pairs):
        examples = examples.filter(external_id__in={pair.original_id.strip() for pair in pairs})
    rows = examples.values(*_STARTER_FIELDS)
    return shared_task.kind.starter_index(StarterExample(**row) for row in rows)


def pair_build(pair_set: PairSet, checked: CheckedPair) -> Pair:
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
        **checked.fields,
        label_unverified=checked.label_unverified,
    )


def submission_describe(
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
            f"{moment_text(current.submitted_at)})"
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


@dataclass(frozen=True)
class _Origin:
    """Where a set comes from, as its ``PairSet`` row and its refusal name it."""

    source: str
    filename: str
    file_format: str
    layout: str
    encoding: str
    text: str = ""
    digest: str = ""
    record_lines: Mapping[int, Sequence[int]] = dataclasses.field(default_factory=dict)
    # The set the pairs are added to (``pair_set_submit``'s ``append_to``), or None.
    base: PairSet | None = None

    def refused_csv(self, refused_rows: Sequence[RowError]) -> str:
        """The rows a partial upload left out, as the file to download ('' for none)."""
        if not refused_rows:
            return ""
        return refused_rows_csv(
            refused_rows, self.text, file_format=self.file_format, record_lines=self.record_lines
        )

    def rejected(self, errors: Sequence[RowError] | RowErrors) -> PairSetRejected:
        problems = errors if isinstance(errors, RowErrors) else RowErrors(errors)
        for kind, summary in KIND_SUMMARIES.items():
            problems.summarize(kind, summary)
        return PairSetRejected(
            problems,
            source=self.filename or "the JSON list",
            encoding=self.encoding,
            file_format=self.file_format,
        )


@dataclass
class _Checked:
    """The pairs that pass, the warnings that go with them, and, for a partial upload,
    the problems of the rows left out (every one in ``refused_rows``, for the file)."""

    pairs: list[CheckedPair]
    warnings: list[RowError]
    refused: RowErrors | None = None
    refused_rows: list[RowError] | None = None


def _pairs_check(
    shared_task: SharedTask,
    pairs: Sequence[PairInput],
    *,
    origin: _Origin,
    label_map: Mapping[str, str] | None,
    read_errors: Sequence[RowError] | RowErrors,
    read_warnings: Sequence[RowError],
    partial: bool = False,
) -> _Checked:
    """Every pair checked, with the warnings that go with the answer; else ``PairSetRejected``
    with every problem, the rows the file could not read included. With ``partial``, the
    pairs that pass are kept when there are any, and the problems of the others returned."""
    if len(pairs) + len(read_errors) == 0:
        raise origin.rejected([RowError(line=0, reason="the set has no pairs")])
    kind = shared_task.kind
    taken = _base_taken(shared_task, len(pairs), origin=origin)
    pair_set_size_require(
        shared_task=shared_task,
        count=len(pairs),
        source=origin.filename or "the JSON list",
        encoding=origin.encoding,
        file_format=origin.file_format,
    )
    rules = PairRules.for_shared_task(shared_task)
    try:
        if layout_problem := kind.pair_layout_problem(origin.layout):
            raise ValidationError(layout_problem)
        checked, errors = kind.check_pairs(
            pairs,
            starter=starter_index(shared_task, pairs),
            rules=rules,
            label_map=label_map,
            taken_variants=taken,
        )
    except ValidationError as error:
        raise origin.rejected([RowError(line=0, reason=m) for m in error.messages]) from None
    result = _Checked(
        pairs=checked,
        warnings=[
            *read_warnings,
            *(RowError(line=p.row, reason=warning) for p in checked for warning in p.warnings),
        ],
    )
    if errors or read_errors:
        # The rows the reader could not read are known only as far as it kept them.
        refused_rows = [*read_errors, *errors]
        problems = read_errors if isinstance(read_errors, RowErrors) else RowErrors(read_errors)
        problems.extend(errors)
        if not (partial and checked):
            raise origin.rejected(problems)
        result.refused = origin.rejected(problems).problems
        result.refused_rows = refused_rows
    return result


def _base_taken(
    shared_task: SharedTask, count: int, *, origin: _Origin
) -> dict[tuple[str, ...], int]:
    """The variants of the set ``count`` pairs are added to (none without one); refused when
    both together are more than the task allows in a set."""
    base = origin.base
    if base is None:
        return {}
    taken = base_variants(base)
    if count + len(taken) > shared_task.max_pairs_per_set:
        reason = (
            f"set {base.id} has {_pairs(len(taken))} and this file {count} more; this "
            f"shared task allows at most {shared_task.max_pairs_per_set} per set"
        )
        raise origin.rejected([RowError(line=0, reason=reason)])
    return taken


@transaction.atomic
def _pair_set_store(
    *,
    team: Team,
    user: AbstractBaseUser,
    checked: _Checked,
    origin: _Origin,
    now: datetime,
    dry_run: bool,
) -> PairSetSubmission:
    """Store the checked pairs as a new submitted set under the team's lock (the quota is
    checked again there), or, for a dry run, only say what storing them would do. One
    transaction: a partial upload stores its passing pairs whole or not at all."""
    team_lock(team)
    identical_upload_refuse(team=team, digest=origin.digest, source=origin.source)
    set_quota_require(team)
    refused_rows = checked.refused_rows or []
    pair_set = PairSet(
        shared_task=team.shared_task,
        team=team,
        status=PairSet.Status.SUBMITTED,
        source=origin.source,
        filename=origin.filename,
        file_format=origin.file_format,
        layout=origin.layout,
        encoding=origin.encoding,
        created_by=user,
        submitted_by=user,
        submitted_at=now,
        content_sha256=origin.digest,
        refused_count=len({error.line for error in refused_rows}),
        refused_csv=origin.refused_csv(refused_rows),
    )
    new_pairs = [pair_build(pair_set, c) for c in checked.pairs]
    base_pairs, warnings = [], list(checked.warnings)
    if origin.base is not None:
        base_pairs, warnings = added_to(origin.base, new_pairs, warnings)
    submission = submission_describe(
        pair_set,
        pair_count=len(base_pairs) + len(new_pairs),
        warnings=warnings,
        dry_run=dry_run,
    )
    if not dry_run:
        pair_set.save()
        copies = (pair_copy(pair, pair_set) for pair in base_pairs)
        Pair.objects.bulk_create(copies, batch_size=2000)
        for pair in new_pairs:
            pair.pair_set = pair_set
        Pair.objects.bulk_create(new_pairs, batch_size=2000)
    return dataclasses.replace(submission, refused=checked.refused)


def identical_upload_refuse(*, team: Team, digest: str, source: str) -> None:
    """Refuse an upload identical to one of the team's submitted sets (a file: same bytes,
    label map and mode; a JSON list: same pairs in the same order, ``pair_list_digest``): it
    would store the same pairs again and use up the quota. ``source``: the ``PairSet.Source``
    of the upload, which names it in the refusal."""
    if not digest:
        return
    what = "This file" if source == PairSet.Source.FILE else "This list of pairs"
    earlier = (
        PairSet.objects.filter(team=team, status=PairSet.Status.SUBMITTED, content_sha256=digest)
        .order_by("-submitted_at")
        .first()
    )
    if earlier is not None:
        raise ValidationError(
            f"{what} is identical to pair set {earlier.id}, submitted "
            f"{moment_text(earlier.submitted_at)}: nothing was stored, and it did not count "
            "against your team's quota.",
            code="identical_upload",
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
    partial: bool = False,
    text: str = "",
    digest: str = "",
    record_lines: Mapping[int, Sequence[int]] | None = None,
    append_to: PairSet | None = None,
) -> PairSetSubmission:
    """Check ``pairs`` and store them as a new submitted set of ``team``, or nothing.

    ``read_errors`` are rows of the same file that could not be read; they reject the set
    like failing pairs; ``read_warnings`` go with the answer. Raises PermissionDenied (not a
    member of this breaker team), ValidationError (outside the break phase, over the quota)
    or PairSetRejected, whose ``source`` is ``filename`` or, without one, "the JSON list".
    With ``dry_run`` everything is checked and answered the same, and nothing is stored.
    With ``partial`` (opt-in), a set with failing pairs stores the pairs that pass, when
    there are any, and lists the others (``PairSetSubmission.refused``); ``text`` is the
    file they come from, quoted in the set's ``refused_csv`` (with ``record_lines``, the other
    lines of a pair by its first, as a 2017 pair's two rows). ``digest`` identifies the
    upload (``bibi.uploads.upload_digest``): a set already submitted with it is refused.
    ``append_to``: a submitted set of the team whose pairs the new set holds too, ``pairs``
    added to them (a fix of the rows a partial upload refused): checked as one set (its size,
    no variant twice), stored as a new set; ``append_to`` itself never changes.
    """
    now = timezone.now()
    pair_set_submit_require(team=team, user=user, now=now)
    base = append_base_require(team=team, pair_set=append_to) if append_to is not None else None
    origin = _Origin(
        source, filename, file_format, layout, encoding, text, digest, record_lines or {}, base
    )
    checked = _pairs_check(
        team.shared_task,
        pairs,
        origin=origin,
        label_map=label_map,
        read_errors=read_errors,
        read_warnings=read_warnings,
        partial=partial,
    )
    return _pair_set_store(
        team=team, user=user, checked=checked, origin=origin, now=now, dry_run=dry_run
    )
