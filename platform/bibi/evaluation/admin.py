"""Admin for organizers: scoring runs and snapshots to read, publication as an action.

Runs, chunks and snapshots are written by the services only, so the admin shows them
read-only. A cell failure may be deleted: the next run then computes that cell again.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from bibi.evaluation import services
from bibi.evaluation.models import CellChunk, CellFailure, ScoringRun, Snapshot
from bibi.sharedtasks.admin import OrganizerScopedAdmin


class ReadOnlyAdmin(OrganizerScopedAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(ScoringRun)
class ScoringRunAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "shared_task",
        "trigger",
        "status",
        "cells_done",
        "cells_needed",
        "created_at",
    ]
    list_filter = ["status", "trigger"]


@admin.register(CellChunk)
class CellChunkAdmin(ReadOnlyAdmin):
    list_display = ["id", "shared_task", "system_version", "source", "size", "sends", "done_at"]
    list_filter = ["source"]
    exclude = ["items"]


@admin.register(CellFailure)
class CellFailureAdmin(ReadOnlyAdmin):
    shared_task_path = "system_version__system__shared_task"
    list_display = ["system_version", "source", "text", "reason", "created_at"]
    list_filter = ["source"]


@admin.register(Snapshot)
class SnapshotAdmin(ReadOnlyAdmin):
    list_display = ["id", "shared_task", "created_at", "published_at", "code_version"]
    exclude = ["tables"]
    actions = ["publish"]

    @admin.action(description="Publish (make it the task's leaderboard)")
    def publish(self, request: HttpRequest, queryset: QuerySet[Snapshot]) -> None:
        published = 0
        for snapshot in queryset:
            try:
                services.snapshot_publish(snapshot=snapshot, actor=request.user)
            except services.PublishUnconfirmed as refusal:
                # The admin has no confirmation: the scoring page has one.
                self.message_user(
                    request,
                    f"Snapshot {snapshot.id} is not published: {' '.join(refusal.messages)} "
                    "Publish it from the task's scoring page, which asks to confirm.",
                    messages.ERROR,
                )
            else:
                published += 1
        self.message_user(request, f"Published {published} snapshot(s).", messages.SUCCESS)
