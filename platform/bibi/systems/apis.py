"""REST API for builder systems: create, upload versions, follow validation, self-report.

Only the team's members and the task's organizers see a system, its versions, status,
failure reasons and dev scores; to anyone else a system does not exist (404).
"""

from __future__ import annotations

import json

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import (
    FileRejectedOutput,
    FileUploadApi,
    LabelMapField,
    paginated,
)
from bibi.files import JsonRefused, json_parse
from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks import selectors as sharedtask_selectors
from bibi.sharedtasks.apis.common import shared_task_for
from bibi.sharedtasks.models import Team
from bibi.systems import predictions, selectors, services
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.systems.reported import PREDICTION_FORMATS

QUEUE_UNREACHABLE_NOTE = (
    "The queue is unreachable right now. Your upload is stored and counted; its validation "
    "starts by itself when the queue is back."
)


class SystemVersionOutput(serializers.ModelSerializer):
    counts_against_quota = serializers.BooleanField(read_only=True)
    note = serializers.SerializerMethodField(
        help_text="Set when the upload was stored but could not be sent to the queue yet."
    )

    def get_note(self, version: SystemVersion) -> str | None:
        return QUEUE_UNREACHABLE_NOTE if getattr(version, "queue_unreachable", False) else None

    class Meta:
        model = SystemVersion
        fields = [
            "number",
            "status",
            "failure_reason",
            "failure_detail",
            "note",
            "uploaded_at",
            "attempts",
            "started_at",
            "finished_at",
            "archive_name",
            "archive_sha256",
            "archive_bytes",
            "model_format",
            "label_mapping",
            "dev_accuracy",
            "dev_macro_f1",
            "dev_token_f1",
            "dev_count",
            "dev_answer_mode",
            "dev_answer_threshold",
            "truncated_count",
            "outside_label_count",
            "counts_against_quota",
        ]


class SystemOutput(serializers.ModelSerializer):
    team = serializers.IntegerField(source="team_id")
    active_version = serializers.IntegerField(
        source="active_version.number", allow_null=True, default=None
    )
    versions = serializers.SerializerMethodField()

    class Meta:
        model = System
        fields = ["id", "name", "kind", "team", "active_version", "created_at", "versions"]

    def get_versions(self, system: System) -> list[dict]:
        # From the versions prefetched by selectors.system_list where there are any.
        return SystemVersionOutput(selectors.versions_of(system=system), many=True).data


class SystemInput(serializers.Serializer):
    name = serializers.CharField(max_length=120)
    kind = serializers.ChoiceField(choices=System.Kind.choices)


class VersionUploadInput(serializers.Serializer):
    archive = serializers.FileField(
        help_text="A .zip or .tar.gz of a transformers or bibi-native model directory."
    )
    label_mapping = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text='JSON object: model label → task label, e.g. {"LABEL_0": "negative", "LABEL_1": "positive"}.',
    )

    def validate_label_mapping(self, raw: str):
        if not raw.strip():
            return {}
        try:
            return json_parse(raw)
        except JsonRefused as refused:
            raise serializers.ValidationError(f"The mapping {refused.reason}.") from None


class PredictionsUploadInput(serializers.Serializer):
    file = serializers.ListField(
        child=serializers.FileField(),
        min_length=1,
        help_text="One file, or several (repeat the part; one per breaker team) that together "
        "predict every item. CSV or TSV with a header row, JSON Lines, or the 2017 layout "
        "(no header: label<TAB>sentence per line): id,label for the blind dev set; text,label "
        "for pair texts.",
    )
    source = serializers.ChoiceField(choices=[Prediction.Source.BLIND_DEV, Prediction.Source.PAIRS])
    format = serializers.ChoiceField(
        choices=PREDICTION_FORMATS,
        required=False,
        default="",
        help_text="csv, tsv, jsonl or 2017 (label tasks); empty: judged by the content, "
        "never by the file's name.",
    )
    label_map = LabelMapField()


class StarterFisherOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="example.external_id")

    class Meta:
        model = Prediction
        fields = [
            "id",
            "text",
            "text_b",
            "label",
            "probabilities",
            "lambda_max",
            "hints",
            "truncated",
        ]


def system_for(request: Request, slug: str, system_id: int) -> System:
    shared_task = shared_task_for(request, slug)
    system = get_object_or_404(
        System.objects.select_related("team", "shared_task"), shared_task=shared_task, id=system_id
    )
    if not selectors.can_view_system(user=request.user, system=system):
        raise Http404("No system matches the given query.")
    return system


def version_for(system: System, number: int) -> SystemVersion:
    return get_object_or_404(SystemVersion, system=system, number=number)


class SystemListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(parameters=[OpenApiParameter("page", int)], responses=SystemOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        return paginated(
            self,
            request,
            selectors.system_list(user=request.user, shared_task=shared_task),
            SystemOutput,
        )

    @extend_schema(request=SystemInput, responses={201: SystemOutput})
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        membership = sharedtask_selectors.membership_get(user=request.user, shared_task=shared_task)
        if membership is None:
            raise PermissionDenied(
                "Only members of a builder team of this task may create systems."
            )
        serializer = SystemInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        system = services.system_create(
            team=membership.team, actor=request.user, **serializer.validated_data
        )
        return Response(SystemOutput(system).data, status=status.HTTP_201_CREATED)


class SystemDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=SystemOutput)
    def get(self, request: Request, slug: str, system_id: int) -> Response:
        return Response(SystemOutput(system_for(request, slug, system_id)).data)


class VersionUploadApi(FileUploadApi):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    upload_limit_setting = "SYSTEM_UPLOAD_MAX_BYTES"
    upload_what = services.ARCHIVE

    @extend_schema(
        request=VersionUploadInput,
        responses={201: SystemVersionOutput, 413: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, slug: str, system_id: int) -> Response:
        system = system_for(request, slug, system_id)
        services.system_version_upload_require(system=system, actor=request.user)
        serializer = VersionUploadInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        version = services.system_version_upload(
            system=system,
            actor=request.user,
            archive=serializer.validated_data["archive"],
            label_mapping=serializer.validated_data.get("label_mapping"),
        )
        return Response(SystemVersionOutput(version).data, status=status.HTTP_201_CREATED)


class VersionDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=SystemVersionOutput)
    def get(self, request: Request, slug: str, system_id: int, number: int) -> Response:
        return Response(
            SystemVersionOutput(version_for(system_for(request, slug, system_id), number)).data
        )


class VersionActivateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=SystemOutput)
    def post(self, request: Request, slug: str, system_id: int, number: int) -> Response:
        version = version_for(system_for(request, slug, system_id), number)
        return Response(
            SystemOutput(services.system_version_activate(version=version, actor=request.user)).data
        )


class VersionStarterFisherApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("page", int)], responses=StarterFisherOutput(many=True)
    )
    def get(self, request: Request, slug: str, system_id: int, number: int) -> Response:
        version = version_for(system_for(request, slug, system_id), number)
        return paginated(
            self, request, selectors.starter_fisher(version=version), StarterFisherOutput
        )


class PredictionsUploadApi(FileUploadApi):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    upload_limit_setting = "PREDICTIONS_UPLOAD_MAX_BYTES"
    upload_what = services.PREDICTIONS_FILE

    @extend_schema(
        request=PredictionsUploadInput,
        responses={201: SystemVersionOutput, 400: FileRejectedOutput, 413: OpenApiTypes.OBJECT},
    )
    def post(self, request: Request, slug: str, system_id: int) -> Response:
        system = system_for(request, slug, system_id)
        predictions.system_predictions_upload_require(system=system, actor=request.user)
        serializer = PredictionsUploadInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        uploads = serializer.validated_data["file"]
        version = predictions.system_predictions_upload(
            system=system,
            actor=request.user,
            files=[(upload.name, upload.read()) for upload in uploads],
            source=serializer.validated_data["source"],
            label_map=serializer.validated_data.get("label_map"),
            file_format=serializer.validated_data["format"],
        )
        body = {**SystemVersionOutput(version).data}
        body["repeated_predictions"] = version.repeated_predictions
        return Response(body, status=status.HTTP_201_CREATED)


class PairTextsApi(APIView):
    """Every pair text of the task, without labels or authorship, for self-reporting builders."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            (200, "application/x-ndjson"): OpenApiResponse(
                OpenApiTypes.STR,
                description='One JSON object per line: {"text": ...}, sorted by text (span tasks: '
                '{"text": ..., "question": ...}, each item once).',
            )
        }
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        shared_task = shared_task_for(request, slug)
        membership = sharedtask_selectors.membership_get(user=request.user, shared_task=shared_task)
        is_builder = membership is not None and membership.team.kind == Team.Kind.BUILDER
        if not (
            is_builder
            or sharedtask_selectors.is_organizer(user=request.user, shared_task=shared_task)
        ):
            raise PermissionDenied("Pair texts are released to builder teams and organizers.")
        services.require_break_phase_closed(shared_task=shared_task)
        # Each distinct item once, by its type's column names (a span item: a sentence and its
        # question; a sentence pair: premise and hypothesis).
        columns = [segment.column for segment in shared_task.kind.segments]
        rows = [
            dict(zip(columns, item, strict=True))
            for item in pair_selectors.pair_items(shared_task=shared_task)
        ]
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
        response = HttpResponse(lines, content_type="application/x-ndjson; charset=utf-8")
        response["Content-Disposition"] = (
            f'attachment; filename="{shared_task.slug}-pair-texts.jsonl"'
        )
        return response
