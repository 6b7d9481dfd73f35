"""Organizer pages: the task's settings (with presets) and its four phases in one form.

Both save through the services the API uses (``shared_task_update``, ``phases_change``):
one path, the same refusals (shown beside the field), the same audit entries.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect

from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import SharedTask
from bibi.web.forms import add_service_error
from bibi.web.organize_forms import ScheduleForm, TaskSettingsForm
from bibi.web.views.organize_pages import organize_render, organizer_page


def _preset_from(
    request: HttpRequest, form: TaskSettingsForm
) -> tuple[task_services.Preset | None, str]:
    """The preset asked for (``?preset=KEY``), filled into ``form``, or why there is none."""
    key = request.GET.get("preset", "")
    if not key:
        return None, ""
    try:
        preset = task_services.preset_get(key)
    except ValidationError as error:
        return None, " ".join(error.messages)
    form.initial = {**form.initial, **TaskSettingsForm.values_of_preset(preset), "preset": key}
    return preset, ""


def _settings_save(request: HttpRequest, shared_task: SharedTask, form: TaskSettingsForm) -> bool:
    changes = form.changes()
    if not changes:
        messages.info(request, "Nothing changed: every setting already had that value.")
        return True
    preset = form.cleaned_data.get("preset") or ""
    try:
        task_services.shared_task_update(
            shared_task=SharedTask.objects.get(pk=shared_task.pk),
            actor=request.user,
            via=f"preset:{preset}" if preset in task_services.PRESETS else None,
            **changes,
        )
    except ValidationError as error:
        add_service_error(form, error)
        return False
    names = ", ".join(name.replace("_", " ") for name in changes)
    messages.success(request, f"Settings saved ({names}); the change is in the audit log.")
    return True


@login_required
def settings(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    preset, preset_error = None, ""
    if request.method == "POST":
        form = TaskSettingsForm(request.POST, shared_task=shared_task)
        if form.is_valid() and _settings_save(request, shared_task, form):
            return redirect("web:organize-settings", slug=slug)
    else:
        form = TaskSettingsForm(shared_task=shared_task)
        preset, preset_error = _preset_from(request, form)
    changes: dict[str, Any] = (
        task_services.preset_changes(shared_task=shared_task, preset=preset) if preset else {}
    )
    return organize_render(
        request,
        "web/organize/settings.html",
        shared_task,
        viewer,
        "settings",
        status=400 if form.errors or preset_error else 200,
        form=form,
        preset_error=preset_error,
        presets=task_services.PRESETS.values(),
        preset=preset,
        preset_changes=[
            (form[name].label, change["from"], change["to"]) for name, change in changes.items()
        ],
    )


@login_required
def schedule(request: HttpRequest, slug: str) -> HttpResponse:
    shared_task, viewer = organizer_page(request, slug)
    form = ScheduleForm(request.POST or None, shared_task=shared_task)
    if request.method == "POST" and form.is_valid():
        changes = form.changes()
        try:
            if changes:
                task_services.phases_change(
                    shared_task=shared_task, actor=request.user, changes=changes
                )
        except ValidationError as error:
            add_service_error(form, error)
        else:
            kinds = ", ".join(change.kind for change in changes)
            messages.success(
                request,
                f"The schedule is saved ({kinds} changed)." if changes else "Nothing changed.",
            )
            return redirect("web:organize-schedule", slug=slug)
    return organize_render(
        request,
        "web/organize/schedule.html",
        shared_task,
        viewer,
        "schedule",
        status=400 if form.errors else 200,
        form=form,
    )
