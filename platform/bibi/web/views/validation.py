"""Label validation pages: the validator's queue (one pair at a time, blind) and the
organizers' overview (progress, outcomes, disputed pairs, agreement).

The rules are the pairs app's (``bibi.pairs.validation``, ``bibi.pairs.services``): who
validates, what the queue hands out, what the votes decide. The queue page never shows a
pair's claimed label, its team, its set, its rationale or its tags: only the original (with
the starter set's label, which anyone reads on the starter set) and the variant. Reading the
page changes nothing; a pair is handed out by a button (a POST), and after each vote the
next one is handed out at once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from bibi.pairs import agreement, validation
from bibi.pairs import selectors as pair_selectors
from bibi.pairs import services as pair_services
from bibi.pairs.models import Contest, LabelValidation
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask
from bibi.sharedtasks.selectors import Viewer
from bibi.web.access import task_and_viewer
from bibi.web.forms import add_service_error
from bibi.web.validation_forms import ValidationVoteForm
from bibi.web.views.organizers import _organizer_page, _page

HISTORY_SHOWN = 10
PAIR_ROWS_PER_PAGE = 50
# A validator who agrees with the majority less often than this, over at least
# CARELESS_MIN_COMPARED pairs, is marked on the overview for the organizers to look at.
CARELESS_BELOW = 0.6
CARELESS_MIN_COMPARED = 3


def _validator_state(request: HttpRequest, shared_task: SharedTask) -> dict[str, Any]:
    """The queue's state for the viewer (``validation_queue_state``); 403 for someone who is
    not a validator of the task, saying who is."""
    state = pair_selectors.validation_queue_state(shared_task=shared_task, user=request.user)
    if state["role"] is None:
        if shared_task.validation_mode == SharedTask.ValidationMode.OFF:
            raise PermissionDenied("Label validation is off for this shared task.")
        raise PermissionDenied(
            "Labels are validated by the organizers, the members of breaker teams and the "
            "validators the organizers invite: a link into the task for validators opens "
            "this page."
        )
    return state


def _assigned(request: HttpRequest, shared_task: SharedTask) -> LabelValidation | None:
    """The pair handed to the viewer and not answered yet, with its texts."""
    return (
        LabelValidation.objects.filter(
            validator=request.user,
            pair__pair_set__shared_task=shared_task,
            status=LabelValidation.Status.ASSIGNED,
        )
        .select_related("pair")
        .first()
    )


def _queue_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    state: dict[str, Any],
    *,
    form: ValidationVoteForm | None = None,
    status: int = 200,
) -> HttpResponse:
    assigned = _assigned(request, shared_task) if state["assigned"] else None
    lifetime = timedelta(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES)
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "validate",
        "state": state,
        "assigned": assigned,
        "expires_at": assigned.assigned_at + lifetime if assigned else None,
        "form": form or ValidationVoteForm(shared_task=shared_task),
        "history": list(
            pair_selectors.validator_history(shared_task=shared_task, user=request.user)[
                :HISTORY_SHOWN
            ]
        ),
        "quota_reached": bool(state["quota"]) and state["done"] >= state["quota"],
    }
    return render(request, "web/validation/queue.html", context, status=status)


@login_required
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    return _queue_page(request, shared_task, viewer, _validator_state(request, shared_task))


def _hand_next(request: HttpRequest, shared_task: SharedTask) -> None:
    """Hand the viewer the queue's next pair, or say why there is none."""
    try:
        handed = pair_services.validation_next(shared_task=shared_task, user=request.user)
    except ValidationError as error:
        messages.info(request, " ".join(error.messages))
        return
    if handed is None:
        messages.info(
            request, "The queue has no pair left for you: every pair has its votes. Thank you."
        )


