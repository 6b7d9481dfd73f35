"""Datasets, their examples, and importing examples."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import (
    FileRejectedOutput,
    FileUploadApi,
    LabelMapField,
    paginated,
)
from bibi.files import ERRORS_SHOWN
from bibi.sharedtasks import importing, selectors, services
from bibi.sharedtasks.apis.common import require_organizer, shared_task_for
from bibi.sharedtasks.importing import EXAMPLES_FILE
from bibi.sharedtasks.models import (
    Dataset,
    Example,
    SharedTask,
)
from bibi.tasktypes import example_formats

# --- Datasets and examples ----------------------------------------------------------------


class DatasetOutput(serializers.ModelSerializer):
    example_count = serializers.IntegerField(read_only=True)
    labels_visible = serializers.SerializerMethodField()
    examples_visible = serializers.SerializerMethodField()

    class Meta:
        model = Dataset
        fields = ["split", "created_at", "example_count", "examples_visible", "labels_visible"]

    def get_labels_visible(self, dataset: Dataset) -> bool:
        return self.context["sight"].labels(dataset.split)

    def get_examples_visible(self, dataset: Dataset) -> bool:
        return self.context["sight"].examples(dataset.split)


# What an example holds besides its id, whatever the type: the type says which of these its
# examples have, and which are gold (hidden while the dataset's labels are).
EXAMPLE_FIELDS = [
    field.name
    for field in Example._meta.concrete_fields
    if field.name not in ("id", "dataset", "external_id", "position")
]


class ExampleOutput(serializers.ModelSerializer):
    """An example as the task's type has it (``TaskType.example_fields``): its texts, and its
    gold label or answers where ``context["gold"]`` is true."""

    id = serializers.CharField(source="external_id")

    class Meta:
        model = Example
        fields = ["id", *EXAMPLE_FIELDS]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        kind = self.context.get("kind")
        if kind is None:  # the schema: every field any type has
            return fields
        shown = {"id", *kind.example_fields(gold=self.context.get("gold", False))}
        return {name: field for name, field in fields.items() if name in shown}


class ExamplesImportInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(
        choices=example_formats(),
        required=False,
        help_text="One of the task type's formats (qa and qasrl_tsv: the QA-SRL formats of "
        "span tasks).",
    )
    label_map = LabelMapField()
    drop_unmatched = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Span tasks: leave out (and report) answers that are not spans of their "
        "sentence, and items left without one, instead of refusing the file.",
    )
    partial = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Store the rows that pass and return the refused ones (refused, "
        "refused_count) instead of refusing the whole file; a file with no row that passes "
        "is still refused.",
    )


class DuplicateTextOutput(serializers.Serializer):
    """A row imported although an earlier example has its text and label."""

    line = serializers.IntegerField()
    same_as_id = serializers.CharField(help_text="The id of the first example with this text.")
    same_as_line = serializers.IntegerField(
        allow_null=True, help_text="Its line in this file; null if it was already imported."
    )


class RefusedLineOutput(serializers.Serializer):
    line = serializers.IntegerField()
    reason = serializers.CharField()


class ExamplesImportOutput(serializers.Serializer):
    """``duplicate_count`` counts every exact duplicate (same text, same label, imported);
    ``duplicates`` lists the first ``ERRORS_SHOWN`` of them in line order."""

    created = serializers.IntegerField()
    encoding = serializers.CharField()
    format = serializers.CharField(source="file_format")
    duplicate_count = serializers.SerializerMethodField()
    duplicates = serializers.SerializerMethodField()
    cells_to_compute = serializers.IntegerField(
        help_text="Predictions the ready hosted systems will now compute for the new starter "
        "or blind-dev examples (their dev scores follow)."
    )

    dropped_answers = serializers.SerializerMethodField(
        help_text="Span tasks: answers left out as not spans of their sentence."
    )
    dropped_items = serializers.SerializerMethodField(
        help_text="Span tasks: items left out for want of an answer."
    )
    repeated_rows = serializers.SerializerMethodField(
        help_text="Span tasks: rows skipped as repeats of an earlier row (the 2017 TSV)."
    )

    restored_case = serializers.SerializerMethodField(
        help_text="Span tasks, the 2017 TSV: predicates written in capitals (the TSV's marker) "
        "given the sentence's case back."
    )
    refused_count = serializers.SerializerMethodField(
        help_text="A partial import: how many lines were refused (not stored)."
    )
    refused = serializers.SerializerMethodField(
        help_text="A partial import: every problem of the refused lines, in line order "
        "(line 0: the file as a whole)."
    )

    def get_restored_case(self, report: importing.ExamplesImportReport) -> int:
        return len(report.restored_case)

    refused_file = serializers.CharField(
        help_text="A partial import: the refused lines as CSV (line, rule, setting, reason, "
        "content: the line as it was in the file), as a partial pair set gives them; '' for "
        "none."
    )

    def get_refused_count(self, report: importing.ExamplesImportReport) -> int:
        return len(report.refused_lines())

    @extend_schema_field(RefusedLineOutput(many=True))
    def get_refused(self, report: importing.ExamplesImportReport) -> list[dict[str, Any]]:
        return [{"line": error.line, "reason": error.reason} for error in report.refused]

    def get_dropped_answers(self, report: importing.ExamplesImportReport) -> int:
        return len(report.dropped_answers)

    def get_dropped_items(self, report: importing.ExamplesImportReport) -> int:
        return len(report.dropped_items)

    def get_repeated_rows(self, report: importing.ExamplesImportReport) -> int:
        return len(report.repeated_rows)

    def get_duplicate_count(self, report: importing.ExamplesImportReport) -> int:
        return len(report.duplicates)

    @extend_schema_field(DuplicateTextOutput(many=True))
    def get_duplicates(self, report: importing.ExamplesImportReport) -> list[dict[str, Any]]:
        return DuplicateTextOutput(report.duplicates[:ERRORS_SHOWN], many=True).data


def dataset_for(shared_task: SharedTask, split: str) -> Dataset:
    return get_object_or_404(Dataset, shared_task=shared_task, split=split)


class DatasetListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(responses=DatasetOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        datasets = shared_task.datasets.annotate(example_count=Count("examples")).order_by("split")
        sight = selectors.DatasetSight.of(user=request.user, shared_task=shared_task)
        return Response(DatasetOutput(datasets, many=True, context={"sight": sight}).data)


class ExampleListApi(APIView):
    permission_classes = [AllowAny]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "label",
                str,
                description="Only examples with this label (not on the blind dev set).",
            ),
            OpenApiParameter("search", str, description="Only examples whose text contains this."),
            OpenApiParameter("page", int),
        ],
        responses=ExampleOutput(many=True),
    )
    def get(self, request: Request, slug: str, split: str) -> Response:
        shared_task = shared_task_for(request, slug)
        dataset = dataset_for(shared_task, split)
        sight = selectors.DatasetSight.of(user=request.user, shared_task=shared_task)
        if not sight.examples(dataset.split):
            raise PermissionDenied(
                "The blind dev texts are shown to the task's teams and organizers only."
            )
        labels_visible = sight.labels(dataset.split)
        queryset = selectors.example_list(dataset=dataset)
        label = request.query_params.get("label")
        if label is not None:
            if not labels_visible:
                # Filtering by a hidden label would reveal it one page count at a time.
                raise PermissionDenied(
                    "The labels of this dataset are hidden, so it cannot be filtered by label."
                )
            queryset = queryset.filter(label=label)
        search = request.query_params.get("search")
        if search:
            queryset = queryset.filter(text__icontains=search)
        context = {"kind": shared_task.kind, "gold": labels_visible}
        return paginated(self, request, queryset, ExampleOutput, **context)


class ExamplesImportApi(FileUploadApi):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser, FormParser]
    upload_limit_setting = "EXAMPLES_UPLOAD_MAX_BYTES"
    upload_what = EXAMPLES_FILE

    @extend_schema(
        request=ExamplesImportInput,
        responses={
            201: ExamplesImportOutput,
            400: FileRejectedOutput,
            413: OpenApiTypes.OBJECT,
        },
    )
    def post(self, request: Request, slug: str, split: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        if split not in Dataset.Split.values:
            raise Http404("No such split.")
        # Before the file is read: a frozen split refuses it whatever it holds.
        services.dataset_require_unfrozen(shared_task=shared_task, split=split)
        serializer = ExamplesImportInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        report = importing.examples_import(
            shared_task=shared_task,
            split=split,
            actor=request.user,
            data=upload.read(),
            filename=upload.name,
            file_format=serializer.validated_data.get("format"),
            label_map=serializer.validated_data.get("label_map"),
            drop_unmatched=serializer.validated_data["drop_unmatched"],
            partial=serializer.validated_data["partial"],
        )
        return Response(ExamplesImportOutput(report).data, status=status.HTTP_201_CREATED)
