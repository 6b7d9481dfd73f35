"""REST API of the evaluation app: snapshots, the leaderboard and its exports (runs: run_apis).

Thin: who may see what is ``selectors`` (organizers see runs and every snapshot; everyone
who can see the task sees the published ones; the item table waits for the results phase);
tables and files are ``exports``. Every table answers JSON, or CSV with ``?format=csv``; a
snapshot's ``export/`` is one zip of every table the caller may read, with a README.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.renderers import BaseRenderer, BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import paginated
from bibi.evaluation import exports, selectors, services, table_rows
from bibi.evaluation.models import Snapshot, SnapshotItem
from bibi.sharedtasks.apis.common import shared_task_for


class CSVRenderer(BaseRenderer):
    """``?format=csv``: the views hand it the finished CSV text."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context=None):
        if isinstance(data, str):
            return data.encode(self.charset)
        # An error answered to a CSV request: its JSON body, as text.
        return json.dumps(data, ensure_ascii=False).encode(self.charset)


RENDERERS = [JSONRenderer, BrowsableAPIRenderer, CSVRenderer]
FORMAT_PARAMETER = OpenApiParameter(
    "format", str, enum=["json", "csv"], description="csv: the table as a CSV file."
)
TABLE_PARAMETER = OpenApiParameter(
    "table",
    str,
    OpenApiParameter.PATH,
    enum=[name for name in exports.TABLES if name != "items"],
    description="Which table of the snapshot.",
)


# --- Snapshots and the leaderboard ----------------------------------------------------------


class SnapshotOutput(serializers.Serializer):
    """What a snapshot scored and with what (systems and teams named for the caller)."""

    id = serializers.IntegerField()
    run = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    published_at = serializers.DateTimeField(allow_null=True)
    code_version = serializers.CharField()
    settings = serializers.DictField()
    pair_set_ids = serializers.ListField(child=serializers.IntegerField())
    counts = serializers.DictField(child=serializers.IntegerField())
    validation = serializers.DictField(
        allow_null=True,
        help_text="Label validation: counts by state (in all and per team) and Krippendorff's "
        "alpha per task and per team; null for a snapshot from before it.",
    )
    systems = serializers.ListField(child=serializers.DictField())
    excluded_systems = serializers.ListField(child=serializers.DictField())
    tables = serializers.ListField(child=serializers.CharField())


class SnapshotPrediction(serializers.Serializer):
    system_id = serializers.IntegerField()
    system = serializers.CharField()
    original = serializers.CharField(allow_null=True)
    variant = serializers.CharField(allow_null=True)
    outcome = serializers.ChoiceField(choices=["held", "broken", "both_wrong", "unseen", "failed"])


class SnapshotItemOutput(serializers.Serializer):
    pair_id = serializers.IntegerField()
    team_id = serializers.IntegerField()
    team = serializers.CharField()
    original_id = serializers.CharField()
    original_text = serializers.CharField()
    original_label = serializers.CharField()
    variant_text = serializers.CharField()
    variant_label = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    flipped = serializers.BooleanField()
    broken = serializers.IntegerField()
    unseen = serializers.IntegerField()
    validation_state = serializers.CharField(help_text="Label validation; '' before it existed.")
    validation = serializers.DictField(help_text="Votes, flags and agreement of the pair.")
    predictions = SnapshotPrediction(many=True)

    def to_representation(self, item: SnapshotItem) -> dict[str, Any]:
        return table_rows.item_json(
            item, self.context["names"], self.context["vocabulary"], self.context["systems"]
        )


class _SnapshotView(APIView):
    """Finds the snapshot a URL names (by id, or the leaderboard) for whoever may see it."""

    permission_classes = [IsAuthenticatedOrReadOnly]
    renderer_classes = RENDERERS

    def snapshot_for(
        self, request: Request, slug: str, snapshot_id: int | None
    ) -> tuple[Snapshot, selectors.Viewer, selectors.Names]:
        shared_task = shared_task_for(request, slug)
        if snapshot_id is None:
            snapshot = selectors.leaderboard_snapshot(shared_task=shared_task)
            if snapshot is None:
                raise Http404("No results have been published for this shared task yet.")
        else:
            snapshot = get_object_or_404(
                selectors.snapshot_list(user=request.user, shared_task=shared_task), id=snapshot_id
            )
        viewer = selectors.Viewer.of(user=request.user, shared_task=shared_task)
        return snapshot, viewer, selectors.names_for(viewer=viewer, snapshot=snapshot)

    def summary(self, snapshot: Snapshot, viewer: selectors.Viewer, names: selectors.Names):
        body = exports.snapshot_summary(snapshot, names)
        body["tables"] = [
            name for name, table in exports.TABLES.items() if table.visible_to(viewer, snapshot)
        ]
        return body

    def table(self, request: Request, slug: str, table: str, snapshot_id: int | None = None):
        snapshot, viewer, names = self.snapshot_for(request, slug, snapshot_id)
        spec = exports.TABLES.get(table)
        if spec is None or not spec.visible_to(viewer, snapshot):
            raise Http404("No such table, or not yet visible.")
        if request.accepted_renderer.format == "csv":
            return csv_response(
                spec.as_csv(snapshot, names), f"{snapshot_name(snapshot)}-{table}.csv"
            )
        if table == "items":
            return paginated(
                self,
                request,
                selectors.snapshot_items(snapshot=snapshot),
                SnapshotItemOutput,
                names=names,
                vocabulary=snapshot.tables["vocabulary"],
                systems=snapshot.tables["item_systems"],
            )
        return Response({"table": table, "rows": spec.as_json(snapshot, names)})

    def export(self, request: Request, slug: str, snapshot_id: int | None = None) -> HttpResponse:
        snapshot, viewer, names = self.snapshot_for(request, slug, snapshot_id)
        response = HttpResponse(
            exports.snapshot_zip(snapshot, viewer, names), content_type="application/zip"
        )
        response["Content-Disposition"] = f'attachment; filename="{snapshot_name(snapshot)}.zip"'
        return response


