"""How a page finds what its URL names, and who may see it.

The rules are the selectors'; this module only turns their answers into the responses a
page gives, the same ones the API gives: a task (or a system, a pair set) the visitor may
not see is a 404, as if it did not exist; a page their role does not open is a 403 that
says what would open it. Pages for signed-in people send anonymous visitors to log in
(``login_required`` on the view) before any of this runs.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db.models import prefetch_related_objects
from django.http import HttpRequest

from bibi.api import shared_task_for
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask, Team
from bibi.sharedtasks.selectors import Viewer


def task_and_viewer(request: HttpRequest, slug: str) -> tuple[SharedTask, Viewer]:
    """The task named by the URL (404 for whoever may not see it), its phases loaded once."""
    shared_task = shared_task_for(request, slug)
    prefetch_related_objects([shared_task], "phases")
    return shared_task, task_selectors.viewer_get(user=request.user, shared_task=shared_task)


def require_organizer(viewer: Viewer) -> None:
    if not viewer.is_organizer:
        raise PermissionDenied("Only the organizers of this shared task see this page.")


def require_team(viewer: Viewer, kind: str) -> Team:
    """The viewer's team, if it is of ``kind``; else a 403 that says how to get one."""
    team = viewer.team
    if team is None:
        raise PermissionDenied(
            f"This page is for members of a {kind} team of this shared task: create a team "
            "or ask a team for an invitation link."
        )
    if team.kind != kind:
        raise PermissionDenied(
            f"This page is for {kind} teams; your team, {team.name}, is a {team.kind} team."
        )
    return team
