from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt, csrf_protect

from bibi.files import FORMATS
from bibi.labelmaps import label_map_parse
from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.importing import (
    EXAMPLES_FILE,
    ExamplesImportRejected,
    ExamplesImportReport,
    examples_import,
)
from bibi.sharedtasks.models import (
    AuditLogEntry,
    Dataset,
    Example,
    Invitation,
    Membership,
    Organizer,
    Phase,
    SharedTask,
    TaskAccess,
    TaskInvitation,
    Team,
)
from bibi.uploads import SizeLimitedUpload, UploadTooLarge


class OrganizerScopedAdmin(admin.ModelAdmin):
    """Staff who are not superusers see only the rows of the shared tasks they organize.

    ``shared_task_path`` is the lookup from this model to its SharedTask ("" for SharedTask
    itself). Drop-downs of shared tasks are narrowed the same way, so a form never lists a
    task its user does not organize.
    """

    shared_task_path = "shared_task"

    def scope(self, request: HttpRequest, queryset):
        if request.user.is_superuser:
            return queryset
        prefix = f"{self.shared_task_path}__" if self.shared_task_path else ""
        return queryset.filter(**{f"{prefix}organizer__user": request.user}).distinct()

    def get_queryset(self, request: HttpRequest):
        return self.scope(request, super().get_queryset(request))

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.related_model is SharedTask and not request.user.is_superuser:
            kwargs["queryset"] = SharedTask.objects.filter(organizer__user=request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)


class PhaseFormSet(forms.BaseInlineFormSet):
    """The same rules as the API: each phase ends after it starts, none overlap, in order,
    and what has happened stays (``services.phase_require_movable``, ``..._deletable``)."""

    def clean(self) -> None:
        super().clean()
        # Copies: a refused move takes its field out of the form's cleaned_data.
        kept = [
            dict(form.cleaned_data)
            for form in self.forms
            if form.cleaned_data and not form.cleaned_data.get("DELETE")
        ]
        self._keep_the_past()
        if any(not data.get("starts_at") or not data.get("ends_at") for data in kept):
            return
        plan = [services.PhasePlan(d["kind"], d["starts_at"], d["ends_at"]) for d in kept]
        kinds = [phase.kind for phase in plan]
        if len(set(kinds)) != len(kinds):
            raise ValidationError("A shared task has at most one phase of each kind.")
        for phase in plan:
            services.phase_plan_check(plan=plan, kind=phase.kind)

    def _keep_the_past(self) -> None:
        ids = [form.instance.pk for form in self.forms if form.instance.pk]
        # The forms' instances already carry the submitted values: compare with the rows.
        stored = {phase.pk: phase for phase in Phase.objects.filter(pk__in=ids)}
        now = timezone.now()
        for form in self.forms:
            old = stored.get(form.instance.pk)
            if old is None or not form.cleaned_data:
                continue
            if form.cleaned_data.get("DELETE") or "kind" in form.changed_data:
                services.phase_require_deletable(phase=old, now=now)
                continue
            # Unchanged fields keep the stored value: the form's widgets drop microseconds.
            moved = {
                field: form.cleaned_data.get(field) if field in form.changed_data else None
                for field in ("starts_at", "ends_at")
            }
            if not any(moved.values()):
                continue
            try:
                services.phase_require_movable(
                    phase=old,
                    starts_at=moved["starts_at"] or old.starts_at,
                    ends_at=moved["ends_at"] or old.ends_at,
                    now=now,
                )
            except ValidationError as error:
                form.add_error(None, error)


class PhaseInline(admin.TabularInline):
    model = Phase
    formset = PhaseFormSet
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

    def examples_import(self, *, shared_task: SharedTask, actor) -> ExamplesImportReport:
        """Run ``importing.examples_import`` on the valid form (the admin's page and the
        organizers' page both use it); raises as it does."""
        data = self.cleaned_data
        upload = data["file"]
        return examples_import(
            shared_task=shared_task,
            split=data["split"],
            actor=actor,
            data=upload.read(),
            filename=upload.name,
            file_format=data["file_format"] or None,
            label_map=data["label_map"] or None,
            id_column=data["id_column"],
            text_column=data["text_column"],
            label_column=data["label_column"],
        )