@login_required
@require_POST
def queue_next(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, _ = task_and_viewer(request, slug)
    _validator_state(request, shared_task)
    _hand_next(request, shared_task)
    return redirect("web:validate", slug=slug)


def _handed_to_viewer(request: HttpRequest, shared_task: SharedTask, validation_id: int) -> bool:
    return LabelValidation.objects.filter(
        id=validation_id,
        validator=request.user,
        pair__pair_set__shared_task=shared_task,
        status=LabelValidation.Status.ASSIGNED,
    ).exists()


NOT_HANDED = (
    "This pair is no longer handed to you (it went back to the queue after "
    "{minutes} minutes, or you answered it already)."
)


@login_required
@require_POST
def vote(request: HttpRequest, slug: str, validation_id: int) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    state = _validator_state(request, shared_task)
    if not _handed_to_viewer(request, shared_task, validation_id):
        messages.error(request, NOT_HANDED.format(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES))
        return redirect("web:validate", slug=slug)
    form = ValidationVoteForm(request.POST, shared_task=shared_task)
    if form.is_valid():
        try:
            pair_services.validation_submit(
                validation_id=validation_id, user=request.user, **form.cleaned_data
            )
        except LabelValidation.DoesNotExist:
            messages.error(
                request, NOT_HANDED.format(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES)
            )
            return redirect("web:validate", slug=slug)
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, "Your label is saved. A vote is final.")
            _hand_next(request, shared_task)
            return redirect("web:validate", slug=slug)
    return _queue_page(request, shared_task, viewer, state, form=form, status=400)


@login_required
@require_POST
def skip(request: HttpRequest, slug: str, validation_id: int) -> HttpResponse:
    shared_task, _ = task_and_viewer(request, slug)
    _validator_state(request, shared_task)
    if not _handed_to_viewer(request, shared_task, validation_id):
        messages.error(request, NOT_HANDED.format(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES))
        return redirect("web:validate", slug=slug)
    pair_services.validation_skip(validation_id=validation_id, user=request.user)
    messages.info(request, "The pair is skipped: it goes to other validators, never back to you.")
    _hand_next(request, shared_task)
    return redirect("web:validate", slug=slug)


# --- The organizers' overview --------------------------------------------------------------


def _progress(counts: dict[str, int]) -> dict[str, int]:
    """Pairs in scope, and of them those whose outcome is known (decided or adjudicated)."""
    in_scope = counts["entry_pairs"] - counts["not_validated"]
    waiting = counts["pending"] + counts["unverified"]
    return {"in_scope": in_scope, "waiting": waiting, "decided": in_scope - waiting}


def _disputes(request: HttpRequest, shared_task: SharedTask) -> dict[int, Contest]:
    """The contests label validation opened, by pair: each disputed pair's adjudication."""
    contests = pair_selectors.contest_list(user=request.user, shared_task=shared_task).filter(
        origin=Contest.Origin.VALIDATION
    )
    return {contest.pair_id: contest for contest in contests}


@login_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = _organizer_page(request, slug)
    states = validation.pair_validations(shared_task=shared_task)
    summary = agreement.validation_summary(shared_task=shared_task, states=states)
    teams = {team.id: team.name for team in task_selectors.team_list(shared_task=shared_task)}
    state = request.GET.get("state", "")
    rows = pair_selectors.validation_pair_rows(shared_task=shared_task)
    if state in validation.STATES:
        rows = [row for row in rows if row["state"] == state]
    else:
        state = ""
    page = Paginator(rows, PAIR_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    disputes = _disputes(request, shared_task)
    for row in page.object_list:
        row["team"] = teams.get(row["team_id"], "")
        row["contest"] = disputes.get(row["pair_id"])
    validators = agreement.validator_agreement_list(shared_task=shared_task)
    for row in validators:
        row["careless"] = (
            row["agreement"] is not None
            and row["compared"] >= CARELESS_MIN_COMPARED
            and row["agreement"] < CARELESS_BELOW
        )
    for team in summary["teams"]:
        team["name"] = teams.get(team["team_id"], "")
    return _page(
        request,
        "web/validation/overview.html",
        shared_task,
        viewer,
        "validation",
        summary=summary,
        progress=_progress(summary["counts"]),
        validators=validators,
        careless_below=CARELESS_BELOW,
        careless_min=CARELESS_MIN_COMPARED,
        page=page,
        state=state,
        state_query=f"state={state}" if state else "",
        states=validation.STATES,
        closed_reason=validation.validation_closed_reason(shared_task=shared_task),
        open_disputes=sum(contest.status == Contest.Status.OPEN for contest in disputes.values()),
    )
