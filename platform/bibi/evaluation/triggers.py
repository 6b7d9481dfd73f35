"""The one entry other apps call to ask evaluation for work: cells for new examples, a run
after a decision or a newly ready version; and what ending label validation would do to the
scores (``validation_end_warning``), which the phase moves ask before the results phase
starts.

Apps below evaluation (sharedtasks, systems, pairs) import this module and nothing else of
evaluation; the work starts inside the caller's transaction and its tasks are sent once that
commits.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from bibi.evaluation.chunks import chunks_create, dev_scores_stale_update, shared_task_lock
from bibi.evaluation.matrix import dataset_missing
from bibi.evaluation.models import ScoringRun
from bibi.evaluation.services import scoring_run_request
from bibi.pairs.validation import pending_pairs, validation_closed_reason
from bibi.sharedtasks.models import Dataset, Example, Phase, SharedTask
from bibi.systems.models import System, SystemVersion

Trigger = ScoringRun.Trigger


def validation_end_warning(*, shared_task: SharedTask, doing: str, **_: object) -> str | None:
    """What starting the results phase now would do, None when nothing: it ends label
    validation for good, and the pairs still waiting for votes are then scored with the
    labels their teams claimed (the task's ``validation_pending`` 'claimed') or left out
    ('left_out'). ``doing``: what the organizer is about to do, for the message. Also the
    receiver of ``sharedtasks.signals.results_phase_warning`` (``**_``: the signal's arguments).

    ``sharedtasks.services.phase_close_now`` refuses, without ``confirm``, with this
    message; the phases page asks for that confirmation.
    """
    if validation_closed_reason(shared_task=shared_task) is not None:
        return None
    by_team: dict[int, int] = {}
    for team_id in pending_pairs(shared_task=shared_task).values():
        by_team[team_id] = by_team.get(team_id, 0) + 1
    pending = sum(by_team.values())
    if not pending:
        return None
    names = dict(shared_task.teams.filter(id__in=by_team).values_list("id", "name"))
    teams = ", ".join(f"{names.get(team, team)} {count}" for team, count in by_team.items())
    treated = (
        "left out of the scores"
        if shared_task.validation_pending == SharedTask.ValidationPending.LEFT_OUT
        else "scored with the labels their teams claimed, which no validator has checked"
    )
    return (
        f"{doing.capitalize()} starts the results phase, which ends label validation for "
        f"good: {pending} pair{'s' * (pending != 1)} {'are' if pending != 1 else 'is'} still "
        f"waiting for votes ({teams}) and would be {treated}. Confirm to do it anyway."
    )


def _break_phase_over(shared_task: SharedTask, now: datetime | None = None) -> bool:
    phase = shared_task.phases.filter(kind=Phase.Kind.BREAK).first()
    return phase is not None and phase.ends_at <= (now or timezone.now())


def scoring_run_after_decision(
    *, shared_task: SharedTask, actor: AbstractBaseUser, changed: bool
) -> None:
    """After an adjudication that ``changed`` a pair's effective label or exclusion: score
    again.

    Called inside the adjudication's transaction; the run is sent once it commits.
    """
    if changed and _break_phase_over(shared_task):
        scoring_run_request(shared_task=shared_task, trigger=Trigger.ADJUDICATION, actor=actor)


def scoring_run_after_validation(*, shared_task: SharedTask, actor: AbstractBaseUser) -> None:
    """Label validation decided the last pair still waiting for votes (or changed the outcome
    of a pair once none waited): score again, with the validated labels. The cells hold
    predictions per text, never labels, so this run sends nothing to the ``gpu`` queue when
    every text's cell is known.

    Called inside the vote's transaction; the run is sent once it commits.
    """
    if _break_phase_over(shared_task):
        scoring_run_request(shared_task=shared_task, trigger=Trigger.VALIDATION, actor=actor)


def scoring_run_after_version(*, version: SystemVersion) -> None:
    """A version that becomes ready, is made active or brings its pair predictions after the
    break phase changes the leaderboard: score again."""
    shared_task = version.system.shared_task
    if version.status == SystemVersion.Status.READY and _break_phase_over(shared_task):
        scoring_run_request(shared_task=shared_task, trigger=Trigger.VERSION_READY)


def dataset_cells_request(*, dataset: Dataset, examples: Sequence[Example]) -> int:
    """New starter or blind-dev examples: compute every ready hosted version's cells for them.

    Called inside the import's transaction; the chunks are sent once it commits. Returns
    how many cells will be computed (0 for a training set, or with no ready hosted version).
    """
    if dataset.split not in (Dataset.Split.STARTER, Dataset.Split.BLIND_DEV) or not examples:
        return 0
    versions = SystemVersion.objects.filter(
        system__shared_task_id=dataset.shared_task_id,
        system__kind=System.Kind.HOSTED,
        status=SystemVersion.Status.READY,
    ).order_by("id")
    shared_task = shared_task_lock(dataset.shared_task)
    kind = shared_task.kind
    missing = dataset_missing(
        versions=versions,
        dataset=dataset,
        examples=[(example.id, kind.item_key(kind.item(example))) for example in examples],
    )
    chunks = chunks_create(
        shared_task=shared_task, missing=missing, source=dataset.split, run=None, send=True
    )
    return sum(chunk.size for chunk in chunks)


def dev_scores_after_answer_rule(*, shared_task: SharedTask, **_: object) -> int:
    """The task's answer rule (``answer_mode``, ``answer_f1_threshold``) changed: every version's
    dev figures again, from its stored blind-dev cells (no model runs), so that dev weights and
    the pages never mix figures of two rules (``chunks.dev_scores_stale_update``). Returns how
    many versions were scored again.

    Called inside the settings change's transaction, as the receiver of
    ``sharedtasks.signals.answer_rule_changed`` (``**_``: the signal's own arguments).
    """
    return dev_scores_stale_update(shared_task=shared_task)
