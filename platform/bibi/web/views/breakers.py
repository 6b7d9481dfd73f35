"""Breaker pages: pair-set uploads with every row error, the team's sets and entry, the
draft built one pair at a time, and contests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from bibi.api import error_groups
from bibi.files import RowError
from bibi.pairs import selectors as pair_selectors
from bibi.pairs import services as pair_services
from bibi.pairs.models import Pair, PairSet
from bibi.pairs.services import PAIR_SET_FILE
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import Dataset, SharedTask, Team
from bibi.sharedtasks.selectors import Viewer
from bibi.tasktypes.rules import PairRules
from bibi.web.access import file_upload, refusal_now, require_team, task_and_viewer
from bibi.web.forms import (
    ContestForm,
    PairSetUploadForm,
    add_service_error,
    add_upload_error,
)
from bibi.web.kinds import page_kind, variant_initial

PAIRS_PER_PAGE = 100
# Refused rows of a partial upload listed on its set's page; the download has them all.
REFUSED_ROWS_SHOWN = 200


def _pairs_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    team: Team,
    *,
    status: int = 200,
    **forms: Any,
) -> HttpResponse:
    # The team's task is the page's, with its phases read once: the checks below ask for them.
    team.shared_task = shared_task
    pair_sets = list(pair_selectors.team_pair_set_list(team=team))
    draft = next((s for s in pair_sets if s.status == PairSet.Status.DRAFT), None)
    entry = pair_selectors.pair_set_entry(team=team)
    # "Start a pair from this original" on the starter set page lands here.
    original_id = request.GET.get("original", "").strip()
    original = (
        task_selectors.example_get(
            shared_task=shared_task, split=Dataset.Split.STARTER, external_id=original_id
        )
        if original_id
        else None
    )
    add_form = forms.get("add_form") or page_kind(shared_task).add_form(
        shared_task=shared_task,
        initial={"original_id": original_id, **variant_initial(shared_task, original)},
    )
    # The team's task is the page's, phases read once: the checks below ask it again.
    team.shared_task = shared_task
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "pairs",
        "team": team,
        "upload_closed": refusal_now(
            lambda: pair_services.pair_set_submit_require(team=team, user=request.user)
        ),
        "sets_left": pair_selectors.pair_sets_left(team=team),
        "rules": PairRules.for_shared_task(shared_task),
        "pair_sets": [s for s in pair_sets if s.status == PairSet.Status.SUBMITTED],
        "draft": draft,
        "draft_pairs": pair_selectors.pair_list(pair_set=draft) if draft else [],
        "entry": entry,
        "original": original,
        "upload_form": forms.get("upload_form")
        or PairSetUploadForm(
            shared_task=shared_task,
            pair_sets=pair_sets,
            initial={"append_to": request.GET.get("append_to", "")},
        ),
        "add_form": add_form,
        "rejected": forms.get("rejected"),
        "add_rejected": forms.get("add_rejected"),
    }
    return render(request, "web/breakers/pairs.html", context, status=status)


@login_required
def pairs(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    team = require_team(viewer, Team.Kind.BREAKER)
    return _pairs_page(request, shared_task, viewer, team)


def say_refused(request: HttpRequest, count: int, *, dry_run: bool) -> None:
    """A partial upload's left-out rows, in one message (the set's page lists them)."""
    if count:
        rows = f"{count} row{'s' * (count != 1)}"
        messages.warning(
            request,
            f"{rows} of the file {'would be' if dry_run else ('were' if count != 1 else 'was')}"
            " refused and left out"
            + ("." if dry_run else ": the set's page lists them, with a file to download."),
        )


def say_warnings(request: HttpRequest, warnings: Sequence[RowError]) -> None:
    """A submission's warnings, as messages: one a problem, with the lines it is on."""
    for group in error_groups(warnings):
        # A warning of the set as a whole (line 0) has no line to name.
        where = group["lines"]
        lines = f"Line {where}: " if where[:1].isdigit() else ""
        messages.warning(request, f"{lines}{group['reason']}")


