"""Reads for builder systems, and who may see them: the team's members and the organizers."""

from __future__ import annotations

from django.db.models import QuerySet

from bibi.sharedtasks import selectors as sharedtask_selectors
from bibi.sharedtasks.models import SharedTask
from bibi.systems.models import Prediction, System, SystemVersion


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
