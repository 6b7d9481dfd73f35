"""What every API view of a shared task asks, in every app: the task its URL names (404 for
whoever may not see it), the caller's role, and the path parameters."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    Dataset,
    Phase,
    SharedTask,
)


def shared_task_for(request: Request, slug: str) -> SharedTask:
    """The task named by the URL, or 404 for anyone who may not see it."""
    shared_task = get_object_or_404(SharedTask, slug=slug)
    if not selectors.can_view_shared_task(user=request.user, shared_task=shared_task):
        raise Http404("No shared task matches the given query.")
    return shared_task


def require_organizer(request: Request, shared_task: SharedTask) -> None:
    if not selectors.is_organizer(user=request.user, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task may do that.")


def role_in(request: Request, shared_task: SharedTask) -> str | None:
    if selectors.is_organizer(user=request.user, shared_task=shared_task):
        return "organizer"
    membership = selectors.membership_get(user=request.user, shared_task=shared_task)
    return membership.team.kind if membership else None


KIND_PARAMETER = OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=Phase.Kind.values)
SPLIT_PARAMETER = OpenApiParameter("split", str, OpenApiParameter.PATH, enum=Dataset.Split.values)
