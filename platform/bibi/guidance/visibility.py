"""Who may see a task's guidance, and how systems and teams are named to them.

``guidance_visibility`` = ``organizers`` (them only), ``breakers`` (and the members of breaker
teams) or ``public`` (everyone who can see the task); per-system predictions go to the
organizers always and to the others only with ``guidance_shows_systems``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied

from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask, Team
from bibi.systems.models import System


@dataclass(frozen=True)
class GuidanceSight:
    """What one user may see of a task's guidance, asked once per request."""

    viewer: task_selectors.Viewer
    allowed: bool
    per_system: bool

    def team_name(self, team: Team) -> str:
        return self.viewer.team_name(team)

    def sees_system_name(self, system: System) -> bool:
        return self.viewer.sees_team_private(system.team)


def team_name(team: Team, sight: GuidanceSight | None) -> str:
    """The team as the viewer may name it (an anonymous team's alias without a viewer)."""
    return sight.team_name(team) if sight is not None else team.public_name


def system_name(system: System, sight: GuidanceSight | None) -> str:
    """A system's name is its team's private record (``bibi.systems.selectors``): the
    organizers and the team read it, everyone else (and a caller without a viewer) reads
    ``system <id>``."""
    if sight is not None and sight.sees_system_name(system):
        return system.name
    return f"system {system.id}"


def guidance_sight(
    *, user: Any, shared_task: SharedTask, viewer: task_selectors.Viewer | None = None
) -> GuidanceSight:
    """``guidance_visibility``: ``organizers`` (them only), ``breakers`` (and the members of
    breaker teams), ``public`` (everyone who can see the task). Per-system predictions go to
    the organizers always, to the others only with ``guidance_shows_systems``. A page that
    has its ``viewer`` passes it (no query then, for a task it found visible)."""
    if viewer is None:
        viewer = task_selectors.viewer_get(user=user, shared_task=shared_task)
        visible = task_selectors.can_view_shared_task(user=user, shared_task=shared_task)
    else:
        visible = True
    return sight_of(viewer, shared_task, task_visible=visible)


def sight_of(
    viewer: task_selectors.Viewer, shared_task: SharedTask, *, task_visible: bool = True
) -> GuidanceSight:
    """The rule of ``guidance_sight`` for a known viewer (no query)."""
    Visibility = SharedTask.GuidanceVisibility
    visibility = shared_task.guidance_visibility
    if viewer.is_organizer:
        allowed = True
    elif visibility == Visibility.PUBLIC:
        allowed = task_visible
    elif visibility == Visibility.BREAKERS:
        allowed = viewer.team is not None and viewer.team.kind == Team.Kind.BREAKER
    else:
        allowed = False
    per_system = allowed and (viewer.is_organizer or shared_task.guidance_shows_systems)
    return GuidanceSight(viewer=viewer, allowed=allowed, per_system=per_system)


def guidance_sight_require(
    *, user: Any, shared_task: SharedTask, viewer: task_selectors.Viewer | None = None
) -> GuidanceSight:
    """``guidance_sight``, or ``PermissionDenied`` saying who sees this task's guidance."""
    sight = guidance_sight(user=user, shared_task=shared_task, viewer=viewer)
    if not sight.allowed:
        raise PermissionDenied(_refusal(shared_task))
    return sight


def _refusal(shared_task: SharedTask) -> str:
    Visibility = SharedTask.GuidanceVisibility
    if shared_task.guidance_visibility == Visibility.ORGANIZERS:
        return "This task shows its guidance to its organizers only."
    return "This task shows its guidance to its organizers and breaker teams only."
