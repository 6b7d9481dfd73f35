"""REST API for pair sets, pairs and contests, under /api/v1/.

Thin on purpose: each view finds what the URL names (404 for whoever may not see it, as
if it did not exist), validates input with a small serializer, calls one service and
answers with an output serializer. Role refusals are 403, anonymous writes 401.

A rejected set answers 400 in the envelope every refused upload has (``bibi.api``), and
nothing is stored::

    {"detail": "Nothing was stored: 2 problem(s) in pairs.csv.", "encoding": "cp1252",
     "format": "csv", "error_count": 2,
     "groups": [{"reason": "the variant is identical to the original", "count": 2,
                 "lines": "3, 7"}],
     "errors": [{"line": 3, "reason": "the variant is identical to the original"}, ...]}

``line`` is the file's line (the header is line 1), or the position in a JSON list (from 1);
0 is the set as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import (
    FileRejectedOutput,
    FileUploadApi,
    paginated,
)
from bibi.pairs import selectors, services
from bibi.pairs.models import Contest, Pair, PairSet
from bibi.pairs.serializers import (
    DRY_RUN_HELP,
    AdjudicateInput,
    ContestablePairOutput,
    ContestInput,
    ContestOutput,
    DraftSubmissionOutput,
    PairAddInput,
    PairAddOutput,
    PairOutput,
    PairSetDetailOutput,
    PairSetFileInput,
    PairSetJsonInput,
    PairSetOutput,
    PairSetSubmissionOutput,
    PairSetUpdateInput,
    output_context,
    row_errors,
    submission_response,
)
from bibi.parsers import JSONParser
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.apis.common import shared_task_for
from bibi.sharedtasks.models import SharedTask, Team
from bibi.texts import moment_text


def breaker_team_for(request: Request, shared_task: SharedTask) -> Team:
    team = selectors.team_of(user=request.user, shared_task=shared_task)
    if team is None or team.kind != Team.Kind.BREAKER:
        raise PermissionDenied("Only members of a breaker team of this shared task submit pairs.")
    return team


def pair_set_for(request: Request, pk: int) -> PairSet:
    pair_set = get_object_or_404(PairSet.objects.select_related("team", "shared_task"), pk=pk)
    if not selectors.can_view_pair_set(user=request.user, pair_set=pair_set):
        raise Http404("No pair set matches the given query.")
    return pair_set


def pair_for(request: Request, pk: int) -> Pair:
    """A pair its viewer may see through its set, or (contest phase) as contestable."""
    pair = get_object_or_404(
        Pair.objects.select_related("pair_set__team", "pair_set__shared_task", "original"), pk=pk
    )
    if not selectors.can_contest_view(user=request.user, pair=pair):
        raise Http404("No pair matches the given query.")
    return pair


def contest_for(request: Request, pk: int) -> Contest:
    contest = get_object_or_404(
        Contest.objects.select_related("pair__pair_set__shared_task", "pair__pair_set__team"),
        pk=pk,
    )
    if not selectors.can_view_contest(user=request.user, contest=contest):
        raise Http404("No contest matches the given query.")
    return contest


# --- Views -------------------------------------------------------------------------------


TEAM_PARAMETER = OpenApiParameter("team", int, description="Only this team's sets.")
STATUS_PARAMETER = OpenApiParameter("status", str, enum=PairSet.Status.values)
PAGE_PARAMETER = OpenApiParameter("page", int)


class PairSetListApi(FileUploadApi):
    permission_classes = [IsAuthenticatedOrReadOnly]
    parser_classes = [JSONParser, MultiPartParser]
    upload_limit_setting = "PAIR_SET_UPLOAD_MAX_BYTES"
    upload_what = services.PAIR_SET_FILE

    @extend_schema(
        parameters=[TEAM_PARAMETER, STATUS_PARAMETER, PAGE_PARAMETER],
        responses=PairSetOutput(many=True),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        queryset = selectors.pair_set_list(user=request.user, shared_task=shared_task)
        team = request.query_params.get("team")
        if team:
            if not team.isdigit():
                raise serializers.ValidationError({"team": "Give a team id."})
            queryset = queryset.filter(team_id=int(team))
        state = request.query_params.get("status")
        if state:
            queryset = queryset.filter(status=state)
        entry_ids = {s.id for s in selectors.entry_pair_sets(shared_task=shared_task).values()}
        context = output_context(request, shared_task, entry_ids=entry_ids)
        return paginated(self, request, queryset, PairSetOutput, **context)

    @extend_schema(
        description="Submit a pair set: a file (multipart) or a JSON list of pairs. "
        "All or nothing: one failing pair stores nothing. The answer says whether the set is "
        "the team's entry now, which entry it replaced (replaced_entry) or which set marked "
        "final stays the entry (final_entry), with warnings. With dry_run, the same answer "
        "(200, no id) and nothing stored.",
        parameters=[OpenApiParameter("dry_run", bool, description=DRY_RUN_HELP)],
        request={"multipart/form-data": PairSetFileInput, "application/json": PairSetJsonInput},
        responses={
            201: PairSetSubmissionOutput,
            200: PairSetSubmissionOutput,
            400: FileRejectedOutput,
            413: OpenApiTypes.OBJECT,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        team = breaker_team_for(request, shared_task)
        dry_run_param = serializers.BooleanField().to_internal_value(
            request.query_params.get("dry_run", False)
        )
        services.pair_set_submit_require(team=team, user=request.user)
        if request.content_type.startswith("multipart/"):
            serializer = PairSetFileInput(data=request.data)
            serializer.is_valid(raise_exception=True)
            upload = serializer.validated_data["file"]
            submission = services.pair_set_upload(
                team=team,
                user=request.user,
                file=upload,
                file_format=serializer.validated_data.get("format"),
                label_map=serializer.validated_data.get("label_map"),
                dry_run=dry_run_param or serializer.validated_data["dry_run"],
                partial=serializer.validated_data["partial"],
                append_to=_append_to(team, serializer.validated_data),
            )
        else:
            data = {"pairs": request.data} if isinstance(request.data, list) else request.data
            if isinstance(data, dict) and isinstance(data.get("pairs"), list):
                # Before each pair is validated: a long list would cost an error per pair.
                services.pair_set_size_require(
                    shared_task=shared_task, count=len(data["pairs"]), source="the JSON list"
                )
            serializer = PairSetJsonInput(data=data, context={"kind": shared_task.kind})
            if not serializer.is_valid():
                errors = row_errors(serializer.errors)
                if errors is None:
                    raise serializers.ValidationError(serializer.errors)
                raise services.PairSetRejected(errors, source="the JSON list")
            pairs = [
                shared_task.kind.pair_input(index, fields)
                for index, fields in enumerate(serializer.validated_data["pairs"], start=1)
            ]
            submission = services.pair_list_submit(
                team=team,
                user=request.user,
                pairs=pairs,
                label_map=serializer.validated_data.get("label_map"),
                dry_run=dry_run_param or serializer.validated_data["dry_run"],
                append_to=_append_to(team, serializer.validated_data),
            )
        return submission_response(request, submission, PairSetSubmissionOutput)


def _append_to(team: Team, data: Mapping[str, Any]) -> PairSet | None:
    """The set an upload's pairs are added to (``append_to``), or None; 400 when it is not a
    submitted set of the team."""
    if data.get("append_to") is None:
        return None
    pair_set = selectors.team_pair_set(team=team, pk=data["append_to"])
    if pair_set is None:
        raise serializers.ValidationError({"append_to": "Not a submitted pair set of your team."})
    return pair_set


def _detail(request: Request, pair_set: PairSet) -> Response:
    pair_set.pair_count = pair_set.pairs.count()
    entry = selectors.pair_set_entry(team=pair_set.team)
    entry_ids = {entry.id} if entry is not None else set()
    context = output_context(request, pair_set.shared_task, entry_ids=entry_ids)
    context["request"] = request
    return Response(PairSetDetailOutput(pair_set, context=context).data)


class PairSetDetailApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=PairSetDetailOutput)
    def get(self, request: Request, pk: int) -> Response:
        return _detail(request, pair_set_for(request, pk))

    @extend_schema(
        description="Mark the set final (the team's entry, whatever it submits later), or not.",
        request=PairSetUpdateInput,
        responses=PairSetDetailOutput,
    )
    def patch(self, request: Request, pk: int) -> Response:
        pair_set = pair_set_for(request, pk)
        serializer = PairSetUpdateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        pair_set = services.pair_set_mark_final(
            pair_set=pair_set, user=request.user, **serializer.validated_data
        )
        return _detail(request, pair_set)


class PairSetRefusedApi(APIView):
    """The rows a partial upload left out, as CSV: line, rule, setting, reason, content."""

    permission_classes = [IsAuthenticated]

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    def get(self, request: Request, pk: int) -> HttpResponse:
        pair_set = pair_set_for(request, pk)
        if not pair_set.refused_count or not selectors.can_view_refused_rows(
            user=request.user, pair_set=pair_set
        ):
            raise Http404("This pair set has no refused rows to show.")
        return refused_rows_response(pair_set)


def refused_rows_response(pair_set: PairSet) -> HttpResponse:
    response = HttpResponse(pair_set.refused_csv, content_type="text/csv; charset=utf-8")
    filename = selectors.refused_rows_filename(pair_set=pair_set)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class PairSetSubmitApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Submit the team's draft (built one pair at a time) as a new version. "
        "The answer says which entry it replaced, or which set marked final stays the entry.",
        request=None,
        responses=DraftSubmissionOutput,
    )
    def post(self, request: Request, pk: int) -> Response:
        pair_set = pair_set_for(request, pk)
        submission = services.pair_set_draft_submit(pair_set=pair_set, user=request.user)
        response = submission_response(request, submission, DraftSubmissionOutput)
        response.status_code = status.HTTP_200_OK
        return response


class PairAddApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Check one pair and add it to the team's draft set (created if need be).",
        request=PairAddInput,
        responses={201: PairAddOutput, 400: FileRejectedOutput},
    )
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        team = breaker_team_for(request, shared_task)
        serializer = PairAddInput(data=request.data, context={"kind": shared_task.kind})
        serializer.is_valid(raise_exception=True)
        fields = dict(serializer.validated_data)
        label_map = fields.pop("label_map", None)
        pair = services.pair_add(
            team=team,
            user=request.user,
            pair=shared_task.kind.pair_input(0, fields),
            label_map=label_map,
        )
        return Response(PairAddOutput(pair).data, status=status.HTTP_201_CREATED)


class PairDetailApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=PairOutput)
    def get(self, request: Request, pk: int) -> Response:
        pair = pair_for(request, pk)
        if not selectors.can_view_pair_set(user=request.user, pair_set=pair.pair_set):
            # Seen only as contestable: the contest view of it, without team or rationale.
            contested = _contested_ids(request, pair.pair_set.shared_task)
            context = {"request": request, "contested_ids": contested}
            return Response(ContestablePairOutput(pair, context=context).data)
        return Response(PairOutput(pair).data)

    @extend_schema(description="Remove a pair from the team's draft.", responses={204: None})
    def delete(self, request: Request, pk: int) -> Response:
        pair = pair_for(request, pk)
        services.pair_remove(pair=pair, user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _contested_ids(request: Request, shared_task: SharedTask) -> set[int]:
    """The pairs the viewer's team has contested."""
    team = selectors.team_of(user=request.user, shared_task=shared_task)
    if team is None:
        return set()
    return set(Contest.objects.filter(team=team).values_list("pair_id", flat=True))


class ContestablePairListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="During the contest phase: the entry pairs of the other teams, which "
        "members of any team may contest. Builder teams see them once builders' pair "
        "predictions are final (the pair-prediction window has closed). While label "
        "validation is open, a validator's team never sees a pair still waiting for votes "
        "(it may be asked to label it blind): `held_for_validation` counts them.",
        parameters=[PAGE_PARAMETER],
        responses=ContestablePairOutput(many=True),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        team = selectors.team_of(user=request.user, shared_task=shared_task)
        if team is None:
            raise PermissionDenied("Only members of a team in this shared task contest labels.")
        withheld = selectors.labels_withheld_until(team=team)
        if withheld is not None and selectors.contest_phase_is_open(shared_task=shared_task):
            raise DjangoValidationError(
                "Builder teams see the variants' labels once their pair predictions are "
                f"final, at {moment_text(withheld)} (server time)."
            )
        held = selectors.pairs_held_for_validation(user=request.user, shared_task=shared_task)
        queryset = selectors.contestable_pair_list(
            user=request.user, shared_task=shared_task, held=held
        )
        contested = _contested_ids(request, shared_task)
        response = paginated(
            self, request, queryset, ContestablePairOutput, contested_ids=contested
        )
        # Pairs left out because the caller's team may still be asked to validate them.
        response.data["held_for_validation"] = len(held)
        return response


class PairContestListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(responses=ContestOutput(many=True))
    def get(self, request: Request, pk: int) -> Response:
        pair = pair_for(request, pk)
        shared_task = pair.pair_set.shared_task
        contests = selectors.contest_list(user=request.user, shared_task=shared_task).filter(
            pair=pair
        )
        context = output_context(request, shared_task)
        return Response(ContestOutput(contests, many=True, context=context).data)

    @extend_schema(
        description="Contest the pair's label (contest phase; members of other teams).",
        request=ContestInput,
        responses={201: ContestOutput},
    )
    def post(self, request: Request, pk: int) -> Response:
        pair = pair_for(request, pk)
        serializer = ContestInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        contest = services.contest_create(pair=pair, user=request.user, **serializer.validated_data)
        context = output_context(request, pair.pair_set.shared_task)
        return Response(
            ContestOutput(contest, context=context).data, status=status.HTTP_201_CREATED
        )


class ContestListApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("status", str, enum=Contest.Status.values), PAGE_PARAMETER],
        responses=ContestOutput(many=True),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        queryset = selectors.contest_list(user=request.user, shared_task=shared_task)
        state = request.query_params.get("status")
        if state:
            queryset = queryset.filter(status=state)
        context = output_context(request, shared_task)
        return paginated(self, request, queryset, ContestOutput, **context)


class ContestDetailApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ContestOutput)
    def get(self, request: Request, pk: int) -> Response:
        contest = contest_for(request, pk)
        context = output_context(request, contest.pair.pair_set.shared_task)
        return Response(ContestOutput(contest, context=context).data)


class ContestAdjudicateApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        description="Organizers: keep the label, relabel the variant, or exclude the pair. "
        "The decision becomes the pair's state; an earlier decision in another contest of "
        "the same pair is then superseded.",
        request=AdjudicateInput,
        responses=ContestOutput,
    )
    def post(self, request: Request, pk: int) -> Response:
        contest = contest_for(request, pk)
        shared_task = contest.pair.pair_set.shared_task
        if not task_selectors.is_organizer(user=request.user, shared_task=shared_task):
            raise PermissionDenied("Only the organizers of this shared task adjudicate contests.")
        serializer = AdjudicateInput(data=request.data)
        serializer.is_valid(raise_exception=True)
        adjudication = services.contest_adjudicate(
            contest=contest, actor=request.user, **serializer.validated_data
        )
        context = output_context(request, shared_task)
        return Response(ContestOutput(adjudication.contest, context=context).data)
