"""Shared tasks, their organizers and their audit log."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import (
    paginated,
)
from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.apis.common import require_organizer, role_in, shared_task_for
from bibi.sharedtasks.apis.phases import PhaseOutput
from bibi.sharedtasks.models import (
    AuditLogEntry,
    SharedTask,
)

# --- Shared tasks -------------------------------------------------------------------------


class SharedTaskOutput(serializers.ModelSerializer):
    phases = PhaseOutput(many=True, read_only=True)
    current_phase = serializers.SerializerMethodField()
    results_published = serializers.BooleanField(read_only=True)
    my_role = serializers.SerializerMethodField()

    class Meta:
        model = SharedTask
        fields = [
            "slug",
            "task_type",
            *services.SHARED_TASK_EDITABLE_FIELDS,
            "created_at",
            "phases",
            "current_phase",
            "results_published",
            "my_role",
        ]

    def get_current_phase(self, shared_task: SharedTask) -> str | None:
        phase = shared_task.phase_at()
        return phase.kind if phase else None

    def get_my_role(self, shared_task: SharedTask) -> str | None:
        # A list passes every role of the caller at once; one task asks.
        roles = self.context.get("roles")
        if roles is not None:
            return roles.get(shared_task.id)
        return role_in(self.context["request"], shared_task)


class SharedTaskInput(serializers.ModelSerializer):
    class Meta:
        model = SharedTask
        fields = ["slug", "task_type", *services.SHARED_TASK_EDITABLE_FIELDS]
        extra_kwargs = {"slug": {"validators": []}}

    def validate_labels(self, labels: Any) -> list[str]:
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            raise serializers.ValidationError("Give the labels as a list of strings, in order.")
        return labels

    def validate_strategy_tags(self, tags: Any) -> list[str]:
        if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
            raise serializers.ValidationError("Give the strategy tags as a list of strings.")
        return tags


class SharedTaskUpdateInput(SharedTaskInput):
    class Meta(SharedTaskInput.Meta):
        fields = list(services.SHARED_TASK_EDITABLE_FIELDS)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Said, not dropped: a label task's data, pairs and scores mean nothing to a span
        # task's code, and the reverse.
        if "task_type" in self.initial_data and self.initial_data["task_type"] != getattr(
            self.instance, "task_type", None
        ):
            raise serializers.ValidationError(
                {"task_type": "The task type is chosen at creation and never changes."}
            )
        return attrs


class SharedTaskListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=SharedTaskOutput(many=True), operation_id="shared_tasks_list")
    def get(self, request: Request) -> Response:
        queryset = selectors.shared_task_list(user=request.user).prefetch_related("phases")
        roles = selectors.roles_of(user=request.user)
        return paginated(self, request, queryset, SharedTaskOutput, roles=roles)

    @extend_schema(request=SharedTaskInput, responses={201: SharedTaskOutput})
    def post(self, request: Request) -> Response:
        serializer = SharedTaskInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        shared_task = services.shared_task_create(creator=request.user, **serializer.validated_data)
        return Response(
            SharedTaskOutput(shared_task, context={"request": request}).data,
            status=status.HTTP_201_CREATED,
        )


class SharedTaskDetailApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=SharedTaskOutput)
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        return Response(SharedTaskOutput(shared_task, context={"request": request}).data)

    @extend_schema(request=SharedTaskUpdateInput, responses=SharedTaskOutput)
    def patch(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        serializer = SharedTaskUpdateInput(shared_task, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        shared_task = services.shared_task_update(
            shared_task=shared_task, actor=request.user, **serializer.validated_data
        )
        return Response(SharedTaskOutput(shared_task, context={"request": request}).data)


# --- Organizers and the audit log ---------------------------------------------------------


class OrganizerInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)


class OrganizerOutput(serializers.Serializer):
    username = serializers.CharField(source="user.username")
    added_at = serializers.DateTimeField()


class AuditLogEntryOutput(serializers.ModelSerializer):
    actor = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = AuditLogEntry
        fields = ["created_at", "actor", "action", "target", "details"]


class OrganizerListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=OrganizerOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        organizers = shared_task.organizer_set.select_related("user").order_by("added_at")
        return Response(OrganizerOutput(organizers, many=True).data)

    @extend_schema(request=OrganizerInput, responses={201: OrganizerOutput})
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        serializer = OrganizerInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = (
            get_user_model().objects.filter(username=serializer.validated_data["username"]).first()
        )
        if user is None:
            raise serializers.ValidationError({"username": "No user has this username."})
        organizer = services.organizer_add(shared_task=shared_task, actor=request.user, user=user)
        return Response(OrganizerOutput(organizer).data, status=status.HTTP_201_CREATED)


class AuditLogApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("page", int)], responses=AuditLogEntryOutput(many=True)
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        return paginated(
            self, request, shared_task.audit_log.select_related("actor"), AuditLogEntryOutput
        )
