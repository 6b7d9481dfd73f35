"""REST API of label validation, under /api/v1/ (``pairs/README.md``, "Label validation").

Blind on purpose: a validator reads a pair as ``serializers.ValidationItemOutput`` shows it,
named by the validation's own id. Organizers read every pair's votes and outcome, and each
validator's agreement with the majority.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from bibi.api import paginated
from bibi.pairs.models import LabelValidation
from bibi.pairs.validation import services
from bibi.pairs.validation.selectors import overview, queue, states
from bibi.pairs.validation.serializers import QueueStateOutput, ValidationItemOutput, VoteInput
from bibi.sharedtasks.apis.common import require_organizer, shared_task_for
from bibi.sharedtasks.models import SharedTask


def _item(request: Request, item: LabelValidation, shared_task: SharedTask) -> dict[str, Any]:
    context = {"request": request, "labels": shared_task.labels, "kind": shared_task.kind}
    return dict(ValidationItemOutput(item, context=context).data)


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
        return Response(queue.validation_queue_state(shared_task=shared_task, user=request.user))


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
        return Response(_item(request, item, shared_task))


class ValidationMineApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(responses=ValidationItemOutput(many=True))
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        history = queue.validator_history(shared_task=shared_task, user=request.user)
        return paginated(
            self,
            request,
            history,
            ValidationItemOutput,
            labels=shared_task.labels,
            kind=shared_task.kind,
        )


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
        return Response(_item(request, item, item.pair.pair_set.shared_task))


class ValidationSkipApi(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses=ValidationItemOutput)
    def post(self, request: Request, pk: int) -> Response:
        try:
            item = services.validation_skip(validation_id=_own(request, pk), user=request.user)
        except ObjectDoesNotExist:
            raise Http404("No pair with this id is handed to you.") from None
        return Response(_item(request, item, item.pair.pair_set.shared_task))


class _OrganizerReadApi(APIView):
    """A read for the task's organizers only: ``rows(request, shared_task)`` answers."""

    permission_classes = [IsAuthenticated]

    def rows(self, request: Request, shared_task: SharedTask) -> Any:
        raise NotImplementedError

    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        require_organizer(request, shared_task)
        return Response(self.rows(request, shared_task))


@extend_schema_view(
    get=extend_schema(
        description="Organizers: every entry pair's validation state, votes, flags and "
        "agreement, by team then row (``?state=`` keeps one state).",
        responses=inline_serializer("ValidationPairRows", {"rows": serializers.ListField()}),
    )
)
class ValidationPairListApi(_OrganizerReadApi):
    def rows(self, request: Request, shared_task: SharedTask) -> Any:
        rows = overview.validation_pair_rows(shared_task=shared_task)
        state = request.query_params.get("state")
        if state:
            rows = [row for row in rows if row["state"] == state]
        return {"rows": rows, "states": states.STATES}


@extend_schema_view(
    get=extend_schema(
        description="Organizers: each validator's votes and agreement with the majority, "
        "least agreeing first.",
        responses=inline_serializer("ValidatorAgreementRows", {"rows": serializers.ListField()}),
    )
)
class ValidationValidatorListApi(_OrganizerReadApi):
    def rows(self, request: Request, shared_task: SharedTask) -> Any:
        return {"rows": overview.validator_agreement_list(shared_task=shared_task)}


@extend_schema_view(
    get=extend_schema(
        description="Organizers: every submitted vote, by pair: the pair and its team, the "
        "validator, their role and team, the label, flags, note and times (the organizers' "
        "CSV on the validation page has the same columns).",
        responses=inline_serializer("ValidationVoteRows", {"rows": serializers.ListField()}),
    )
)
class ValidationVoteListApi(_OrganizerReadApi):
    def rows(self, request: Request, shared_task: SharedTask) -> Any:
        return {
            "columns": list(overview.VOTE_COLUMNS),
            "rows": overview.validation_vote_rows(shared_task=shared_task),
        }


@extend_schema_view(
    get=extend_schema(
        description="Organizers: the settings, counts by state (in all and per team) and "
        "Krippendorff's alpha per task and per team.",
        responses=inline_serializer("ValidationSummary", {"alpha": serializers.FloatField()}),
    )
)
class ValidationSummaryApi(_OrganizerReadApi):
    def rows(self, request: Request, shared_task: SharedTask) -> Any:
        return overview.validation_summary(shared_task=shared_task)