@admin.register(SharedTask)
class SharedTaskAdmin(OrganizerScopedAdmin):
    list_display = ["name", "slug", "task_type", "is_public", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [PhaseInline, OrganizerInline]
    shared_task_path = ""

    def get_prepopulated_fields(self, request, obj=None):
        return {} if obj else self.prepopulated_fields

    def get_readonly_fields(self, request, obj=None):
        # The slug is in every URL; it is chosen once.
        return ["slug"] if obj else []

    def save_model(self, request: HttpRequest, obj: SharedTask, form, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            Organizer.objects.get_or_create(shared_task=obj, user=request.user)
            services.audit_record(
                shared_task=obj,
                actor=request.user,
                action="shared_task.create",
                target=f"shared_task:{obj.slug}",
            )
        elif form.changed_data:
            details = {
                field: {
                    "from": _plain(form.initial.get(field)),
                    "to": _plain(form.cleaned_data.get(field)),
                }
                for field in form.changed_data
            }
            services.audit_record(
                shared_task=obj,
                actor=request.user,
                action="shared_task.update",
                target=f"shared_task:{obj.slug}",
                details={**details, "via": "admin"},
            )

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        if formset.model is not Phase:
            super().save_formset(request, form, formset, change)
            return
        shared_task = form.instance
        before = {p.pk: p for p in Phase.objects.filter(shared_task=shared_task)}
        deleted = [
            (f.instance.kind, f.instance.starts_at, f.instance.ends_at)
            for f in formset.deleted_forms
            if f.instance.pk
        ]
        super().save_formset(request, form, formset, change)
        # Deadlines matter to every team: a change made here is audited like one made by API.
        for phase in formset.new_objects + [obj for obj, _ in formset.changed_objects]:
            old = before.get(phase.pk)
            details = {
                "to": {
                    "starts_at": phase.starts_at.isoformat(),
                    "ends_at": phase.ends_at.isoformat(),
                },
                "via": "admin",
            }
            if old is not None:
                details["from"] = {
                    "starts_at": old.starts_at.isoformat(),
                    "ends_at": old.ends_at.isoformat(),
                }
            services.audit_record(
                shared_task=shared_task,
                actor=request.user,
                action="phase.update" if old else "phase.create",
                target=f"phase:{phase.kind}",
                details=details,
            )
        for kind, starts_at, ends_at in deleted:
            services.audit_record(
                shared_task=shared_task,
                actor=request.user,
                action="phase.delete",
                target=f"phase:{kind}",
                details={
                    "starts_at": starts_at.isoformat(),
                    "ends_at": ends_at.isoformat(),
                    "via": "admin",
                },
            )

    def get_urls(self):
        return [
            path(
                "<path:object_id>/import-examples/",
                # CSRF is checked inside, once the upload's size limit is in place: the
                # check reads the body.
                self.admin_site.admin_view(csrf_exempt(self.import_examples_upload)),
                name="sharedtasks_sharedtask_import_examples",
            ),
            *super().get_urls(),
        ]

    def import_examples_upload(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """Who may import is checked, and the size limit set, before the body is read."""
        shared_task = self.get_object(request, object_id)
        if shared_task is None:
            raise Http404("No such shared task.")
        # The service checks this too; checking first spares a non-organizer the form.
        if not selectors.is_organizer(user=request.user, shared_task=shared_task):
            raise PermissionDenied("Only the organizers of this shared task may import examples.")
        request.upload_handlers.insert(
            0,
            SizeLimitedUpload(
                request, limit=settings.EXAMPLES_UPLOAD_MAX_BYTES, what=EXAMPLES_FILE
            ),
        )
        try:
            return csrf_protect(self.import_examples_view)(request, shared_task)
        except UploadTooLarge as error:
            messages.error(request, error.messages[0])
            return self.import_examples_page(request, shared_task, ExamplesImportForm(), status=413)

    def import_examples_view(self, request: HttpRequest, shared_task: SharedTask) -> HttpResponse:
        rejected: ExamplesImportRejected | None = None
        form = ExamplesImportForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            split = form.cleaned_data["split"]
            try:
                report = form.examples_import(shared_task=shared_task, actor=request.user)
            except ExamplesImportRejected as error:
                rejected = error
            except ValidationError as error:
                # The service names the argument at fault (label_map, file_format): the
                # form has a field of each name, so the message lands next to it.
                form.add_error(None, error)
            else:
                messages.success(
                    request,
                    f"Imported {report.created} examples into the {split} dataset "
                    f"from {report.filename} ({report.file_format}, {report.encoding}).",
                )
                if report.duplicates:
                    messages.warning(request, report.duplicates_text())
                # Organizers may import without the admin's model permissions on tasks.
                if self.has_view_or_change_permission(request, shared_task):
                    back = "admin:sharedtasks_sharedtask_change"
                else:
                    back = "admin:sharedtasks_sharedtask_import_examples"
                return HttpResponseRedirect(reverse(back, args=[shared_task.pk]))
        return self.import_examples_page(request, shared_task, form, rejected=rejected)

    def import_examples_page(
        self,
        request: HttpRequest,
        shared_task: SharedTask,
        form: forms.Form,
        *,
        rejected: ExamplesImportRejected | None = None,
        status: int = 200,
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": f"Import examples into {shared_task}",
            "opts": self.opts,
            "original": shared_task,
            "form": form,
            "rejected": rejected,
        }
        return TemplateResponse(
            request, "admin/sharedtasks/sharedtask/import_examples.html", context, status=status
        )


def _plain(value):
    return value.isoformat() if hasattr(value, "isoformat") else value


@admin.register(Dataset)
class DatasetAdmin(OrganizerScopedAdmin):
    list_display = ["shared_task", "split", "created_at"]
    list_filter = ["split"]


@admin.register(Example)
class ExampleAdmin(OrganizerScopedAdmin):
    shared_task_path = "dataset__shared_task"
    list_display = ["external_id", "dataset", "label", "text"]
    list_filter = ["dataset__shared_task", "dataset__split"]
    search_fields = ["external_id", "text"]
    list_select_related = ["dataset__shared_task"]

    # Examples come in through imports only ("Import examples" on the task), which check
    # labels and duplicate texts, freeze the blind dev and starter sets, and are audited.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ["user", "role", "joined_at"]
    readonly_fields = ["joined_at"]


@admin.register(Team)
class TeamAdmin(OrganizerScopedAdmin):
    list_display = ["name", "shared_task", "kind", "is_anonymous", "alias"]
    list_filter = ["kind", "shared_task"]
    search_fields = ["name", "alias"]
    inlines = [MembershipInline]


@admin.register(Invitation)
class InvitationAdmin(OrganizerScopedAdmin):
    shared_task_path = "team__shared_task"
    list_display = ["team", "created_by", "created_at", "expires_at", "accepted_by", "revoked_at"]
    readonly_fields = ["token"]


@admin.register(TaskInvitation)
class TaskInvitationAdmin(OrganizerScopedAdmin):
    """Links into private tasks: created through the API (audited), revoked here or there."""

    list_display = ["shared_task", "note", "created_by", "created_at", "expires_at", "revoked_at"]
    list_filter = ["shared_task"]
    readonly_fields = [
        "shared_task",
        "token",
        "note",
        "created_by",
        "created_at",
        "expires_at",
        "max_uses",
        "revoked_at",
    ]
    actions = ["revoke"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected invitations")
    def revoke(self, request: HttpRequest, queryset) -> None:
        for invitation in queryset.select_related("shared_task"):
            try:
                services.task_invitation_revoke(invitation=invitation, actor=request.user)
            except PermissionDenied as error:
                messages.error(request, f"{invitation}: {error}")


@admin.register(TaskAccess)
class TaskAccessAdmin(OrganizerScopedAdmin):
    list_display = ["shared_task", "user", "invitation", "granted_at"]
    list_filter = ["shared_task"]
    list_select_related = ["shared_task", "user", "invitation"]

    # Granted by accepting an invitation, never by hand: the audit log tells who let whom in.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(AuditLogEntry)
class AuditLogEntryAdmin(OrganizerScopedAdmin):
    list_display = ["created_at", "shared_task", "actor", "action", "target"]
    list_filter = ["action", "shared_task"]

    # The audit log is a record, not a document: nobody edits or deletes it.
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
