"""What every organizers' page does first and last: find the task for an organizer, and
render a page of the Organize tab (``organizers``, ``organize_settings`` and ``validation``
pages share these)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from bibi.sharedtasks.models import SharedTask
from bibi.sharedtasks.selectors import Viewer
from bibi.web.access import require_organizer, task_and_viewer


def organizer_page(request: HttpRequest, slug: str) -> tuple[SharedTask, Viewer]:
    """The task of ``slug`` and its viewer, who must organize it (else 403 or a login)."""
    shared_task, viewer = task_and_viewer(request, slug)
    require_organizer(viewer)
    return shared_task, viewer


def organize_render(
    request: HttpRequest,
    template: str,
    shared_task: SharedTask,
    viewer: Viewer,
    section: str,
    status: int = 200,
    **context: Any,
) -> HttpResponse:
    """``template`` as a page of the Organize tab, its ``section`` marked."""
    context.update(shared_task=shared_task, viewer=viewer, tab="organize", section=section)
    return render(request, template, context, status=status)
