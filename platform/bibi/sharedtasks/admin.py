from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.csrf import csrf_exempt, csrf_protect

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
from bibi.tasktypes import example_formats
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
    """The phases of a task, edited together; checked and written by the services
    (``services.phases_change_check``, ``services.phases_change``), like the API's moves."""

    def phase_changes(self) -> list[services.PhaseChange]:
        """What the forms change: one ``PhaseChange`` per new, moved or deleted phase."""
        ids = [form.instance.pk for form in self.forms if form.instance.pk]
        # The forms' instances already carry the submitted values: compare with the rows.
        stored = {phase.pk: phase for phase in Phase.objects.filter(pk__in=ids)}
        changes = []
        for form in self.forms:
            data = form.cleaned_data
            old = stored.get(form.instance.pk)
            if not data or (old is None and data.get("DELETE")):
                continue
            if old is not None and not form.has_changed() and not data.get("DELETE"):
                continue

            # Unchanged fields keep the stored value: the form's widgets drop microseconds.
            def value(field: str, old: Phase | None = old, form: forms.Form = form):
                if old is not None and field not in form.changed_data:
                    return getattr(old, field)
                return form.cleaned_data.get(field)

            changes.append(
                services.PhaseChange(
                    phase=old,
                    kind=value("kind"),
                    starts_at=value("starts_at"),
                    ends_at=value("ends_at"),
                    delete=bool(data.get("DELETE")),
                )
            )
        return changes

    def clean(self) -> None:
        super().clean()
        if any(self.errors):
            return
        try:
            services.phases_change_check(shared_task=self.instance, changes=self.phase_changes())
        except ValidationError as error:
            raise ValidationError(error.messages) from None

    def save(self, commit: bool = True) -> list[Phase]:
        raise NotImplementedError("Phases are saved by SharedTaskAdmin.save_formset.")


class PhaseInline(admin.TabularInline):
    model = Phase
    formset = PhaseFormSet
    extra = 0


class OrganizerFormSet(forms.BaseInlineFormSet):
    def clean(self) -> None:
        super().clean()
        for form in self.forms:
            user = form.cleaned_data.get("user") if form.cleaned_data else None
            if self.instance.pk and form.instance.pk is None and user is not None:
                try:
                    services.organizer_add_check(shared_task=self.instance, user=user)
                except ValidationError as error:
                    form.add_error("user", error)


class OrganizerInline(admin.TabularInline):
    """Organizers are added through ``services.organizer_add`` (audited); none is removed
    or swapped here."""

    model = Organizer
    formset = OrganizerFormSet
    extra = 0
    autocomplete_fields = ["user"]
    can_delete = False

    def has_change_permission(self, request, obj=None):
        return False


class SharedTaskAdminForm(forms.ModelForm):
    """Refuses what the service would (``services.shared_task_changes_check``) next to the
    fields, before anything is saved."""

    def clean(self):
        data = super().clean()
        if self.instance.pk and self.changed_data:
            changes = {field: data.get(field) for field in self.changed_data}
            services.shared_task_changes_check(shared_task=self.instance, changes=changes)
        return data


