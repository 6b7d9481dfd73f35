"""Task invitations: the way into a private task."""

from __future__ import annotations

from typing import Any

from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import (
    paginated,
)
from bibi.sharedtasks import selectors, services
from bibi.sharedtasks.apis.common import require_organizer, shared_task_for
from bibi.sharedtasks.models import (
    TaskAccess,
    TaskInvitation,
)

# --- Task invitations: the way into a private task ----------------------------------------


class TaskInvitationInput(serializers.Serializer):
    expires_at = serializers.DateTimeField(
        required=False, help_text="When the link stops working; default: in 14 days."
    )
    max_uses = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        help_text="Default: no limit; 1 for a link for validators (which always has a limit).",
    )
    note = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    grants_validator = serializers.BooleanField(
        required=False,
        default=False,
        help_text="Whoever accepts the link becomes a validator of pair labels.",
    )


class TaskInvitationOutput(serializers.ModelSerializer):
    shared_task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    uses = serializers.SerializerMethodField()
    used_by = serializers.SerializerMethodField(
        help_text="Who took a use of the link (joined by it, or became a validator by it), "
        "oldest first."
    )

    class Meta:
        model = TaskInvitation
        fields = [
            "token",
            "shared_task",
            "note",
            "created_by",
            "created_at",
            "expires_at",
            "max_uses",
            "grants_validator",
            "uses",
            "used_by",
            "revoked_at",
        ]

    def get_uses(self, invitation: TaskInvitation) -> int:
        # Lists annotate the count (selectors.task_invitation_list); one invitation counts here.
        counted = getattr(invitation, "uses", None)
        return invitation.uses_taken.count() if counted is None else counted

    def get_used_by(self, invitation: TaskInvitation) -> list[dict[str, Any]]:
        return [
            {"username": use.user.get_username(), "used_at": use.used_at}
            for use in invitation.uses_taken.all()
        ]


class TaskAccessOutput(serializers.ModelSerializer):
    shared_task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    username = serializers.CharField(source="user.username")

    class Meta:
        model = TaskAccess
        fields = ["shared_task", "username", "is_validator", "granted_at"]


class TaskInvitationListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("page", int)], responses=TaskInvitationOutput(many=True)
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        invitations = selectors.task_invitation_list(shared_task=shared_task)
        return paginated(self, request, invitations, TaskInvitationOutput)

    @extend_schema(request=TaskInvitationInput, responses={201: TaskInvitationOutput})
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        serializer = TaskInvitationInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        invitation = services.task_invitation_create(
            shared_task=shared_task, actor=request.user, **serializer.validated_data
        )
        return Response(TaskInvitationOutput(invitation).data, status=status.HTTP_201_CREATED)


class TaskInvitationAcceptApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={200: TaskAccessOutput, 201: TaskAccessOutput})
    def post(self, request: Request, token: str) -> Response:
        access, created = services.task_invitation_accept(token=token, user=request.user)
        return Response(
            TaskAccessOutput(access).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )


class TaskInvitationRevokeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=TaskInvitationOutput)
    def post(self, request: Request, token: str) -> Response:
        invitation = get_object_or_404(
            TaskInvitation.objects.select_related("shared_task"), token=token
        )
        if not selectors.can_view_shared_task(
            user=request.user, shared_task=invitation.shared_task
        ):
            raise Http404("No invitation matches the given query.")
        invitation = services.task_invitation_revoke(invitation=invitation, actor=request.user)
        return Response(TaskInvitationOutput(invitation).data)
