from __future__ import annotations

from django.contrib import admin

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


@admin.register(SharedTask)
class SharedTaskAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "task_type", "is_public", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [PhaseInline, OrganizerInline]


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
