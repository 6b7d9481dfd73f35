"""How a page finds what its URL names, and who may see it.

The rules are the selectors'; this module only turns their answers into the responses a
page gives, the same ones the API gives: a task (or a system, a pair set) the visitor may
not see is a 404, as if it did not exist; a page their role does not open is a 403 that
says what would open it. Pages for signed-in people send anonymous visitors to log in
(``login_required`` on the view) before any of this runs.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import prefetch_related_objects
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from bibi.pairs.models import LabelValidation
from bibi.pairs.validation import validator_role
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.apis.common import shared_task_for
from bibi.sharedtasks.models import SharedTask, Team
from bibi.sharedtasks.selectors import Viewer
from bibi.uploads import SizeLimitedUpload, UploadTooLarge

View = Callable[..., HttpResponse]


def task_and_viewer(request: HttpRequest, slug: str) -> tuple[SharedTask, Viewer]:
    """The task named by the URL (404 for whoever may not see it), its phases loaded once."""
    shared_task = shared_task_for(request, slug)
    prefetch_related_objects([shared_task], "phases")
    return shared_task, task_selectors.viewer_get(user=request.user, shared_task=shared_task)


def refusal_now(check: Callable[[], object]) -> str | None:
    """Why a service would refuse now (its ``check``'s message: the phase's dates, the
    quota), or None: a page shows a form only where submitting it can succeed."""
    try:
        check()
    except (ValidationError, PermissionDenied) as error:
        messages_ = getattr(error, "messages", None) or [str(error)]
        return " ".join(str(message) for message in messages_)
    return None


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


def wants_json(request: HttpRequest) -> bool:
    """The upload script asks for JSON, to follow its progress bar with a message or a page."""
    return "application/json" in request.headers.get("Accept", "")


def file_upload(*, limit_setting: str, what: str, back: str) -> Callable[[View], View]:
    """A signed-in POST with a file, cut off at ``settings.<limit_setting>`` bytes as it
    streams in (``bibi.uploads``), as the API's uploads are.

    The limit must be in place before anything reads the body, and the CSRF check reads it:
    so the limit comes first, then the CSRF check, then the view. An upload over the limit
    is answered with its message on the page named ``back`` (reversed with the view's URL
    arguments), or as ``{"errors": [...]}`` with 413 to the progress bar's script.
    """

    def decorate(view: View) -> View:
        protected = csrf_protect(require_POST(view))

        @wraps(view)
        @csrf_exempt
        @login_required
        def limited(request: HttpRequest, **kwargs: Any) -> HttpResponse:
            limit = getattr(settings, limit_setting)
            request.upload_handlers.insert(0, SizeLimitedUpload(request, limit=limit, what=what))
            try:
                return protected(request, **kwargs)
            except UploadTooLarge as error:
                if wants_json(request):
                    return JsonResponse({"errors": error.messages}, status=413)
                messages.error(request, error.messages[0])
                return redirect(back, **kwargs)

        return limited

    return decorate


def validator_role_of(viewer: Viewer, shared_task: SharedTask) -> str | None:
    """The viewer's role in the task's label validation, as
    ``bibi.pairs.validation.validator_role`` answers it, without its queries where the viewer
    already knows them: organizers and breaker team members validate whenever validation is
    on, builder team members never; anyone else is asked (an invited validator).
    ``test_validation_pages`` checks both agree for every role."""
    if shared_task.validation_mode == SharedTask.ValidationMode.OFF:
        return None
    if viewer.is_organizer:
        return LabelValidation.Role.ORGANIZER
    if viewer.team is not None:
        return LabelValidation.Role.BREAKER if viewer.team.kind == Team.Kind.BREAKER else None
    return validator_role(user=viewer.user, shared_task=shared_task)
