"""Reads for builder systems, and who may see them: the team's members and the organizers.

(When self-reported systems predict the pair texts, the pair-prediction window, is a read of
the pairs app: ``bibi.pairs.selectors.pair_predictions_window``.)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

import scoring
from bibi.sharedtasks import selectors as sharedtask_selectors
from bibi.sharedtasks.models import Dataset, SharedTask
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.systems.span_answers import SpanAnswer, span_scores
from bibi.tasktypes.items import item_key


def can_view_system(*, user, system: System) -> bool:
    return sharedtask_selectors.can_view_team_private(user=user, team=system.team)


def system_list(*, user, shared_task: SharedTask) -> QuerySet[System]:
    """Every system for the organizers; the caller's own team's systems for anyone else.

    Versions come prefetched (see ``versions_of``): a list costs the same queries whatever
    its length.
    """
    systems = (
        System.objects.filter(shared_task=shared_task)
        .select_related("team", "active_version")
        .prefetch_related("versions")
    )
    if sharedtask_selectors.is_organizer(user=user, shared_task=shared_task):
        return systems.order_by("team_id", "id")
    if not user.is_authenticated:
        return systems.none()
    return systems.filter(team__memberships__user=user).order_by("id")


def versions_of(*, system: System) -> list[SystemVersion]:
    """The system's versions, newest first, from its prefetched versions if it has them."""
    return sorted(system.versions.all(), key=lambda version: -version.number)


def starter_fisher(*, version: SystemVersion) -> QuerySet[Prediction]:
    """The starter originals with this version's λmax and hints, most fragile first."""
    return (
        version.predictions.filter(source=Prediction.Source.STARTER)
        .select_related("example")
        .order_by("-lambda_max", "id")
    )


def system_count_ready(*, shared_task: SharedTask) -> int:
    """Systems with an active (ready) version: the ones that take part."""
    return System.objects.filter(shared_task=shared_task, active_version__isnull=False).count()


def system_get(*, user, shared_task: SharedTask, system_id: int) -> System | None:
    """The system, if ``user`` may see it (its team's members and the organizers)."""
    system = (
        System.objects.select_related("team", "shared_task", "active_version")
        .filter(shared_task=shared_task, id=system_id)
        .first()
    )
    if system is None or not can_view_system(user=user, system=system):
        return None
    return system


def version_status_counts(*, shared_task: SharedTask) -> dict[str, int]:
    """How many versions of the task's systems are in each status, every status named."""
    counts = dict.fromkeys(SystemVersion.Status.values, 0)
    rows = (
        SystemVersion.objects.filter(system__shared_task=shared_task)
        .values("status")
        .annotate(count=Count("id"))
        .order_by()
    )
    counts.update({row["status"]: row["count"] for row in rows})
    return counts


def versions_stuck(*, now: Any = None) -> dict[str, int]:
    """Hosted versions past every time-out that the worker and housekeeping apply (``/healthz``).

    Queued longer than a whole validation may take plus a re-send; running past the hard time
    limit, or silent, for longer than housekeeping needs to notice.
    """
    now = now or timezone.now()
    Status = SystemVersion.Status
    grace = timedelta(
        seconds=settings.SYSTEM_WORKER_LOST_AFTER + 2 * settings.HOUSEKEEPING_INTERVAL
    )
    limit = timedelta(seconds=settings.SYSTEM_VALIDATION_TIME_LIMIT)
    resend = timedelta(seconds=settings.SYSTEM_QUEUE_RESEND_AFTER)
    queued = SystemVersion.objects.filter(
        status=Status.QUEUED, queued_at__lt=now - limit - resend
    ).count()
    running = (
        SystemVersion.objects.filter(status=Status.RUNNING)
        .annotate(last_sign=Coalesce("heartbeat_at", "started_at"))
        .filter(Q(started_at__lt=now - limit - grace) | Q(last_sign__lt=now - grace))
        .count()
    )
    return {"queued": queued, "running": running}


# --- The blind dev set, and a version's scores on it (validation, self-reported predictions)


def uploads_left(*, system: System) -> int:
    """How many more uploads count against ``system``'s quota before it is used up."""
    used = sum(1 for version in system.versions.all() if version.counts_against_quota)
    return max(system.shared_task.max_uploads_per_system - used, 0)


def dev_scores(labels: list[str], gold: list[str], predicted: list[str]) -> tuple[float, float]:
    """A version's blind-dev accuracy and macro-F1: ``scoring.label_scores``, as stored."""
    scores = scoring.label_scores(labels, gold, predicted)
    return scores.accuracy, scores.macro_f1


@dataclass(frozen=True)
class SpanDevFigures:
    """A span version's blind-dev figures and the rule they were computed under."""

    accuracy: float | None
    token_f1: float | None
    count: int
    answer_mode: str
    answer_threshold: float

    def set_on(self, version: SystemVersion) -> None:
        """Put the figures on ``version`` (not saved)."""
        version.dev_accuracy, version.dev_token_f1 = self.accuracy, self.token_f1
        version.dev_count = self.count
        version.dev_answer_mode = self.answer_mode
        version.dev_answer_threshold = self.answer_threshold


SPAN_DEV_RULE = (
    "each distinct (sentence, question) of the blind dev set counts once, right when the "
    "answer is right against any gold answer of the dev examples that ask it"
)


def span_dev_scores(*, shared_task: SharedTask, cells: list[Prediction]) -> SpanDevFigures:
    """A span version's blind-dev figures from its cells: answer accuracy under the task's
    answer mode, mean token F1, the number of cells scored, and that mode and threshold.

    One rule on every path (hosted validation, self-reported uploads, the chunk recount;
    ``SPAN_DEV_RULE``): the blind dev set may ask one question of one sentence under two ids
    (two predicates of a verb, with gold answers that may differ); such examples are one cell,
    scored once against the union of their gold answers. ``cells`` may hold one row per
    example (a hosted run) or one per key (stored cells): rows of one key count once (the
    first). A cell whose examples have no gold answer is not scored.
    """
    gold: dict[str, list[dict]] = {}
    for example in dataset_examples(shared_task, Dataset.Split.BLIND_DEV):
        answers = gold.setdefault(item_key((example.text, example.question)), [])
        for answer in example.answers or []:
            if answer not in answers:
                answers.append(answer)
    distinct: dict[str, Prediction] = {}
    for cell in cells:
        if gold.get(cell.text_sha256):
            distinct.setdefault(cell.text_sha256, cell)
    mode, threshold = shared_task.answer_mode, shared_task.answer_f1_threshold
    if not distinct:
        return SpanDevFigures(None, None, 0, mode, threshold)
    scores = span_scores(
        shared_task=shared_task,
        predictions=[
            (cell.system_version_id, key, SpanAnswer(*_answer_of(cell)))
            for key, cell in distinct.items()
        ],
        gold={key: gold[key] for key in distinct},
    )
    return SpanDevFigures(
        float(scores["correct"].mean()),
        float(scores["token_f1"].mean()),
        len(distinct),
        mode,
        threshold,
    )


def _answer_of(cell: Prediction) -> tuple[str, int | None, int | None]:
    return cell.answer_text, cell.answer_start, cell.answer_end


def dataset_examples(shared_task: SharedTask, split: str) -> list:
    dataset = shared_task.datasets.filter(split=split).first()
    return list(dataset.examples.order_by("position")) if dataset else []
