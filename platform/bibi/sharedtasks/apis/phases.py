"""Phases: list, create, move, extend, close now."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.sharedtasks import services
from bibi.sharedtasks.apis.common import KIND_PARAMETER, require_organizer, shared_task_for
from bibi.sharedtasks.models import (
    Phase,
    SharedTask,
)


class PhaseOutput(serializers.ModelSerializer):
    is_open = serializers.SerializerMethodField()

    class Meta:
        model = Phase
        fields = ["kind", "starts_at", "ends_at", "is_open"]

    def get_is_open(self, phase: Phase) -> bool:
        return phase.is_open()


# --- Phases -------------------------------------------------------------------------------


class PhaseInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Phase.Kind.choices)
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()


class PhaseUpdateInput(serializers.Serializer):
    starts_at = serializers.DateTimeField()
    ends_at = serializers.DateTimeField()


class PhaseExtendInput(serializers.Serializer):
    ends_at = serializers.DateTimeField()
    reason = serializers.CharField(max_length=500, allow_blank=True, required=False, default="")


def phase_for(shared_task: SharedTask, kind: str) -> Phase:
    return get_object_or_404(Phase, shared_task=shared_task, kind=kind)


class PhaseListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=PhaseOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        return Response(PhaseOutput(shared_task.phases.all(), many=True).data)

    @extend_schema(request=PhaseInput, responses={201: PhaseOutput})
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        serializer = PhaseInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        phase = services.phase_create(
            shared_task=shared_task, actor=request.user, **serializer.validated_data
        )
        return Response(PhaseOutput(phase).data, status=status.HTTP_201_CREATED)


class PhaseDetailApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(parameters=[KIND_PARAMETER], responses=PhaseOutput)
    def get(self, request: Request, slug: str, kind: str) -> Response:
        return Response(PhaseOutput(phase_for(shared_task_for(request, slug), kind)).data)

    @extend_schema(parameters=[KIND_PARAMETER], request=PhaseUpdateInput, responses=PhaseOutput)
    def patch(self, request: Request, slug: str, kind: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        phase = phase_for(shared_task, kind)
        serializer = PhaseUpdateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        phase = services.phase_update(phase=phase, actor=request.user, **serializer.validated_data)
        return Response(PhaseOutput(phase).data)


class PhaseExtendApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(parameters=[KIND_PARAMETER], request=PhaseExtendInput, responses=PhaseOutput)
    def post(self, request: Request, slug: str, kind: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        phase = phase_for(shared_task, kind)
        serializer = PhaseExtendInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        phase = services.phase_extend(phase=phase, actor=request.user, **serializer.validated_data)
        return Response(PhaseOutput(phase).data)


class PhaseCloseNowApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[KIND_PARAMETER],
        request=None,
        responses=PhaseOutput(many=True),
        description="End the running phase now and start the next one at the same moment; "
        "answers every phase of the task. Starting the results phase ends label validation: "
        "while pairs still wait for votes that is refused (400, with the counts by team) "
        "unless `confirm` is true (query or JSON body).",
    )
    def post(self, request: Request, slug: str, kind: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        body = request.data if isinstance(request.data, dict) else {}
        confirm = serializers.BooleanField().to_internal_value(
            request.query_params.get("confirm", body.get("confirm", False))
        )
        services.phase_close_now(
            phase=phase_for(shared_task, kind), actor=request.user, confirm=confirm
        )
        return Response(PhaseOutput(shared_task.phases.order_by("starts_at"), many=True).data)
