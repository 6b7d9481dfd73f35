from __future__ import annotations

from django.contrib import admin

from bibi.sharedtasks.admin import OrganizerScopedAdmin
from bibi.systems.models import Prediction, System, SystemVersion


class SystemVersionInline(admin.TabularInline):
    model = SystemVersion
    extra = 0
    fields = ["number", "status", "failure_reason", "dev_accuracy", "dev_macro_f1", "uploaded_at"]
    readonly_fields = fields
    can_delete = False


@admin.register(System)
class SystemAdmin(OrganizerScopedAdmin):
    list_display = ["name", "team", "shared_task", "kind", "active_version"]
    list_filter = ["kind", "shared_task"]
    search_fields = ["name", "team__name"]
    inlines = [SystemVersionInline]


@admin.register(SystemVersion)
class SystemVersionAdmin(OrganizerScopedAdmin):
    shared_task_path = "system__shared_task"
    list_display = ["system", "number", "status", "failure_reason", "dev_accuracy", "uploaded_at"]
    list_filter = ["status", "failure_reason"]
    readonly_fields = [
        "uuid",
        "archive_sha256",
        "archive_bytes",
        "archive_path",
        "model_dir",
        "attempts",
    ]


@admin.register(Prediction)
class PredictionAdmin(OrganizerScopedAdmin):
    shared_task_path = "system_version__system__shared_task"
    list_display = ["system_version", "source", "label", "lambda_max", "text"]
    list_filter = ["source"]
    list_select_related = ["system_version__system"]
