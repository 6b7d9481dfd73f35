"""Teams, memberships and invitations into a team."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404
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
from bibi.sharedtasks.apis.common import shared_task_for
from bibi.sharedtasks.models import (
    Invitation,
    Membership,
    SharedTask,
    Team,
)

# --- Teams, memberships, invitations ------------------------------------------------------


class TeamOutput(serializers.ModelSerializer):
    """What everyone who sees the task may know of a team: the real name only if not anonymous."""

    name = serializers.CharField(source="public_name")
    member_count = serializers.SerializerMethodField()

    class Meta:
        model = Team
        fields = ["id", "kind", "name", "is_anonymous", "member_count", "created_at"]

    def get_member_count(self, team: Team) -> int:
        # Lists annotate the count (selectors.team_list); a single team counts here.
        counted = getattr(team, "member_count", None)
        return team.memberships.count() if counted is None else counted


class TeamPrivateOutput(serializers.ModelSerializer):
    """What the team's members and the task's organizers see."""

    members = serializers.SerializerMethodField()

    class Meta:
        model = Team
        fields = ["id", "kind", "name", "alias", "is_anonymous", "members", "created_at"]

    def get_members(self, team: Team) -> list[dict[str, str]]:
        memberships = team.memberships.select_related("user").order_by("joined_at")
        return [{"username": m.user.get_username(), "role": m.role} for m in memberships]


class TeamInput(serializers.Serializer):
    kind = serializers.ChoiceField(choices=Team.Kind.choices)
    name = serializers.CharField(max_length=120)
    is_anonymous = serializers.BooleanField(default=False)


class TeamUpdateInput(serializers.Serializer):
    name = serializers.CharField(max_length=120, required=False)
    is_anonymous = serializers.BooleanField(required=False)


class InvitationOutput(serializers.ModelSerializer):
    team = serializers.IntegerField(source="team_id")
    accepted_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Invitation
        fields = [
            "token",
            "team",
            "created_at",
            "expires_at",
            "accepted_by",
            "accepted_at",
            "revoked_at",
        ]


class MembershipOutput(serializers.ModelSerializer):
    team = serializers.IntegerField(source="team_id")
    shared_task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["shared_task", "team", "username", "role", "joined_at"]


def team_for(shared_task: SharedTask, team_id: int) -> Team:
    return get_object_or_404(Team, shared_task=shared_task, id=team_id)


class TeamListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(
        parameters=[
            OpenApiParameter("kind", str, enum=Team.Kind.values),
            OpenApiParameter("page", int),
        ],
        responses=TeamOutput(many=True),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        teams = selectors.team_list(shared_task=shared_task)
        kind = request.query_params.get("kind")
        if kind:
            teams = teams.filter(kind=kind)
        return paginated(self, request, teams, TeamOutput)

    @extend_schema(request=TeamInput, responses={201: TeamPrivateOutput})
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        serializer = TeamInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        team = services.team_create(
            shared_task=shared_task, owner=request.user, **serializer.validated_data
        )
        return Response(TeamPrivateOutput(team).data, status=status.HTTP_201_CREATED)


class TeamDetailApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=TeamPrivateOutput)
    def get(self, request: Request, slug: str, team_id: int) -> Response:
        team = team_for(shared_task_for(request, slug), team_id)
        if selectors.can_view_team_private(user=request.user, team=team):
            return Response(TeamPrivateOutput(team).data)
        return Response(TeamOutput(team).data)

    @extend_schema(request=TeamUpdateInput, responses=TeamPrivateOutput)
    def patch(self, request: Request, slug: str, team_id: int) -> Response:
        team = team_for(shared_task_for(request, slug), team_id)
        serializer = TeamUpdateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        team = services.team_update(team=team, actor=request.user, **serializer.validated_data)
        return Response(TeamPrivateOutput(team).data)


class InvitationListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=InvitationOutput(many=True))
    def get(self, request: Request, slug: str, team_id: int) -> Response:
        team = team_for(shared_task_for(request, slug), team_id)
        if not selectors.is_team_owner(user=request.user, team=team):
            raise PermissionDenied("Only the team's owners see its invitations.")
        invitations = team.invitations.select_related("accepted_by")
        return Response(InvitationOutput(invitations, many=True).data)

    @extend_schema(request=None, responses={201: InvitationOutput})
    def post(self, request: Request, slug: str, team_id: int) -> Response:
        team = team_for(shared_task_for(request, slug), team_id)
        invitation = services.invitation_create(team=team, actor=request.user)
        return Response(InvitationOutput(invitation).data, status=status.HTTP_201_CREATED)


class InvitationAcceptApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={201: MembershipOutput})
    def post(self, request: Request, token: str) -> Response:
        membership = services.invitation_accept(token=token, user=request.user)
        return Response(MembershipOutput(membership).data, status=status.HTTP_201_CREATED)


class InvitationRevokeApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=InvitationOutput)
    def post(self, request: Request, token: str) -> Response:
        invitation = get_object_or_404(Invitation, token=token)
        if not selectors.can_view_team_private(user=request.user, team=invitation.team):
            raise Http404("No invitation matches the given query.")
        invitation = services.invitation_revoke(invitation=invitation, actor=request.user)
        return Response(InvitationOutput(invitation).data)


class MyMembershipsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=MembershipOutput(many=True))
    def get(self, request: Request) -> Response:
        memberships = Membership.objects.filter(user=request.user).select_related(
            "shared_task", "user"
        )
        return Response(MembershipOutput(memberships, many=True).data)
