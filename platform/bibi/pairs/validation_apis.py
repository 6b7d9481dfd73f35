"""REST API of label validation, under /api/v1/ (``pairs/README.md``, "Label validation").

Blind on purpose: what a validator reads of a pair (``ValidationItemOutput``) is the
original with its starter label, the variant, and the task's labels. Never the label the
team claimed, the team, the pair set, the pair's id, its rationale or its tags: the item is
named by the validation's own id. Organizers read every pair's votes and outcome, and each
validator's agreement with the majority.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import paginated
from bibi.pairs import agreement, selectors, services, validation
from bibi.pairs.models import LabelValidation
from bibi.sharedtasks.apis.common import require_organizer, shared_task_for


class ValidationItemOutput(serializers.ModelSerializer):
    """A pair as its validator sees it: no claimed label, team, set, id or rationale."""

    original_text = serializers.CharField(source="pair.original_text")
    original_label = serializers.CharField(source="pair.original_label")
    variant_text = serializers.CharField(source="pair.variant_text")
    labels = serializers.SerializerMethodField()
    expires_at = serializers.SerializerMethodField()

    class Meta:
        model = LabelValidation
        fields = [
            "id",
            "status",
            "original_text",
            "original_label",
            "variant_text",
            "labels",
            "assigned_at",
            "expires_at",
            "label",
            "not_minimal",
            "not_fluent",
            "original_mislabelled",
            "unclear",
            "note",
            "submitted_at",
        ]

    def get_labels(self, item: LabelValidation) -> list[str]:
        return list(self.context["labels"])

    def get_expires_at(self, item: LabelValidation) -> Any:
        if item.status != LabelValidation.Status.ASSIGNED:
            return None
        lifetime = timedelta(minutes=settings.VALIDATION_ASSIGNMENT_MINUTES)
        return serializers.DateTimeField().to_representation(item.assigned_at + lifetime)


class VoteInput(serializers.Serializer):
    label = serializers.CharField(
        max_length=100, allow_blank=True, required=False, default="", help_text="Empty if unclear."
    )
    not_minimal = serializers.BooleanField(required=False, default=False)
    not_fluent = serializers.BooleanField(
        required=False, default=False, help_text="Not fluent, or ungrammatical."
    )
    original_mislabelled = serializers.BooleanField(required=False, default=False)
    unclear = serializers.BooleanField(required=False, default=False)
    note = serializers.CharField(required=False, allow_blank=True, default="")


QueueStateOutput = inline_serializer(
    "ValidationQueueState",
    {
        "role": serializers.CharField(allow_null=True),
        "closed_reason": serializers.CharField(allow_null=True),
        "quota": serializers.IntegerField(),
        "done": serializers.IntegerField(),
        "assigned": serializers.IntegerField(allow_null=True),
        "available": serializers.IntegerField(),
    },
)


def _item(request: Request, item: LabelValidation, labels: list[str]) -> dict[str, Any]:
    return dict(ValidationItemOutput(item, context={"request": request, "labels": labels}).data)


def _own(request: Request, pk: int) -> int:
    """The id of a validation handed to the caller; 404 for anyone else's, as if none."""
    if not LabelValidation.objects.filter(id=pk, validator=request.user).exists():
        raise Http404("No pair with this id was handed to you.")
    return pk


class ValidationStateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=QueueStateOutput)
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        return Response(
            selectors.validation_queue_state(shared_task=shared_task, user=request.user)
        )


class ValidationNextApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="The pair you label next (the one handed to you and not answered, else "
        "the queue's next); 204 when the queue has nothing for you.",
        request=None,
        responses={200: ValidationItemOutput, 204: None},
    )
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        item = services.validation_next(shared_task=shared_task, user=request.user)
        if item is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        return Response(_item(request, item, shared_task.labels))


class ValidationMineApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ValidationItemOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        history = selectors.validator_history(shared_task=shared_task, user=request.user)
        return paginated(self, request, history, ValidationItemOutput, labels=shared_task.labels)


class ValidationVoteApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Your vote on the pair handed to you: the variant's label (empty and "
        "'unclear' when none can be given) and flags. A vote is final.",
        request=VoteInput,
        responses=ValidationItemOutput,
    )
    def post(self, request: Request, pk: int) -> Response:
        serializer = VoteInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            vote = services.validation_submit(
                validation_id=_own(request, pk), user=request.user, **serializer.validated_data
            )
        except ObjectDoesNotExist:
            raise Http404("No pair with this id is handed to you.") from None
        item = vote.validation
        return Response(_item(request, item, item.pair.pair_set.shared_task.labels))


class ValidationSkipApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=ValidationItemOutput)
    def post(self, request: Request, pk: int) -> Response:
        try:
            item = services.validation_skip(validation_id=_own(request, pk), user=request.user)
        except ObjectDoesNotExist:
            raise Http404("No pair with this id is handed to you.") from None
        return Response(_item(request, item, item.pair.pair_set.shared_task.labels))


class ValidationPairListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Organizers: every entry pair's validation state, votes, flags and "
        "agreement, by team then row.",
        responses=inline_serializer("ValidationPairRow", {"pair_id": serializers.IntegerField()}),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        rows = selectors.validation_pair_rows(shared_task=shared_task)
        state = request.query_params.get("state")
        if state:
            rows = [row for row in rows if row["state"] == state]
        return Response({"rows": rows, "states": validation.STATES})


class ValidationValidatorListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Organizers: each validator's votes and agreement with the majority, "
        "least agreeing first.",
        responses=inline_serializer("ValidatorAgreement", {"username": serializers.CharField()}),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        return Response({"rows": agreement.validator_agreement_list(shared_task=shared_task)})


class ValidationSummaryApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Organizers: the settings, counts by state (in all and per team) and "
        "Krippendorff's alpha per task and per team.",
        responses=inline_serializer("ValidationSummary", {"alpha": serializers.FloatField()}),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        return Response(agreement.validation_summary(shared_task=shared_task))