def snapshot_name(snapshot: Snapshot) -> str:
    return f"{snapshot.shared_task.slug}-results-{snapshot.id}"


def csv_response(text: str, filename: str) -> Response:
    return Response(
        text,
        content_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{filename}"'},
    )


TABLE_RESPONSES = {
    200: OpenApiResponse(
        OpenApiTypes.OBJECT, description='{"table": name, "rows": [...]}; see the README.'
    ),
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="The table as CSV."),
}
ITEM_RESPONSES = {
    200: SnapshotItemOutput(many=True),
    (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="Every item, as CSV."),
}
ZIP_RESPONSES = {
    (200, "application/zip"): OpenApiResponse(
        OpenApiTypes.BINARY, description="Every table you may read as CSV, with a README."
    )
}


class SnapshotListOutput(serializers.Serializer):
    id = serializers.IntegerField()
    run = serializers.IntegerField(source="run_id")
    created_at = serializers.DateTimeField()
    published_at = serializers.DateTimeField(allow_null=True)
    code_version = serializers.CharField()
    counts = serializers.DictField(child=serializers.IntegerField())


class SnapshotListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=SnapshotListOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        snapshots = selectors.snapshot_list(user=request.user, shared_task=shared_task)
        return paginated(self, request, snapshots, SnapshotListOutput)


class SnapshotDetailApi(_SnapshotView):
    @extend_schema(responses=SnapshotOutput)
    def get(self, request: Request, slug: str, snapshot_id: int) -> Response:
        return Response(self.summary(*self.snapshot_for(request, slug, snapshot_id)))


CONFIRM_HELP = (
    "Publish a snapshot scored while pairs were still waiting for validators' votes (scored "
    "with their claimed labels, or left out): without it such a snapshot is refused with a "
    "400 that gives the counts, by team."
)


class SnapshotPublishApi(_SnapshotView):
    @extend_schema(
        request=None,
        responses=SnapshotOutput,
        parameters=[OpenApiParameter("confirm", bool, description=CONFIRM_HELP)],
    )
    def post(self, request: Request, slug: str, snapshot_id: int) -> Response:
        snapshot, _, _ = self.snapshot_for(request, slug, snapshot_id)
        body = request.data if isinstance(request.data, dict) else {}
        confirm = serializers.BooleanField().to_internal_value(
            request.query_params.get("confirm", body.get("confirm", False))
        )
        snapshot = services.snapshot_publish(snapshot=snapshot, actor=request.user, confirm=confirm)
        return Response(self.summary(*self.snapshot_for(request, slug, snapshot.id)))


class SnapshotTableApi(_SnapshotView):
    @extend_schema(
        parameters=[TABLE_PARAMETER, FORMAT_PARAMETER],
        responses=TABLE_RESPONSES,
        operation_id="snapshot_table_retrieve",
    )
    def get(self, request: Request, slug: str, snapshot_id: int, table: str) -> Response:
        return self.table(request, slug, table, snapshot_id)


class SnapshotItemsApi(_SnapshotView):
    @extend_schema(parameters=[FORMAT_PARAMETER], responses=ITEM_RESPONSES)
    def get(self, request: Request, slug: str, snapshot_id: int) -> Response:
        return self.table(request, slug, "items", snapshot_id)


class SnapshotExportApi(_SnapshotView):
    @extend_schema(responses=ZIP_RESPONSES)
    def get(self, request: Request, slug: str, snapshot_id: int) -> HttpResponse:
        return self.export(request, slug, snapshot_id)


class LeaderboardApi(_SnapshotView):
    @extend_schema(responses=SnapshotOutput, operation_id="leaderboard_retrieve")
    def get(self, request: Request, slug: str) -> Response:
        return Response(self.summary(*self.snapshot_for(request, slug, None)))


class LeaderboardTableApi(_SnapshotView):
    @extend_schema(
        parameters=[TABLE_PARAMETER, FORMAT_PARAMETER],
        responses=TABLE_RESPONSES,
        operation_id="leaderboard_table_retrieve",
    )
    def get(self, request: Request, slug: str, table: str) -> Response:
        return self.table(request, slug, table)


class LeaderboardItemsApi(_SnapshotView):
    @extend_schema(parameters=[FORMAT_PARAMETER], responses=ITEM_RESPONSES)
    def get(self, request: Request, slug: str) -> Response:
        return self.table(request, slug, "items")


class LeaderboardExportApi(_SnapshotView):
    @extend_schema(responses=ZIP_RESPONSES)
    def get(self, request: Request, slug: str) -> HttpResponse:
        return self.export(request, slug)
