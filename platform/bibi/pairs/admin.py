"""Read-only admin views of pair sets, pairs and contests.

Pairs change only through the services (submission is checked, decisions are audited), so
the admin shows them and changes nothing.
"""

from __future__ import annotations

from django.contrib import admin

from bibi.pairs.models import Contest, LabelValidation, Pair, PairSet
from bibi.sharedtasks.admin import OrganizerScopedAdmin


class ReadOnlyAdmin(OrganizerScopedAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(PairSet)
class PairSetAdmin(ReadOnlyAdmin):
    list_display = ["id", "team", "shared_task", "status", "source", "is_final", "submitted_at"]
    list_filter = ["status", "source", "shared_task"]
    search_fields = ["team__name", "filename"]
    list_select_related = ["team", "shared_task"]


@admin.register(Pair)
class PairAdmin(ReadOnlyAdmin):
    shared_task_path = "pair_set__shared_task"
    list_display = ["id", "pair_set", "row", "variant_label", "effective_label", "is_excluded"]
    list_filter = ["is_excluded", "pair_set__shared_task"]
    search_fields = ["variant_text", "original_text", "source_id"]
    list_select_related = ["pair_set__team"]


@admin.register(Contest)
class ContestAdmin(ReadOnlyAdmin):
    shared_task_path = "pair__pair_set__shared_task"
    list_display = ["id", "pair", "origin", "team", "status", "created_at", "decided_at"]
    list_filter = ["status", "origin", "pair__pair_set__shared_task"]
    list_select_related = ["pair", "team"]


@admin.register(LabelValidation)
class LabelValidationAdmin(ReadOnlyAdmin):
    shared_task_path = "pair__pair_set__shared_task"
    list_display = ["id", "pair", "validator", "role", "status", "label", "unclear", "submitted_at"]
    list_filter = ["status", "role", "pair__pair_set__shared_task"]
    list_select_related = ["pair", "validator"]
