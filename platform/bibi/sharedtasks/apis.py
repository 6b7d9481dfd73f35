"""REST API for shared tasks, phases, datasets, examples, teams and invitations.

Thin on purpose: each view checks who may do what through ``selectors``, validates input
with a small serializer, calls one service and answers with an output serializer. A task
the user may not see answers 404, as if it did not exist; an action on a visible task
that the user's role does not allow answers 403.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import Http404
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny, IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import (
    FileRejectedOutput,
    FileUploadApi,
    LabelMapField,
    paginated,
    shared_task_for,
)
from bibi.files import ERRORS_SHOWN
from bibi.sharedtasks import importing, selectors, services
from bibi.sharedtasks.importing import EXAMPLES_FILE
from bibi.sharedtasks.models import (
    AuditLogEntry,
    Dataset,
    Example,
    Invitation,
    Membership,
    Phase,
    SharedTask,
    TaskAccess,
    TaskInvitation,
    Team,
)


def require_organizer(request: Request, shared_task: SharedTask) -> None:
    if not selectors.is_organizer(user=request.user, shared_task=shared_task):
        raise PermissionDenied("Only the organizers of this shared task may do that.")


def role_in(request: Request, shared_task: SharedTask) -> str | None:
    if selectors.is_organizer(user=request.user, shared_task=shared_task):
        return "organizer"
    membership = selectors.membership_get(user=request.user, shared_task=shared_task)
    return membership.team.kind if membership else None


# --- Shared tasks -------------------------------------------------------------------------


class PhaseOutput(serializers.ModelSerializer):
    is_open = serializers.SerializerMethodField()

    class Meta:
        model = Phase
        fields = ["kind", "starts_at", "ends_at", "is_open"]

    def get_is_open(self, phase: Phase) -> bool:
        return phase.is_open()


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


KIND_PARAMETER = OpenApiParameter("kind", str, OpenApiParameter.PATH, enum=Phase.Kind.values)
SPLIT_PARAMETER = OpenApiParameter("split", str, OpenApiParameter.PATH, enum=Dataset.Split.values)


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
        "answers every phase of the task.",
    )
    def post(self, request: Request, slug: str, kind: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        services.phase_close_now(phase=phase_for(shared_task, kind), actor=request.user)
        return Response(PhaseOutput(shared_task.phases.order_by("starts_at"), many=True).data)


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


class ExampleOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")

    class Meta:
        model = Example
        fields = ["id", "text", "label"]


class UnlabelledExampleOutput(serializers.ModelSerializer):
    id = serializers.CharField(source="external_id")

    class Meta:
        model = Example
        fields = ["id", "text"]


class ExamplesImportInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["csv", "tsv", "jsonl", "sst2"], required=False)
    label_map = LabelMapField()


class DuplicateTextOutput(serializers.Serializer):
    """A row imported although an earlier example has its text and label."""

    line = serializers.IntegerField()
    same_as_id = serializers.CharField(help_text="The id of the first example with this text.")
    same_as_line = serializers.IntegerField(
        allow_null=True, help_text="Its line in this file; null if it was already imported."
    )


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
        return paginated(
            self, request, queryset, ExampleOutput if labels_visible else UnlabelledExampleOutput
        )


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
        )
        return Response(ExamplesImportOutput(report).data, status=status.HTTP_201_CREATED)


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


# --- Task invitations: the way into a private task ----------------------------------------


class TaskInvitationInput(serializers.Serializer):
    expires_at = serializers.DateTimeField(
        required=False, help_text="When the link stops working; default: in 14 days."
    )
    max_uses = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Default: no limit."
    )
    note = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class TaskInvitationOutput(serializers.ModelSerializer):
    shared_task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    created_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    uses = serializers.SerializerMethodField()

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
            "uses",
            "revoked_at",
        ]

    def get_uses(self, invitation: TaskInvitation) -> int:
        # Lists annotate the count (selectors.task_invitation_list); one invitation counts here.
        counted = getattr(invitation, "uses", None)
        return invitation.accesses.count() if counted is None else counted


class TaskAccessOutput(serializers.ModelSerializer):
    shared_task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    username = serializers.CharField(source="user.username")

    class Meta:
        model = TaskAccess
        fields = ["shared_task", "username", "granted_at"]


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


class MyMembershipsApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=MembershipOutput(many=True))
    def get(self, request: Request) -> Response:
        memberships = Membership.objects.filter(user=request.user).select_related(
            "shared_task", "user"
        )
        return Response(MembershipOutput(memberships, many=True).data)
