"""Label validation pages: the validator's queue (one pair at a time, blind) and the
organizers' overview (progress, outcomes, disputed pairs, agreement).

The rules are the pairs app's (``bibi.pairs.validation``: its selectors and services): who
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
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from bibi.evaluation import exports
from bibi.pairs import validation
from bibi.pairs.models import Contest, LabelValidation, Pair
from bibi.pairs.validation import services as validation_services
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask, Team
from bibi.sharedtasks.selectors import Viewer
from bibi.web.access import task_and_viewer, validator_role_of
from bibi.web.diff import text_diffs
from bibi.web.forms import add_service_error
from bibi.web.validation_forms import ValidationVoteForm
from bibi.web.views.organize_pages import organize_render, organizer_page

HISTORY_SHOWN = 10
PAIR_ROWS_PER_PAGE = 50
# A validator who agrees with the majority less often than this, over at least
# CARELESS_MIN_COMPARED pairs, is marked on the overview for the organizers to look at.
CARELESS_BELOW = 0.6
CARELESS_MIN_COMPARED = 3
# States whose pair went through the contest label validation opened.
DECIDED_BY_CONTEST = ("disputed", "adjudicated", "excluded")


def _role(viewer: Viewer, shared_task: SharedTask) -> str:
    """The viewer's validator role; 403 for someone who has none, saying who has one."""
    role = validator_role_of(viewer, shared_task)
    if role is None:
        if shared_task.validation_mode == SharedTask.ValidationMode.OFF:
            raise PermissionDenied("Label validation is off for this shared task.")
        raise PermissionDenied(
            "Labels are validated by the organizers, the members of breaker teams and the "
            "validators the organizers invite: a link into the task for validators opens "
            "this page."
        )
    return role


def _queue_state(
    request: HttpRequest, shared_task: SharedTask, viewer: Viewer, role: str
) -> dict[str, Any]:
    """What the queue page says (``pairs.validation.validation_queue_state``'s answers, with
    the pair handed out and the history): the validator's own votes in one query, and the
    queue's candidates only when the page offers the next pair."""
    # The viewer's rows, and (one query still) those of their breaker team's other members
    # that keep a pair from them: one vote per team and pair.
    team = viewer.team if viewer.team and viewer.team.kind == Team.Kind.BREAKER else None
    held = Q(team=team, status__in=[LabelValidation.Status.ASSIGNED, LabelValidation.Status.DONE])
    rows = list(
        LabelValidation.objects.filter(
            Q(validator=request.user) | held if team else Q(validator=request.user),
            pair__pair_set__shared_task=shared_task,
        )
        .select_related("pair")
        .order_by("-submitted_at", "-id")
    )
    mine = [item for item in rows if item.validator_id == request.user.pk]
    done = [item for item in mine if item.status == LabelValidation.Status.DONE]
    assigned = next((i for i in mine if i.status == LabelValidation.Status.ASSIGNED), None)
    quota = shared_task.validation_quota_per_validator
    state = {
        "role": role,
        "closed_reason": validation.validation_closed_reason(shared_task=shared_task),
        "quota": quota,
        "quota_reached": bool(quota) and len(done) >= quota,
        "done": len(done),
        "history": done[:HISTORY_SHOWN],
        "assigned": assigned,
        "available": 0,
    }
    skipped = sum(item.status == LabelValidation.Status.SKIPPED for item in mine)
    state["skipped"] = skipped
    state["skips_left"] = max(settings.VALIDATION_SKIPS_MAX - skipped, 0)
    if state["closed_reason"] is None and assigned is None and not state["quota_reached"]:
        seen = {item.pair_id for item in rows}
        candidates = validation.validation_candidates(
            shared_task=shared_task, exclude_team_id=viewer.team.id if viewer.team else None
        )
        state["available"] = sum(pair_id not in seen for pair_id, _ in candidates)
    return state


def _queue_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    role: str,
    *,
    form: ValidationVoteForm | None = None,
    status: int = 200,
) -> HttpResponse:
    state = _queue_state(request, shared_task, viewer, role)
    assigned = state["assigned"]
    lifetime = timedelta(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES)
    kind = shared_task.kind
    # What changed, word by word: the pair's texts only (never its label, team or set).
    diffs = (
        text_diffs(
            kind,
            *kind.pair_items(assigned.pair),
            [segment.field for segment in kind.segments if segment.editable is not False],
        )
        if assigned
        else []
    )
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "validate",
        "diffs": diffs,
        "state": state,
        "assigned": assigned,
        "expires_at": assigned.assigned_at + lifetime if assigned else None,
        "form": form or ValidationVoteForm(shared_task=shared_task),
    }
    return render(request, "web/validation/queue.html", context, status=status)