@file_upload(limit_setting="PAIR_SET_UPLOAD_MAX_BYTES", what=PAIR_SET_FILE, back="web:pairs")
def pair_set_upload(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    team = require_team(viewer, Team.Kind.BREAKER)
    form = PairSetUploadForm(
        request.POST,
        request.FILES,
        shared_task=shared_task,
        pair_sets=pair_selectors.team_pair_set_list(team=team),
    )
    dry_run = "dry_run" in request.POST
    rejected = None
    if form.is_valid():
        append_to = form.cleaned_data.get("append_to")
        try:
            submission = pair_services.pair_set_upload(
                team=team,
                user=request.user,
                file=form.cleaned_data["file"],
                file_format=form.cleaned_data["format"] or None,
                label_map=form.cleaned_data.get("label_map"),
                dry_run=dry_run,
                partial=form.cleaned_data["partial"],
                append_to=(
                    pair_selectors.team_pair_set(team=team, pk=append_to) if append_to else None
                ),
            )
        except ValidationError as error:
            rejected = add_upload_error(form, error)
        else:
            pair_set, count = submission.pair_set, submission.pair_set.pair_count
            pairs_said = f"{count} pair{'s' * (count != 1)}"
            if dry_run:
                messages.success(
                    request,
                    f"{pair_set.filename} {'has' if pair_set.refused_count else 'passes every check'}"
                    f"{f' {pairs_said} that pass' if pair_set.refused_count else f' ({pairs_said})'}"
                    ". Nothing was stored: upload it again to submit it.",
                )
            else:
                messages.success(request, f"Pair set {pair_set.id} is submitted: {pairs_said}.")
            say_refused(request, pair_set.refused_count, dry_run=dry_run)
            say_warnings(request, submission.warnings)
            if dry_run:
                return redirect("web:pairs", slug=slug)
            return redirect("web:pair-set", slug=slug, pk=pair_set.id)
    return _pairs_page(
        request, shared_task, viewer, team, upload_form=form, rejected=rejected, status=400
    )


@login_required
@require_POST
def pair_add(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    team = require_team(viewer, Team.Kind.BREAKER)
    form = page_kind(shared_task).add_form(request.POST, shared_task=shared_task)
    rejected = None
    if form.is_valid():
        try:
            pair = pair_services.pair_add(
                team=team, user=request.user, pair=shared_task.kind.pair_input(0, form.cleaned_data)
            )
        except ValidationError as error:
            rejected = add_upload_error(form, error)
        else:
            messages.success(request, "The pair is checked and added to the draft.")
            say_warnings(request, pair.warnings)
            return redirect("web:pairs", slug=slug)
    return _pairs_page(
        request, shared_task, viewer, team, add_form=form, add_rejected=rejected, status=400
    )


def _draft_pair(team: Team, pair_id: int) -> Pair:
    draft = pair_selectors.pair_set_draft(team=team)
    pair = draft.pairs.filter(id=pair_id).first() if draft else None
    if pair is None:
        raise Http404("Your team's draft has no such pair.")
    return pair


@login_required
@require_POST
def pair_remove(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    _, viewer = task_and_viewer(request, slug)
    team = require_team(viewer, Team.Kind.BREAKER)
    pair_services.pair_remove(pair=_draft_pair(team, pair_id), user=request.user)
    messages.success(request, "The pair is removed from the draft.")
    return redirect("web:pairs", slug=slug)


@login_required
@require_POST
def draft_submit(request: HttpRequest, slug: str) -> HttpResponse:
    _, viewer = task_and_viewer(request, slug)
    team = require_team(viewer, Team.Kind.BREAKER)
    draft = pair_selectors.pair_set_draft(team=team)
    if draft is None:
        messages.error(request, "Your team has no draft: add a pair first.")
        return redirect("web:pairs", slug=slug)
    try:
        submission = pair_services.pair_set_draft_submit(pair_set=draft, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("web:pairs", slug=slug)
    messages.success(request, f"The draft is submitted as pair set {draft.id}.")
    say_warnings(request, submission.warnings)
    return redirect("web:pair-set", slug=slug, pk=draft.id)


def _pair_set_for(request: HttpRequest, shared_task: SharedTask, pk: int) -> PairSet:
    pair_set = (
        PairSet.objects.select_related("team", "shared_task", "submitted_by")
        .filter(shared_task=shared_task, pk=pk)
        .first()
    )
    if pair_set is None or not pair_selectors.can_view_pair_set(
        user=request.user, pair_set=pair_set
    ):
        raise Http404("No pair set matches this address.")
    return pair_set


@login_required
def pair_set_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    pair_set = _pair_set_for(request, shared_task, pk)
    entry = pair_selectors.pair_set_entry(team=pair_set.team)
    page = Paginator(pair_selectors.pair_list(pair_set=pair_set), PAIRS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "pairs",
        "pair_set": pair_set,
        "is_entry": entry is not None and entry.id == pair_set.id,
        "is_member": viewer.team is not None and viewer.team.id == pair_set.team_id,
        "page": page,
        "refused_rows": (
            pair_selectors.refused_rows(pair_set=pair_set, limit=REFUSED_ROWS_SHOWN)
            if pair_set.refused_count
            and pair_selectors.can_view_refused_rows(user=request.user, pair_set=pair_set)
            else []
        ),
    }
    return render(request, "web/breakers/pair_set.html", context)


@login_required
def pair_set_refused(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    shared_task, _ = task_and_viewer(request, slug)
    pair_set = _pair_set_for(request, shared_task, pk)
    if not pair_set.refused_count or not pair_selectors.can_view_refused_rows(
        user=request.user, pair_set=pair_set
    ):
        raise Http404("This pair set has no refused rows to show.")
    response = HttpResponse(pair_set.refused_csv, content_type="text/csv; charset=utf-8")
    filename = pair_selectors.refused_rows_filename(pair_set=pair_set)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@login_required
@require_POST
def pair_set_final(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    shared_task, _ = task_and_viewer(request, slug)
    pair_set = _pair_set_for(request, shared_task, pk)
    is_final = request.POST.get("is_final") == "1"
    try:
        pair_services.pair_set_mark_final(pair_set=pair_set, user=request.user, is_final=is_final)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        if is_final:
            messages.success(request, f"Pair set {pk} is your team's final entry.")
        else:
            messages.success(
                request, "No set is marked final: your latest set before the deadline is the entry."
            )
    return redirect("web:pairs", slug=slug)


# --- Contests ------------------------------------------------------------------------------


@login_required
def contests(request: HttpRequest, slug: str) -> HttpResponse:
    """The contests that concern the viewer's team: filed by it, or against its pairs."""
    shared_task, viewer = task_and_viewer(request, slug)
    if viewer.team is None:
        require_team(viewer, Team.Kind.BREAKER)
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "contests",
        "contests": pair_selectors.contest_list(user=request.user, shared_task=shared_task),
        "contest_phase_open": pair_selectors.contest_phase_is_open(shared_task=shared_task),
    }
    return render(request, "web/breakers/contests.html", context)


@login_required
def contestable_pairs(request: HttpRequest, slug: str) -> HttpResponse:
    """During the contest phase: the other teams' entry pairs, without team or rationale."""
    shared_task, viewer = task_and_viewer(request, slug)
    if viewer.team is None:
        require_team(viewer, Team.Kind.BREAKER)
    held = pair_selectors.pairs_held_for_validation(user=request.user, shared_task=shared_task)
    queryset = pair_selectors.contestable_pair_list(
        user=request.user, shared_task=shared_task, held=held
    )
    page = Paginator(queryset, PAIRS_PER_PAGE).get_page(request.GET.get("page"))
    contested = pair_selectors.contested_pair_ids(team=viewer.team) if viewer.team else set()
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "contests",
        "page": page,
        "contested": contested,
        "labels_withheld_until": viewer.team
        and pair_selectors.labels_withheld_until(team=viewer.team),
        "held_for_validation": len(held),
        "contest_phase_open": pair_selectors.contest_phase_is_open(shared_task=shared_task),
    }
    return render(request, "web/breakers/contestable_pairs.html", context)


def _contestable_pair(request: HttpRequest, shared_task: SharedTask, pair_id: int) -> Pair:
    pair = (
        pair_selectors.contestable_pair_list(user=request.user, shared_task=shared_task)
        .filter(id=pair_id)
        .first()
    )
    if pair is None:
        raise Http404("No pair your team may contest matches this address.")
    return pair


@login_required
def contest_create(request: HttpRequest, slug: str, pair_id: int) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    if viewer.team is None:
        require_team(viewer, Team.Kind.BREAKER)
    pair = _contestable_pair(request, shared_task, pair_id)
    form = ContestForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            pair_services.contest_create(pair=pair, user=request.user, **form.cleaned_data)
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, "The contest is filed: the organizers will decide.")
            return redirect("web:contests", slug=slug)
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "contests",
        "pair": pair,
        "form": form,
    }
    return render(
        request, "web/breakers/contest_create.html", context, status=400 if form.errors else 200
    )
