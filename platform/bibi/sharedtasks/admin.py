from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.files import FORMATS
from bibi.sharedtasks.importing import ExamplesImportRejected, examples_import, label_map_parse
from bibi.sharedtasks.models import (
    AuditLogEntry,
    Dataset,
    Example,
    Invitation,
    Membership,
    Organizer,
    Phase,
    SharedTask,
    Team,
)


class PhaseInline(admin.TabularInline):
    model = Phase
    extra = 0


class OrganizerInline(admin.TabularInline):
    model = Organizer
    extra = 0
    autocomplete_fields = ["user"]


class ExamplesImportForm(forms.Form):
    split = forms.ChoiceField(choices=Dataset.Split.choices)
    file = forms.FileField(
        help_text="CSV or TSV with a header row, JSON Lines, or SST 'LABEL sentence' lines; "
        "UTF-8, cp1252 or Mac Roman."
    )
    file_format = forms.ChoiceField(
        label="Format",
        choices=[("", "From the file name"), *((name, name) for name in FORMATS)],
        required=False,
    )
    label_map = forms.CharField(
        required=False,
        help_text="Translate the file's labels, e.g. 0=negative,1=positive. "
        "Leave empty if the file already uses the task's labels.",
    )
    id_column = forms.CharField(
        initial="id", help_text="Ignored for SST lines: ids are line numbers."
    )
    text_column = forms.CharField(initial="text")
    label_column = forms.CharField(initial="label")

    def clean_label_map(self) -> dict[str, str]:
        return label_map_parse(self.cleaned_data["label_map"])


@admin.register(SharedTask)
class SharedTaskAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "task_type", "is_public", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [PhaseInline, OrganizerInline]

    def get_urls(self):
        return [
            path(
                "<path:object_id>/import-examples/",
                self.admin_site.admin_view(self.import_examples_view),
                name="sharedtasks_sharedtask_import_examples",
            ),
            *super().get_urls(),
        ]

    def import_examples_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        shared_task = self.get_object(request, object_id)
        if shared_task is None:
            raise Http404("No such shared task.")
        # The service checks this too; checking first spares a non-organizer the form.
        if not selectors.is_organizer(user=request.user, shared_task=shared_task):
            raise PermissionDenied("Only the organizers of this shared task may import examples.")
        rejected: ExamplesImportRejected | None = None
        form = ExamplesImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                # A dataset created for a rejected file goes with it: nothing is stored.
                with transaction.atomic():
                    dataset = services.dataset_get_or_create(
                        shared_task=shared_task, split=form.cleaned_data["split"]
                    )
                    report = examples_import(
                        dataset=dataset,
                        actor=request.user,
                        data=upload.read(),
                        filename=upload.name,
                        file_format=form.cleaned_data["file_format"] or None,
                        label_map=form.cleaned_data["label_map"] or None,
                        id_column=form.cleaned_data["id_column"],
                        text_column=form.cleaned_data["text_column"],
                        label_column=form.cleaned_data["label_column"],
                    )
            except ExamplesImportRejected as error:
                rejected = error
            except ValidationError as error:
                # The service names the argument at fault (label_map, file_format): the
                # form has a field of each name, so the message lands next to it.
                form.add_error(None, error)
            else:
                messages.success(
                    request,
                    f"Imported {report.created} examples into the {dataset.split} dataset "
                    f"from {report.filename} ({report.file_format}, {report.encoding}).",
                )
                # Organizers may import without the admin's model permissions on tasks.
                if self.has_view_or_change_permission(request, shared_task):
                    back = "admin:sharedtasks_sharedtask_change"
                else:
                    back = "admin:sharedtasks_sharedtask_import_examples"
                return HttpResponseRedirect(reverse(back, args=[shared_task.pk]))
        context = {
            **self.admin_site.each_context(request),
            "title": f"Import examples into {shared_task}",
            "opts": self.opts,
            "original": shared_task,
            "form": form,
            "rejected": rejected,
        }
        return TemplateResponse(
            request, "admin/sharedtasks/sharedtask/import_examples.html", context
        )


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin):
    list_display = ["shared_task", "split", "created_at"]
    list_filter = ["split"]


@admin.register(Example)
class ExampleAdmin(admin.ModelAdmin):
    list_display = ["external_id", "dataset", "label", "text"]
    list_filter = ["dataset__shared_task", "dataset__split"]
    search_fields = ["external_id", "text"]
    list_select_related = ["dataset__shared_task"]


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ["user", "role", "joined_at"]
    readonly_fields = ["joined_at"]


@admin.register(Team)
class TeamAdmin(admin.ModelAdmin):
    list_display = ["name", "shared_task", "kind", "is_anonymous", "alias"]
    list_filter = ["kind", "shared_task"]
    search_fields = ["name", "alias"]
    inlines = [MembershipInline]


@admin.register(Invitation)
class InvitationAdmin(admin.ModelAdmin):
    list_display = ["team", "created_by", "created_at", "expires_at", "accepted_by", "revoked_at"]
    readonly_fields = ["token"]


@admin.register(AuditLogEntry)
class AuditLogEntryAdmin(admin.ModelAdmin):
    list_display = ["created_at", "shared_task", "actor", "action", "target"]
    list_filter = ["action", "shared_task"]

    # The audit log is a record, not a document: nobody edits or deletes it.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
