"""Reads for builder systems, and who may see them: the team's members and the organizers.

Also the one place that says when self-reported systems predict the pair texts (the
*pair-prediction window*): from the end of the break phase, for
``PAIR_PREDICTIONS_WINDOW_HOURS``, and never past the start of the results phase, when the
labels are published. Until the window closes, builders' pair predictions are not final,
so no builder team sees a variant's label (``bibi.pairs.selectors``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from bibi.sharedtasks import selectors as sharedtask_selectors
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.systems.models import Prediction, System, SystemVersion


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
