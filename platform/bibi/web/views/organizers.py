"""Organizer pages: a new task, and the dashboard of one task (phases, datasets and imports,
teams, systems, the adjudication queue)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from bibi.evaluation import selectors as results_selectors
from bibi.evaluation import triggers as evaluation_triggers
from bibi.pairs import selectors as pair_selectors
from bibi.pairs import services as pair_services
from bibi.pairs.models import Contest
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.importing import EXAMPLES_FILE
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.sharedtasks.selectors import Viewer
from bibi.systems import selectors as system_selectors
from bibi.web.access import file_upload
from bibi.web.confirm import Confirmation, confirm_first
from bibi.web.forms import (
    AdjudicateForm,
    ExamplesImportForm,
    PhaseCreateForm,
    PhaseExtendForm,
    PhaseUpdateForm,
    SharedTaskCreateForm,
    TaskInvitationForm,
    add_service_error,
    add_upload_error,
)
from bibi.web.organize_forms import PhaseCloseNowForm
from bibi.web.views.organize_pages import organize_render, organizer_page

RECENT_ACTIVITY = 10


@login_required
def task_create(request: HttpRequest) -> HttpResponse:
    form = SharedTaskCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            shared_task = task_services.shared_task_create(
                creator=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(
                request,
                f"The task {shared_task.name} is created and you organize it. Next: its phases "
                "and its datasets.",
            )
            return redirect("web:organize-phases", slug=shared_task.slug)
    status = 400 if form.errors else 200
    return render(request, "web/organize/task_create.html", {"form": form}, status=status)


@login_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    return organize_render(
        request,
        "web/organize/dashboard.html",
        shared_task,
        viewer,
        "overview",
        timeline=task_selectors.phase_timeline(shared_task=shared_task),
        next_moment=task_selectors.phase_next_moment(shared_task=shared_task),
        team_counts=task_selectors.team_counts(shared_task=shared_task),
        version_counts=system_selectors.version_status_counts(shared_task=shared_task),
        open_contests=pair_selectors.contest_open_count(shared_task=shared_task),
        datasets=task_selectors.dataset_list(shared_task=shared_task),
        activity=task_selectors.audit_log_list(shared_task=shared_task)[:RECENT_ACTIVITY],
        latest_run=results_selectors.scoring_run_list(shared_task=shared_task)
        .select_related("snapshot")
        .first(),
    )


# --- Phases --------------------------------------------------------------------------------


def _close_warning(shared_task: SharedTask, phases: list[Phase], index: int) -> str | None:
    """What closing the running ``phases[index]`` now would end: label validation, with
    pairs still waiting for votes, when the phase after it is the results phase."""
    phase = phases[index]
    following = phases[index + 1] if index + 1 < len(phases) else None
    if not phase.is_open() or following is None or following.kind != Phase.Kind.RESULTS:
        return None
    return evaluation_triggers.validation_end_warning(
        shared_task=shared_task, doing=f"closing the {phase.kind} phase now"
    )


def _phases_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    *,
    bound: dict[tuple[str, str], Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    """Every phase with a form to move it and one to extend it; a form for a missing one.

    ``bound`` holds a refused form by (phase kind, action), shown with its errors."""
    bound = bound or {}
    phases = sorted(shared_task.phases.all(), key=lambda phase: phase.starts_at)
    rows = [
        {
            "phase": phase,
            "close_warning": _close_warning(shared_task, phases, index),
            "update_form": bound.get((phase.kind, "update"))
            or PhaseUpdateForm(
                prefix=phase.kind,
                initial={"starts_at": phase.starts_at, "ends_at": phase.ends_at},
            ),
            "extend_form": bound.get((phase.kind, "extend"))
            or PhaseExtendForm(prefix=f"{phase.kind}-extend", initial={"ends_at": phase.ends_at}),
        }
        for index, phase in enumerate(phases)
    ]
    missing = [kind for kind in Phase.Kind.values if kind not in {p.kind for p in phases}]
    create_form = bound.get(("", "create")) or PhaseCreateForm(prefix="new")
    create_form.fields["kind"].choices = [
        (kind, label) for kind, label in Phase.Kind.choices if kind in missing
    ]
    return organize_render(
        request,
        "web/organize/phases.html",
        shared_task,
        viewer,
        "phases",
        status=status,
        rows=rows,
        close_form=PhaseCloseNowForm(),
        create_form=create_form if missing else None,
    )


@login_required
def phases(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    return _phases_page(request, shared_task, viewer)


@login_required
@require_POST
def phase_create(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    form = PhaseCreateForm(request.POST, prefix="new")
    if form.is_valid():
        try:
            phase = task_services.phase_create(
                shared_task=shared_task, actor=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"The {phase.kind} phase is scheduled.")
            return redirect("web:organize-phases", slug=slug)
    return _phases_page(request, shared_task, viewer, bound={("", "create"): form}, status=400)


def _phase(shared_task: SharedTask, kind: str) -> Phase:
    phase = next((p for p in shared_task.phases.all() if p.kind == kind), None)
    if phase is None:
        raise Http404("This task has no such phase.")
    return phase


@login_required
@require_POST
def phase_update(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    phase = _phase(shared_task, kind)
    form = PhaseUpdateForm(request.POST, prefix=kind)
    if form.is_valid():
        try:
            task_services.phase_update(phase=phase, actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"The {kind} phase is moved.")
            return redirect("web:organize-phases", slug=slug)
    return _phases_page(request, shared_task, viewer, bound={(kind, "update"): form}, status=400)


@login_required
@require_POST
def phase_close_now(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    shared_task, _ = organizer_page(request, slug)
    phase = _phase(shared_task, kind)
    if not PhaseCloseNowForm(request.POST).is_valid():
        messages.error(
            request,
            f'Nothing was closed: tick "Yes, close it now" to end the {kind} phase at once.',
        )
        return redirect("web:organize-phases", slug=slug)
    try:
        following = task_services.phase_close_now(
            phase=phase, actor=request.user, confirm=request.POST.get("confirm_validation") == "1"
        )
    except ValidationError as error:
        messages.error(request, "Nothing was closed: " + " ".join(error.messages))
    else:
        opened = f" and the {following.kind} phase has begun" if following else ""
        messages.success(request, f"The {kind} phase is closed{opened}.")
    return redirect("web:organize-phases", slug=slug)


@login_required
@require_POST
def phase_extend(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    phase = _phase(shared_task, kind)
    form = PhaseExtendForm(request.POST, prefix=f"{kind}-extend")
    if form.is_valid():
        try:
            task_services.phase_extend(phase=phase, actor=request.user, **form.cleaned_data)
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"The {kind} deadline is extended.")
            return redirect("web:organize-phases", slug=slug)
    return _phases_page(request, shared_task, viewer, bound={(kind, "extend"): form}, status=400)


# --- Datasets and imports ------------------------------------------------------------------


def _datasets_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    *,
    form: ExamplesImportForm | None = None,
    rejected: dict[str, Any] | None = None,
    status: int = 200,
) -> HttpResponse:
    return organize_render(
        request,
        "web/organize/datasets.html",
        shared_task,
        viewer,
        "datasets",
        status=status,
        datasets=task_selectors.dataset_list(shared_task=shared_task),
        imports=task_selectors.audit_log_list(shared_task=shared_task, action="examples.import"),
        form=form or ExamplesImportForm(),
        rejected=rejected,
    )


@login_required
def datasets(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    return _datasets_page(request, shared_task, viewer)


@file_upload(
    limit_setting="EXAMPLES_UPLOAD_MAX_BYTES", what=EXAMPLES_FILE, back="web:organize-datasets"
)
def examples_import(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    form = ExamplesImportForm(request.POST, request.FILES)
    rejected = None
    if form.is_valid():
        try:
            report = form.examples_import(shared_task=shared_task, actor=request.user)
        except ValidationError as error:
            rejected = add_upload_error(form, error)
        else:
            messages.success(request, report.summary_text())
            if report.duplicates:
                messages.warning(request, report.duplicates_text())
            return redirect("web:organize-datasets", slug=slug)
    return _datasets_page(request, shared_task, viewer, form=form, rejected=rejected, status=400)


# --- Teams, systems, contests --------------------------------------------------------------


def _teams_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    *,
    form: TaskInvitationForm | None = None,
    status: int = 200,
) -> HttpResponse:
    return organize_render(
        request,
        "web/organize/teams.html",
        shared_task,
        viewer,
        "teams",
        status=status,
        teams=task_selectors.team_list_with_members(shared_task=shared_task),
        task_invitations=task_selectors.task_invitation_list(shared_task=shared_task),
        invitation_form=form or TaskInvitationForm(),
    )


@login_required
def teams(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    return _teams_page(request, shared_task, viewer)


@login_required
@require_POST
def task_invitation_create(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    form = TaskInvitationForm(request.POST)
    if form.is_valid():
        try:
            task_services.task_invitation_create(
                shared_task=shared_task, actor=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(
                request, "A new link into the task is below: send it to whom it is for."
            )
            return redirect("web:organize-teams", slug=slug)
    return _teams_page(request, shared_task, viewer, form=form, status=400)


@login_required
@require_POST
def task_invitation_revoke(request: HttpRequest, slug: str, invitation_id: int) -> HttpResponse:
    shared_task, _ = organizer_page(request, slug)
    invitation = (
        task_selectors.task_invitation_list(shared_task=shared_task)
        .filter(id=invitation_id)
        .first()
    )
    if invitation is None:
        raise Http404("No such link into this task.")
    asked = confirm_first(
        request,
        Confirmation(
            title="Revoke this link into the task?",
            consequence="The link stops working at once for whoever has it; "
            + _let_in(invitation.uses),
            button="Revoke the link",
            back_url=reverse("web:organize-teams", kwargs={"slug": slug}),
        ),
    )
    if asked is not None:
        return asked
    task_services.task_invitation_revoke(invitation=invitation, actor=request.user)
    messages.success(request, "The link is revoked: whoever it let in keeps their access.")
    return redirect("web:organize-teams", slug=slug)


def _let_in(uses: int) -> str:
    if uses == 0:
        return "nobody has used it yet."
    people = "account it already let in keeps its" if uses == 1 else "accounts it let in keep their"
    return f"the {uses} {people} access."


@login_required
def systems(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    return organize_render(
        request,
        "web/organize/systems.html",
        shared_task,
        viewer,
        "systems",
        systems=system_selectors.system_list(user=request.user, shared_task=shared_task),
    )


def _contests_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    *,
    bound: AdjudicateForm | None = None,
    bound_id: int | None = None,
    status: int = 200,
) -> HttpResponse:
    contests = pair_selectors.contest_list(user=request.user, shared_task=shared_task)
    rows = [
        {
            "contest": contest,
            "form": bound
            if contest.id == bound_id
            else AdjudicateForm(shared_task=shared_task, prefix=f"contest-{contest.id}"),
        }
        for contest in contests
    ]
    return organize_render(
        request,
        "web/organize/contests.html",
        shared_task,
        viewer,
        "contests",
        status=status,
        open_rows=[row for row in rows if row["contest"].status == Contest.Status.OPEN],
        decided_rows=[row for row in rows if row["contest"].status != Contest.Status.OPEN],
    )


@login_required
def contests(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    return _contests_page(request, shared_task, viewer)


@login_required
@require_POST
def contest_decide(request: HttpRequest, slug: str, contest_id: int) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    contest = (
        pair_selectors.contest_list(user=request.user, shared_task=shared_task)
        .filter(id=contest_id)
        .first()
    )
    if contest is None:
        raise Http404("No contest matches this address.")
    form = AdjudicateForm(request.POST, shared_task=shared_task, prefix=f"contest-{contest.id}")
    if form.is_valid():
        try:
            pair_services.contest_adjudicate(
                contest=contest, actor=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"Contest {contest.id} is decided.")
            return redirect("web:organize-contests", slug=slug)
    return _contests_page(request, shared_task, viewer, bound=form, bound_id=contest.id, status=400)
