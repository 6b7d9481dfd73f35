"""Builder pages: a team's systems, one system with its versions, uploads, activation."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks.models import SharedTask, Team
from bibi.sharedtasks.selectors import Viewer
from bibi.systems import predictions as system_predictions
from bibi.systems import selectors as system_selectors
from bibi.systems import services as system_services
from bibi.systems.models import System, SystemVersion
from bibi.systems.services import ARCHIVE, PREDICTIONS_FILE
from bibi.web.access import (
    file_upload,
    refusal_now,
    require_team,
    task_and_viewer,
    wants_json,
)
from bibi.web.forms import add_service_error, add_upload_error
from bibi.web.system_forms import ArchiveUploadForm, PredictionsUploadForm, SystemCreateForm

PENDING = (SystemVersion.Status.QUEUED, SystemVersion.Status.RUNNING)


@login_required
def systems(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    require_team(viewer, Team.Kind.BUILDER)
    return _systems_page(request, shared_task, viewer, SystemCreateForm())


def _systems_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    form: SystemCreateForm,
    status: int = 200,
) -> HttpResponse:
    context = {
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "systems",
        "systems": system_selectors.system_list(user=request.user, shared_task=shared_task),
        "form": form,
    }
    return render(request, "web/builders/systems.html", context, status=status)


@login_required
@require_POST
def system_create(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = task_and_viewer(request, slug)
    team = require_team(viewer, Team.Kind.BUILDER)
    form = SystemCreateForm(request.POST)
    if form.is_valid():
        try:
            system = system_services.system_create(
                team=team, actor=request.user, **form.cleaned_data
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, f"The system {system.name} is created.")
            return redirect("web:system", slug=slug, system_id=system.id)
    return _systems_page(request, shared_task, viewer, form, status=400)


def _system_for(
    request: HttpRequest, slug: str, system_id: int
) -> tuple[SharedTask, Viewer, System]:
    shared_task, viewer = task_and_viewer(request, slug)
    system = system_selectors.system_get(
        user=request.user, shared_task=shared_task, system_id=system_id
    )
    if system is None:
        raise Http404("No system matches this address.")
    return shared_task, viewer, system


def _system_page(
    request: HttpRequest,
    shared_task: SharedTask,
    viewer: Viewer,
    system: System,
    *,
    status: int = 200,
    **forms: Any,
) -> HttpResponse:
    versions = system_selectors.versions_of(system=system)
    is_member = viewer.team is not None and viewer.team.id == system.team_id
    upload_require = (
        system_services.system_version_upload_require
        if system.kind == System.Kind.HOSTED
        else system_predictions.system_predictions_upload_require
    )
    context = {
        "upload_closed": refusal_now(lambda: upload_require(system=system, actor=request.user))
        if is_member
        else None,
        "uploads_left": system_selectors.uploads_left(system=system),
        "shared_task": shared_task,
        "viewer": viewer,
        "tab": "systems",
        "system": system,
        "versions": versions,
        "is_member": is_member,
        "pending": any(version.status in PENDING for version in versions),
        "upload_max_bytes": settings.SYSTEM_UPLOAD_MAX_BYTES,
        "pair_window": pair_selectors.pair_predictions_window(shared_task=shared_task),
        "archive_form": forms.get("archive_form") or ArchiveUploadForm(),
        "predictions_form": forms.get("predictions_form")
        or PredictionsUploadForm(shared_task=shared_task),
        "rejected": forms.get("rejected"),
    }
    return render(request, "web/builders/system.html", context, status=status)


@login_required
def system_detail(request: HttpRequest, slug: str, system_id: int) -> HttpResponse:
    shared_task, viewer, system = _system_for(request, slug, system_id)
    return _system_page(request, shared_task, viewer, system)


def _uploaded_message(version: SystemVersion) -> str:
    """What became of an upload, read back after it: a worker (or the embedded backend, in
    this very request) may have validated it already."""
    version.refresh_from_db(fields=["status"])
    Status = SystemVersion.Status
    state = {
        Status.QUEUED: "queued: this page follows its validation",
        Status.RUNNING: "being validated: this page follows it",
        Status.READY: "validated already: it is ready",
        Status.FAILED: "validated already: it was refused, for the reason below",
    }[Status(version.status)]
    return f"Version {version.number} is uploaded and {state}."


@file_upload(limit_setting="SYSTEM_UPLOAD_MAX_BYTES", what=ARCHIVE, back="web:system")
def version_upload(request: HttpRequest, slug: str, system_id: int) -> HttpResponse:
    shared_task, viewer, system = _system_for(request, slug, system_id)
    form = ArchiveUploadForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            version = system_services.system_version_upload(
                system=system,
                actor=request.user,
                archive=form.cleaned_data["archive"],
                label_mapping=form.cleaned_data["label_mapping"],
            )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            messages.success(request, _uploaded_message(version))
            location = reverse("web:system", kwargs={"slug": slug, "system_id": system.id})
            if wants_json(request):
                return JsonResponse({"location": location})
            return redirect(location)
    if wants_json(request):
        errors = [str(message) for messages in form.errors.values() for message in messages]
        return JsonResponse({"errors": errors}, status=400)
    return _system_page(request, shared_task, viewer, system, archive_form=form, status=400)


@file_upload(limit_setting="PREDICTIONS_UPLOAD_MAX_BYTES", what=PREDICTIONS_FILE, back="web:system")
def predictions_upload(request: HttpRequest, slug: str, system_id: int) -> HttpResponse:
    shared_task, viewer, system = _system_for(request, slug, system_id)
    form = PredictionsUploadForm(request.POST, request.FILES, shared_task=shared_task)
    rejected = None
    if form.is_valid():
        try:
            version = system_predictions.system_predictions_upload(
                system=system,
                actor=request.user,
                files=[(upload.name, upload.read()) for upload in form.cleaned_data["file"]],
                source=form.cleaned_data["source"],
                label_map=form.cleaned_data.get("label_map"),
                file_format=form.cleaned_data["format"],
            )
        except ValidationError as error:
            rejected = add_upload_error(form, error)
        else:
            outside = version.outside_label_count
            messages.success(
                request,
                f"The predictions are stored in version {version.number}."
                + (
                    f" {outside} of them name a label outside this task's ({', '.join(shared_task.labels)}):"
                    " they are kept as given and counted wrong."
                    if outside
                    else ""
                )
                + (
                    f" {version.repeated_predictions} "
                    + ("row repeats" if version.repeated_predictions == 1 else "rows repeat")
                    + " a prediction with the same answer: each item is counted once."
                    if version.repeated_predictions
                    else ""
                ),
            )
            return redirect("web:system", slug=slug, system_id=system.id)
    return _system_page(
        request,
        shared_task,
        viewer,
        system,
        predictions_form=form,
        rejected=rejected,
        status=400,
    )


@login_required
@require_POST
def version_activate(request: HttpRequest, slug: str, system_id: int, number: int) -> HttpResponse:
    _, _, system = _system_for(request, slug, system_id)
    version = system.versions.filter(number=number).first()
    if version is None:
        raise Http404("No version matches this address.")
    try:
        system_services.system_version_activate(version=version, actor=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, f"Version {number} is now the active version.")
    return redirect("web:system", slug=slug, system_id=system.id)
