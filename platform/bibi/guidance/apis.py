"""REST API of guidance for breakers: the boundary ranking (paginated), and suggestions or
draft checks for one starter original as jobs to poll. Who sees it is ``visibility``'s rule.
"""

from __future__ import annotations

import functools
from typing import Any

from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from bibi.api import paginated
from bibi.guidance import jobs, ranking, suggest, visibility
from bibi.sharedtasks.apis.common import shared_task_for
from bibi.throttling import UserRateThrottle


class GuidanceSystemOutput(serializers.Serializer):
    system_id = serializers.IntegerField()
    system = serializers.SerializerMethodField()
    version_id = serializers.IntegerField()
    label = serializers.CharField()
    confidence = serializers.FloatField()
    uncertainty = serializers.FloatField(help_text="1 − confidence, shown beside λmax.")
    lambda_max = serializers.FloatField()
    percentile = serializers.FloatField()

    def get_system(self, view: ranking.SystemView) -> str:
        return f"{view.team_name} / {view.system_name}"


class GuidanceWordOutput(serializers.Serializer):
    text = serializers.CharField()
    start = serializers.IntegerField(help_text="Character offset into the word's text.")
    end = serializers.IntegerField()
    leverage = serializers.FloatField(allow_null=True)
    segment = serializers.CharField(
        help_text="The original's text the word is in: text, or a sentence pair's text_b "
        "(the hypothesis)."
    )


class GuidanceOriginalOutput(serializers.Serializer):
    """A starter original in the boundary ranking (``systems`` empty when the task shows
    only the ranking); an item of several texts has each by its field (a sentence pair's
    hypothesis is ``text_b``)."""

    id = serializers.CharField(source="example.external_id")
    text = serializers.CharField(source="example.text")
    label = serializers.CharField(source="example.label")
    rank = serializers.IntegerField()
    boundary_score = serializers.FloatField()
    confidence = serializers.FloatField(allow_null=True)
    uncertainty = serializers.FloatField(
        allow_null=True, help_text="1 − the systems' mean confidence, shown beside λmax."
    )
    disagreements = serializers.IntegerField()
    strategy = serializers.ChoiceField(choices=ranking.STRATEGIES)
    strategy_tags = serializers.ListField(child=serializers.CharField())
    advice = serializers.CharField()
    systems = serializers.SerializerMethodField()
    words = GuidanceWordOutput(many=True)

    @extend_schema_field(GuidanceSystemOutput(many=True))
    def get_systems(self, original: ranking.RankedOriginal) -> list[dict[str, Any]]:
        if not self.context["per_system"]:
            return []
        return GuidanceSystemOutput(original.systems, many=True).data

    def to_representation(self, original: ranking.RankedOriginal) -> dict[str, Any]:
        data = super().to_representation(original)
        kind = self.context["shared_task"].kind
        data.update(kind.item_fields(kind.item(original.example)))
        for key in ("confidence", "uncertainty"):
            if data[key] is not None and data[key] != data[key]:
                data[key] = None  # NaN: no system has this original
            if not self.context["per_system"]:
                data[key] = None
        return data


def _system_ids(raw: list[str]) -> list[int] | None:
    values = [part for value in raw for part in value.split(",") if part.strip()]
    if not values:
        return None
    try:
        return [int(value) for value in values]
    except ValueError:
        raise ValidationError({"system": "Give system ids as integers."}) from None


class GuidanceListApi(APIView):
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "order",
                str,
                enum=list(ranking.ORDERS),
                description="boundary "
                "(rank 1 first, the default) or confidence (least confident first).",
            ),
            OpenApiParameter(
                "system",
                int,
                many=True,
                description="Rank over these ready "
                "hosted systems only (repeat, or comma-separated).",
            ),
            OpenApiParameter("label", str, description="Only originals with this gold label."),
        ],  # fmt: skip
        responses=GuidanceOriginalOutput(many=True),
    )
    def get(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        sight = visibility.guidance_sight_require(user=request.user, shared_task=shared_task)
        system_ids = _system_ids(request.query_params.getlist("system"))
        if system_ids is not None and not sight.per_system:
            raise PermissionDenied("This task shows the ranking only, not per-system guidance.")
        originals = ranking.boundary_ranking(
            shared_task,
            system_ids=system_ids,
            label=request.query_params.get("label") or None,
            order=request.query_params.get("order") or "boundary",
            sight=sight,
            with_words=False,
        )
        return paginated(
            self,
            request,
            originals,
            GuidanceOriginalOutput,
            prepare=functools.partial(ranking.ranking_words, shared_task=shared_task),
            per_system=sight.per_system,
            shared_task=shared_task,
        )


class GuidanceSuggestInput(serializers.Serializer):
    original_id = serializers.CharField(help_text="The starter original's id.")
    variant_text = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="A draft variant to check; without it, suggestions for the original. "
        "Sentence pairs: the variant's premise (also as variant_premise).",
    )
    variant_text_b = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        help_text="Sentence pairs: the variant's hypothesis (also as variant_hypothesis). A "
        "text left out is the original's.",
    )
    variant_label = serializers.CharField(
        required=False, help_text="The variant's intended gold label (default: the original's)."
    )
    variant_answers = serializers.ListField(
        child=serializers.JSONField(),
        required=False,
        allow_empty=False,
        help_text="Span tasks, with variant_text: the variant's answers, as objects with "
        "'start' and 'end' (character offsets into the normalised variant, end exclusive; "
        "optional 'text') or as answer texts. Without them, the original's answers moved by an "
        "edit outside all of them, else the check is unverified.",
    )
    question = serializers.CharField(
        required=False, help_text="Span tasks: must be the original's question when given."
    )
    systems = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Default: every ready one."
    )
    top_k = serializers.IntegerField(required=False, default=5, min_value=1, max_value=20)
    words = serializers.IntegerField(required=False, default=3, min_value=1, max_value=10)