class ExamplesImportForm(forms.Form):
    split = forms.ChoiceField(choices=Dataset.Split.choices)
    file = forms.FileField(
        help_text="CSV or TSV with a header row, JSON Lines, or SST 'LABEL sentence' lines; "
        "span tasks: QA-SRL .qa or 2017 TSV files, or CSV / JSON Lines items. UTF-8, cp1252 "
        "or Mac Roman."
    )
    file_format = forms.ChoiceField(
        label="Format",
        choices=[
            ("", "From the file name"),
            *((name, name) for name in example_formats()),
        ],
        required=False,
    )
    drop_unmatched = forms.BooleanField(
        required=False,
        help_text="Span tasks: leave out (and report) answers that are not spans of their "
        "sentence, and items left without one, instead of refusing the file.",
    )
    partial = forms.BooleanField(
        required=False,
        help_text="Store the rows that pass and list every refused line, instead of refusing "
        "the whole file.",
    )
    label_map = forms.CharField(
        required=False,
        help_text="Translate the file's labels, e.g. 0=negative,1=positive. "
        "Leave empty if the file already uses the task's labels.",
    )
    id_column = forms.CharField(
        initial="id", help_text="Ignored for SST lines: ids are line numbers."
    )
    text_column = forms.CharField(
        required=False, help_text="Empty: the task type's (text; a sentence pair's premise)."
    )
    text_b_column = forms.CharField(
        required=False,
        label="Second text column",
        help_text="Items of two texts: empty for the task type's (a sentence pair's hypothesis).",
    )
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
            text_column=data["text_column"] or None,
            text_columns={"text_b": data["text_b_column"]} if data["text_b_column"] else None,
            label_column=data["label_column"],
            drop_unmatched=data["drop_unmatched"],
            partial=data["partial"],
        )


@admin.register(SharedTask)
class SharedTaskAdmin(OrganizerScopedAdmin):
    list_display = ["name", "slug", "task_type", "is_public", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [PhaseInline, OrganizerInline]
    form = SharedTaskAdminForm
    shared_task_path = ""

    def get_prepopulated_fields(self, request, obj=None):
        return {} if obj else self.prepopulated_fields

    def get_readonly_fields(self, request, obj=None):
        # The slug is in every URL; it is chosen once.
        return ["slug"] if obj else []

    def save_model(self, request: HttpRequest, obj: SharedTask, form, change: bool) -> None:
        """Through the services, as the API: created with its creator as organizer, changed
        field by field, each audited (``via: admin``)."""
        if not change:
            services.shared_task_store_new(creator=request.user, shared_task=obj, via="admin")
            return
        if form.changed_data:
            stored = SharedTask.objects.get(pk=obj.pk)
            changes = {field: form.cleaned_data.get(field) for field in form.changed_data}
            services.shared_task_update(
                shared_task=stored, actor=request.user, via="admin", **changes
            )

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        shared_task = form.instance
        if formset.model is Phase:
            services.phases_change(
                shared_task=shared_task,
                actor=request.user,
                changes=formset.phase_changes(),
                via="admin",
            )
        elif formset.model is Organizer:
            for inline in formset.forms:
                user = inline.cleaned_data.get("user")
                if inline.instance.pk is None and user is not None:
                    services.organizer_add(shared_task=shared_task, actor=request.user, user=user)
        else:
            super().save_formset(request, form, formset, change)
            return
        # What the admin's change message reads; the audit log is the record.
        formset.new_objects, formset.changed_objects, formset.deleted_objects = [], [], []

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
            try:
                report = form.examples_import(shared_task=shared_task, actor=request.user)
            except ExamplesImportRejected as error:
                rejected = error
            except ValidationError as error:
                # The service names the argument at fault (label_map, file_format): the
                # form has a field of each name, so the message lands next to it.
                form.add_error(None, error)
            else:
                messages.success(request, report.summary_text())
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


class TeamAdminForm(forms.ModelForm):
    """A name or alias typed here follows the name rule of the services
    (``services.team_name_clean``): normalised, no invisible or look-alike character, never
    looking like another team's name or alias."""

    def clean(self):
        data = super().clean()
        shared_task = data.get("shared_task") or getattr(self.instance, "shared_task", None)
        if shared_task is None:
            return data
        team = self.instance if self.instance.pk else None
        for field in ("name", "alias"):
            if field in self.changed_data and data.get(field):
                try:
                    data[field] = services.team_name_clean(
                        shared_task=shared_task, name=data[field], team=team
                    )
                except ValidationError as error:
                    self.add_error(field, error.message_dict["name"])
        return data


@admin.register(Team)
class TeamAdmin(OrganizerScopedAdmin):
    form = TeamAdminForm
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