@login_required
def queue(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    return _queue_page(request, shared_task, viewer, _role(viewer, shared_task))


def _hand_next(request: HttpRequest, shared_task: SharedTask) -> None:
    """Hand the viewer the queue's next pair, or say why there is none."""
    try:
        handed = validation_services.validation_next(shared_task=shared_task, user=request.user)
    except ValidationError as error:
        messages.info(request, " ".join(error.messages))
        return
    if handed is None:
        messages.info(request, "The queue has no more pairs for you. Thank you.")


@login_required
@require_POST
def queue_next(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    _role(viewer, shared_task)
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
    role = _role(viewer, shared_task)
    if not _handed_to_viewer(request, shared_task, validation_id):
        messages.error(request, NOT_HANDED.format(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES))
        return redirect("web:validate", slug=slug)
    form = ValidationVoteForm(request.POST, shared_task=shared_task)
    if form.is_valid():
        try:
            validation_services.validation_submit(
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
    return _queue_page(request, shared_task, viewer, role, form=form, status=400)


@login_required
@require_POST
def skip(request: HttpRequest, slug: str, validation_id: int) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    _role(viewer, shared_task)
    if not _handed_to_viewer(request, shared_task, validation_id):
        messages.error(request, NOT_HANDED.format(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES))
        return redirect("web:validate", slug=slug)
    try:
        validation_services.validation_skip(validation_id=validation_id, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("web:validate", slug=slug)
    messages.info(request, "The pair is skipped: it goes to other validators, never back to you.")
    _hand_next(request, shared_task)
    return redirect("web:validate", slug=slug)


# --- The organizers' overview --------------------------------------------------------------


def _progress(counts: dict[str, int]) -> dict[str, int]:
    """Pairs in scope, and of them those whose outcome is known (decided or adjudicated)."""
    in_scope = counts["entry_pairs"] - counts["not_validated"]
    waiting = counts["pending"] + counts["unverified"]
    return {"in_scope": in_scope, "waiting": waiting, "decided": in_scope - waiting}


def _page_rows(page_rows: list[dict[str, Any]], teams: dict[int, str]) -> None:
    """Complete the rows of one page of the overview's pairs: their texts, their team's name
    and the contest label validation opened for each disputed one (two queries a page,
    whatever the number of pairs)."""
    ids = [row["pair_id"] for row in page_rows]
    texts = {
        pair_id: (original, variant)
        for pair_id, original, variant in Pair.objects.filter(id__in=ids).values_list(
            "id", "original_text", "variant_text"
        )
    }
    disputed = [row["pair_id"] for row in page_rows if row["state"] in DECIDED_BY_CONTEST]
    contests = (
        {
            contest.pair_id: contest
            for contest in Contest.objects.filter(
                pair_id__in=disputed, origin=Contest.Origin.VALIDATION
            )
        }
        if disputed
        else {}
    )
    for row in page_rows:
        row["original_text"], row["variant_text"] = texts[row["pair_id"]]
        row["team"] = teams.get(row["team_id"], "")
        row["contest"] = contests.get(row["pair_id"])


@login_required
def overview(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    states = validation.pair_validations(shared_task=shared_task)
    summary = validation.validation_summary(shared_task=shared_task, states=states)
    teams = {team.id: team.name for team in task_selectors.team_list(shared_task=shared_task)}
    state = request.GET.get("state", "")
    if state not in validation.STATES:
        state = ""
    rows = [each.as_row() for each in states.values() if not state or each.state == state]
    page = Paginator(rows, PAIR_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    _page_rows(page.object_list, teams)
    validators = validation.validator_agreement_list(shared_task=shared_task)
    for row in validators:
        row["careless"] = (
            row["agreement"] is not None
            and row["compared"] >= CARELESS_MIN_COMPARED
            and row["agreement"] < CARELESS_BELOW
        )
    for team in summary["teams"]:
        team["name"] = teams.get(team["team_id"], "")
    return organize_render(
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
        skips_max=settings.VALIDATION_SKIPS_MAX,
        page=page,
        state=state,
        state_query=f"state={state}" if state else "",
        states=validation.STATES,
        closed_reason=validation.validation_closed_reason(shared_task=shared_task),
        # A disputed pair is one whose contest waits for the organizers' decision.
        open_disputes=summary["counts"]["disputed"],
    )


@login_required
def votes_csv(request: HttpRequest, slug: str) -> HttpResponse:
    """Organizers: every vote of the task as CSV (``validation.VOTE_COLUMNS``), formula-like
    cells neutralised (a note or label that begins with ``=`` is shown, never run)."""
    shared_task, _viewer = organizer_page(request, slug)
    rows = validation.validation_vote_rows(shared_task=shared_task)
    columns = validation.VOTE_COLUMNS
    body = exports.csv_text(columns, ([row[column] for column in columns] for row in rows))
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{shared_task.slug}-votes.csv"'
    return response