class GuidanceSuggestThrottle(UserRateThrottle):
    """Each request runs every hosted model: a rate of its own (``GUIDANCE_SUGGEST_THROTTLE``),
    counted in the cache and let through, as every API throttle, while the cache is down
    (``bibi.throttling``)."""

    scope = "guidance_suggest"


class GuidanceJobOutput(serializers.Serializer):
    job_id = serializers.CharField()
    status = serializers.ChoiceField(choices=["waiting"])
    location = serializers.CharField(help_text="Poll this address for the answer.")


class GuidanceSuggestApi(APIView):
    """Verified suggestions for a starter original, or a draft variant checked on every ready
    hosted system: a job on the ``interactive`` queue. 200 with the answer when it came within
    ``GUIDANCE_SUGGEST_WAIT`` seconds, else 202 with the job to poll (``Location``); 429 naming
    the cap when too many jobs are in flight; 503 (with ``Retry-After``) when it failed."""

    permission_classes = [IsAuthenticatedOrReadOnly]
    throttle_classes = [*api_settings.DEFAULT_THROTTLE_CLASSES, GuidanceSuggestThrottle]

    @extend_schema(
        request=GuidanceSuggestInput,
        responses={
            200: OpenApiTypes.OBJECT,
            202: GuidanceJobOutput,
            429: OpenApiTypes.OBJECT,
            503: OpenApiTypes.OBJECT,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        shared_task = shared_task_for(request, slug)
        visibility.guidance_sight_require(user=request.user, shared_task=shared_task)
        data = GuidanceSuggestInput(data=_pair_names(shared_task, request.data))
        data.is_valid(raise_exception=True)
        values = data.validated_data
        systems = values.get("systems")
        try:
            outcome = suggest.suggest_start(
                shared_task=shared_task,
                user=request.user,
                request=suggest.SuggestRequest(
                    original_id=values["original_id"],
                    variant_text=values.get("variant_text"),
                    variant_text_b=values.get("variant_text_b"),
                    variant_label=values.get("variant_label"),
                    system_ids=tuple(systems) if systems else None,
                    top_k=values["top_k"],
                    words=values["words"],
                    variant_answers=tuple(values["variant_answers"])
                    if "variant_answers" in values
                    else None,
                    question=values.get("question"),
                ),
            )
        except jobs.CapReached as cap:
            return Response(
                {"detail": cap.message},
                status=status.HTTP_429_TOO_MANY_REQUESTS,
                headers={"Retry-After": str(cap.retry_after)},
            )
        return job_response(request, slug, outcome)


def _pair_names(shared_task: Any, data: Any) -> Any:
    """The request's fields with a variant text named as in the task type's pairs (a sentence
    pair's ``variant_premise``, ``variant_hypothesis``) under the pair field that holds it
    (``variant_text``, ``variant_text_b``)."""
    renames = shared_task.kind.pair_layouts[0].renames
    if not hasattr(data, "items") or not any(
        name.startswith("variant_") and name in renames for name in data
    ):
        return data
    return {
        renames.get(name, name) if name.startswith("variant_") else name: value
        for name, value in data.items()
    }


class GuidanceJobApi(APIView):
    """A suggestion or draft-check job of the caller's: 200 with the answer when done, 202
    while it waits for a worker, 503 with the reason when it failed, 404 when it is not the
    caller's (or has expired)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        responses={
            200: OpenApiTypes.OBJECT,
            202: GuidanceJobOutput,
            404: OpenApiTypes.OBJECT,
            503: OpenApiTypes.OBJECT,
        }
    )
    def get(self, request: Request, slug: str, job_id: str) -> Response:
        shared_task = shared_task_for(request, slug)
        try:
            outcome = suggest.suggest_job(shared_task=shared_task, user=request.user, job_id=job_id)
        except suggest.JobNotFound as missing:
            raise NotFound(str(missing)) from None
        except suggest.JobStoreUnreachable as away:
            return Response(
                {"detail": str(away)},
                status=status.HTTP_503_SERVICE_UNAVAILABLE,
                headers={"Retry-After": "10"},
            )
        return job_response(request, slug, outcome)


def job_response(request: Request, slug: str, outcome: suggest.JobOutcome) -> Response:
    """200 with the answer, 202 with the job's address, or 503 with the reason."""
    if outcome.status == "done":
        return Response(outcome.answer)
    if outcome.status == "failed":
        return Response(
            {"detail": outcome.detail},
            status=status.HTTP_503_SERVICE_UNAVAILABLE,
            headers={"Retry-After": "10"},
        )
    location = request.build_absolute_uri(
        reverse("guidance-job", kwargs={"slug": slug, "job_id": outcome.job_id})
    )
    return Response(
        {"job_id": outcome.job_id, "status": "waiting", "location": location},
        status=status.HTTP_202_ACCEPTED,
        headers={"Location": location, "Retry-After": "1"},
    )
