"""What every shared-task API view asks: the caller's role, and the path parameters."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from drf_spectacular.utils import OpenApiParameter
from rest_framework.request import Request

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    Dataset,
    Phase,
    SharedTask,
)


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
