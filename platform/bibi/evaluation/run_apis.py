"""The organizers' API of scoring runs: list them, ask for one (202), read one's progress and
failures. Thin: ``services.scoring_run_request_by_organizer`` checks who asks and makes the
request idempotent; ``selectors`` reads."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import paginated
from bibi.evaluation import selectors, services
from bibi.evaluation.models import ScoringRun
from bibi.sharedtasks.apis import require_organizer
from bibi.sharedtasks.apis.common import shared_task_for


class FailureOutput(serializers.Serializer):
    system_id = serializers.IntegerField()
    text = serializers.CharField()
    reason = serializers.CharField()


class ScoringRunOutput(serializers.ModelSerializer):
    requested_by = serializers.CharField(source="requested_by.username", default=None)
    snapshot = serializers.SerializerMethodField()

    class Meta:
        model = ScoringRun
        fields = [
            "id",
            "trigger",
            "requested_by",
            "status",
            "failure_reason",
            "cells_needed",
            "cells_done",
            "created_at",
            "progress_at",
            "scoring_started_at",
            "finished_at",
            "snapshot",
        ]

    def get_snapshot(self, run: ScoringRun) -> int | None:
        snapshot = getattr(run, "snapshot", None)
        return snapshot.id if snapshot else None


class ScoringRunDetailOutput(ScoringRunOutput):
    failures = serializers.SerializerMethodField()

    class Meta(ScoringRunOutput.Meta):
        fields = [*ScoringRunOutput.Meta.fields, "failures"]

    @extend_schema_field(FailureOutput(many=True))
    def get_failures(self, run: ScoringRun) -> list[dict[str, Any]]:
        return selectors.run_failures(run=run)


class ScoringRunListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=ScoringRunOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        runs = selectors.scoring_run_list(shared_task=shared_task).select_related("snapshot")
        return paginated(self, request, runs, ScoringRunOutput)

    @extend_schema(request=None, responses={202: ScoringRunOutput})
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        run = services.scoring_run_request_by_organizer(shared_task=shared_task, actor=request.user)
        # On the embedded default the run has already gone as far as it could.
        run.refresh_from_db()
        return Response(ScoringRunOutput(run).data, status=status.HTTP_202_ACCEPTED)


class ScoringRunDetailApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=ScoringRunDetailOutput)
    def get(self, request: Request, slug: str, run_id: int) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        run = get_object_or_404(
            selectors.scoring_run_list(shared_task=shared_task).select_related("snapshot"),
            id=run_id,
        )
        return Response(ScoringRunDetailOutput(run).data)
