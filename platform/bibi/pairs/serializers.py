"""Serializers of the pairs API: what a pair set, a pair and a contest look like to whoever
asks (``output_context`` says whose private fields they may see), and the input a
submission, a pair, a contest or a decision may carry (unknown fields refused, by name)."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from bibi.api import (
    ErrorGroupOutput,
    LabelMapField,
    LineErrorOutput,
    error_groups,
)
from bibi.files import RowError
from bibi.pairs import selectors, services
from bibi.pairs.models import Contest, Pair, PairSet
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask, Team
from bibi.tasktypes.pair_files import all_layouts, split_tags

# --- Output ------------------------------------------------------------------------------


class TeamRefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


def output_context(request: Request, shared_task: SharedTask, **extra: Any) -> dict[str, Any]:
    """What the output serializers need, asked once per request rather than once per row."""
    visible = task_selectors.private_team_ids(user=request.user, shared_task=shared_task)
    return {"private_team_ids": visible, **extra}


def sees_private(context: dict[str, Any], team_id: int) -> bool:
    visible = context["private_team_ids"]
    return visible is None or team_id in visible


def team_ref(context: dict[str, Any], team: Team) -> dict[str, Any]:
    private = sees_private(context, team.id)
    return {"id": team.id, "name": team.name if private else team.public_name}


class PairOutput(serializers.ModelSerializer):
    original_id = serializers.CharField(source="original.external_id")

    class Meta:
        model = Pair
        fields = [
            "id",
            "row",
            "source_id",
            "original_id",
            "original_text",
            "original_label",
            "variant_text",
            "variant_label",
            "rationale",
            "tags",
            "edit_distance",
            "effective_label",
            "is_excluded",
            "question",
            "original_answers",
            "variant_answers",
        ]


def _one_of(choices: type) -> serializers.CharField:
    # Plain strings, not enums: other apps have fields named status and source too, and
    # the schema's enum names would collide.
    return serializers.CharField(read_only=True, help_text=f"One of: {', '.join(choices.values)}.")


class PairSetOutput(serializers.ModelSerializer):
    shared_task = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    status = _one_of(PairSet.Status)
    source = _one_of(PairSet.Source)
    team = serializers.SerializerMethodField()
    submitted_by = serializers.SerializerMethodField()
    pair_count = serializers.IntegerField(read_only=True)
    is_entry = serializers.SerializerMethodField()
    refused_url = serializers.SerializerMethodField(
        help_text="For a partial upload that left rows out: the CSV of those rows (line, "
        "rule, setting, reason, content), for the team and the organizers; else null."
    )

    class Meta:
        model = PairSet
        fields = [
            "id",
            "shared_task",
            "team",
            "status",
            "source",
            "filename",
            "file_format",
            "layout",
            "encoding",
            "is_final",
            "is_entry",
            "pair_count",
            "refused_count",
            "refused_url",
            "submitted_by",
            "created_at",
            "submitted_at",
        ]

    def get_refused_url(self, pair_set: PairSet) -> str | None:
        request = self.context.get("request")
        if not pair_set.refused_count or pair_set.id is None or request is None:
            return None
        if not selectors.can_view_refused_rows(user=request.user, pair_set=pair_set):
            return None
        return request.build_absolute_uri(reverse("pair-set-refused", args=[pair_set.id]))

    @extend_schema_field(TeamRefOutput)
    def get_team(self, pair_set: PairSet) -> dict[str, Any]:
        return team_ref(self.context, pair_set.team)

    def get_submitted_by(self, pair_set: PairSet) -> str | None:
        if pair_set.submitted_by is None or not sees_private(self.context, pair_set.team_id):
            return None
        return pair_set.submitted_by.get_username()

    def get_is_entry(self, pair_set: PairSet) -> bool:
        return pair_set.id in self.context["entry_ids"]


class PairSetDetailOutput(PairSetOutput):
    pairs = serializers.SerializerMethodField()

    class Meta(PairSetOutput.Meta):
        fields = [*PairSetOutput.Meta.fields, "pairs"]

    @extend_schema_field(PairOutput(many=True))
    def get_pairs(self, pair_set: PairSet) -> list[dict[str, Any]]:
        return PairOutput(selectors.pair_list(pair_set=pair_set), many=True).data


class SetRefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    pair_count = serializers.IntegerField()


def _set_ref(pair_set: PairSet | None) -> dict[str, int] | None:
    return None if pair_set is None else {"id": pair_set.id, "pair_count": pair_set.pair_count}


class SubmissionFields(serializers.Serializer):
    """What a submission did to the team's entry, and its warnings (``context["submission"]``)."""

    dry_run = serializers.SerializerMethodField()
    replaced_entry = serializers.SerializerMethodField(
        help_text="The entry this set took over from (it is no longer scored), if any."
    )
    final_entry = serializers.SerializerMethodField(
        help_text="The set marked final, which stays the entry instead of this one, if any."
    )
    warnings = serializers.SerializerMethodField(
        help_text="Problems that do not stop the set, by line (0: the set as a whole)."
    )
    refused_groups = serializers.SerializerMethodField(
        help_text="A partial upload: the problems of the rows it left out, by kind."
    )
    refused = serializers.SerializerMethodField(
        help_text="A partial upload: the first problems of the rows it left out, by line."
    )

    def get_dry_run(self, pair_set: PairSet) -> bool:
        return self.context["submission"].dry_run

    @extend_schema_field(SetRefOutput(allow_null=True))
    def get_replaced_entry(self, pair_set: PairSet) -> dict[str, int] | None:
        return _set_ref(self.context["submission"].replaced_entry)

    @extend_schema_field(SetRefOutput(allow_null=True))
    def get_final_entry(self, pair_set: PairSet) -> dict[str, int] | None:
        return _set_ref(self.context["submission"].final_entry)

    @extend_schema_field(LineErrorOutput(many=True))
    def get_warnings(self, pair_set: PairSet) -> list[dict[str, Any]]:
        return [
            {"line": warning.line, "reason": warning.reason}
            for warning in self.context["submission"].warnings
        ]

    @extend_schema_field(ErrorGroupOutput(many=True))
    def get_refused_groups(self, pair_set: PairSet) -> list[dict[str, Any]]:
        refused = self.context["submission"].refused
        return error_groups(refused) if refused else []

    @extend_schema_field(LineErrorOutput(many=True))
    def get_refused(self, pair_set: PairSet) -> list[dict[str, Any]]:
        refused = self.context["submission"].refused
        return [{"line": e.line, "reason": e.reason} for e in refused or []]


SUBMISSION_FIELDS = [
    "dry_run",
    "replaced_entry",
    "final_entry",
    "warnings",
    "refused_groups",
    "refused",
]


class PairSetSubmissionOutput(SubmissionFields, PairSetOutput):
    """A submitted set, or for a dry run the set it would be (no id, nothing stored)."""

    class Meta(PairSetOutput.Meta):
        fields = [*PairSetOutput.Meta.fields, *SUBMISSION_FIELDS]

    def get_is_entry(self, pair_set: PairSet) -> bool:
        return self.context["submission"].is_entry


class DraftSubmissionOutput(SubmissionFields, PairSetDetailOutput):
    class Meta(PairSetDetailOutput.Meta):
        fields = [*PairSetDetailOutput.Meta.fields, *SUBMISSION_FIELDS]

    def get_is_entry(self, pair_set: PairSet) -> bool:
        return self.context["submission"].is_entry


def submission_response(
    request: Request, submission: services.PairSetSubmission, output: type
) -> Response:
    pair_set = submission.pair_set
    context = output_context(request, pair_set.shared_task, submission=submission)
    context["request"] = request
    code = status.HTTP_200_OK if submission.dry_run else status.HTTP_201_CREATED
    return Response(output(pair_set, context=context).data, status=code)


class ContestablePairOutput(serializers.ModelSerializer):
    """An entry pair as another team sees it during the contest phase: no team, no rationale."""

    original_id = serializers.CharField(source="original.external_id")
    variant_label = serializers.CharField(source="effective_label")
    contested_by_my_team = serializers.SerializerMethodField()

    class Meta:
        model = Pair
        fields = [
            "id",
            "original_id",
            "original_text",
            "original_label",
            "variant_text",
            "variant_label",
            "is_excluded",
            "contested_by_my_team",
        ]

    def get_contested_by_my_team(self, pair: Pair) -> bool:
        return pair.id in self.context["contested_ids"]


class ContestOutput(serializers.ModelSerializer):
    """A contest and its decision. ``status`` is what this contest decided; whether that is
    the pair's state is ``decision_state``: ``current``, or ``superseded`` by a later
    decision in another contest of the same pair (``open`` while undecided). The pair's
    state itself is ``pair_effective_label`` and ``pair_is_excluded``."""

    pair = serializers.IntegerField(source="pair_id")
    status = _one_of(Contest.Status)
    decision_state = serializers.CharField(
        read_only=True, help_text="One of: open, current, superseded."
    )
    is_current = serializers.SerializerMethodField()
    pair_effective_label = serializers.CharField(source="pair.effective_label")
    pair_is_excluded = serializers.BooleanField(source="pair.is_excluded")
    author_team = serializers.SerializerMethodField()
    team = serializers.SerializerMethodField()
    created_by = serializers.SerializerMethodField()

    class Meta:
        model = Contest
        fields = [
            "id",
            "pair",
            "author_team",
            "origin",
            "team",
            "created_by",
            "reason",
            "created_at",
            "status",
            "new_label",
            "note",
            "decided_at",
            "decision_state",
            "is_current",
            "pair_effective_label",
            "pair_is_excluded",
        ]

    def get_is_current(self, contest: Contest) -> bool:
        return contest.decision_state == "current"

    @extend_schema_field(TeamRefOutput)
    def get_author_team(self, contest: Contest) -> dict[str, Any]:
        return team_ref(self.context, contest.pair.pair_set.team)

    @extend_schema_field(TeamRefOutput(allow_null=True))
    def get_team(self, contest: Contest) -> dict[str, Any] | None:
        # A contest opened by label validation has no team.
        return team_ref(self.context, contest.team) if contest.team is not None else None

    def get_created_by(self, contest: Contest) -> str | None:
        if contest.created_by is None or contest.team_id is None:
            return None
        if not sees_private(self.context, contest.team_id):
            return None
        return contest.created_by.get_username()


# --- Input -------------------------------------------------------------------------------


def _text(**kwargs: Any) -> serializers.CharField:
    # Spacing is the checks' business (and reported by row), not the serializer's.
    return serializers.CharField(allow_blank=True, trim_whitespace=False, **kwargs)


class TagsField(serializers.ListField):
    """A list of tag names; ``"semantics;pragmatics"`` is read as a list too, as in files."""

    def to_internal_value(self, data: Any) -> list[str]:
        if isinstance(data, str):
            data = list(split_tags(data))
        return super().to_internal_value(data)


class KnownFieldsOnly(serializers.Serializer):
    """Refuses fields it does not know, as a pair-set file refuses unknown columns: a typo
    ("varient_label") must not be silently dropped."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(str(name) for name in data if name not in self.fields)
            if unknown:
                names = ", ".join(repr(name[:60]) for name in unknown[:10])
                message = f"unknown field(s) {names}: the fields are {', '.join(self.fields)}"
                raise serializers.ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [message]})
        return super().to_internal_value(data)


DRY_RUN_HELP = (
    "Check and answer exactly as a submission would (warnings, the entry it would replace), "
    "but store nothing and count nothing against the quota. Also ?dry_run=true."
)


class PairInputSerializer(KnownFieldsOnly):
    """One pair of a JSON list or form, in the fields of its task type's pair layout
    (``context["kind"]``: ``TaskType.pair_layouts[0]``; the schema lists every type's)."""

    original_id = _text(required=False, max_length=200)
    original_text = _text(required=False)
    original_label = _text(required=False, max_length=100)
    # Required by the checks (which say so by row) where the type's items have one text.
    variant_text = _text(required=False)
    # Required by the checks of a labelled task (which say so by row), absent in a span task.
    variant_label = _text(required=False, max_length=100)
    rationale = _text(required=False)
    tags = TagsField(child=serializers.CharField(max_length=100), required=False, max_length=50)
    question = _text(required=False, help_text="Span tasks: the original's question.")
    variant_answers = serializers.JSONField(
        required=False,
        help_text="Span tasks: the variant's answers, a list of texts or {start, end} objects "
        "(or texts joined by ' ### '); none: the original's answers, found in the variant.",
    )

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        # Every other column of a one-pair-a-row layout is a text (a sentence pair's
        # original_premise, variant_hypothesis, ...).
        for layout in all_layouts():
            for name in layout.columns if layout.by_original else ():
                if name not in fields:
                    fields[name] = _text(required=False, help_text=f"The {layout.name} layout.")
        kind = self.context.get("kind")
        if kind is None:  # the schema: every type's fields
            return fields
        own = set(kind.pair_layouts[0].columns)
        return {name: field for name, field in fields.items() if name in own or name == "label_map"}


APPEND_TO_HELP = (
    "The id of a submitted set of the team: the new set holds its pairs and these (a fix of the "
    "rows a partial upload refused). Without it, these pairs are a set of their own, which "
    "replaces the entry unless a set is marked final."
)


def append_to_field() -> serializers.IntegerField:
    return serializers.IntegerField(required=False, min_value=1, help_text=APPEND_TO_HELP)


class PairSetJsonInput(KnownFieldsOnly):
    pairs = serializers.ListField(child=PairInputSerializer(), allow_empty=False)
    label_map = LabelMapField()
    dry_run = serializers.BooleanField(default=False, help_text=DRY_RUN_HELP)
    append_to = append_to_field()


class PairSetFileInput(serializers.Serializer):
    file = serializers.FileField()
    format = serializers.ChoiceField(choices=["csv", "tsv", "jsonl"], required=False)
    label_map = LabelMapField()
    dry_run = serializers.BooleanField(default=False, help_text=DRY_RUN_HELP)
    partial = serializers.BooleanField(
        default=False,
        help_text="Store the pairs that pass and list the refused rows (downloadable as CSV), "
        "instead of refusing the whole file when one pair fails.",
    )
    append_to = append_to_field()


class PairAddInput(PairInputSerializer):
    label_map = LabelMapField()


class PairAddOutput(PairOutput):
    warnings = serializers.SerializerMethodField(
        help_text="Problems that do not stop the pair (e.g. an edit systems may not see)."
    )

    class Meta(PairOutput.Meta):
        fields = [*PairOutput.Meta.fields, "warnings"]

    @extend_schema_field(LineErrorOutput(many=True))
    def get_warnings(self, pair: Pair) -> list[dict[str, Any]]:
        return [{"line": w.line, "reason": w.reason} for w in getattr(pair, "warnings", [])]


class PairSetUpdateInput(serializers.Serializer):
    is_final = serializers.BooleanField()


class ContestInput(serializers.Serializer):
    reason = serializers.CharField(max_length=services.REASON_MAX_CHARS)


class AdjudicateInput(serializers.Serializer):
    decision = serializers.ChoiceField(choices=Contest.Decision.choices)
    note = serializers.CharField(max_length=services.REASON_MAX_CHARS)
    new_label = serializers.CharField(required=False, allow_blank=True, max_length=100)


def _flatten(messages: Any) -> list[str]:
    if isinstance(messages, dict):
        return [
            f"{key}: {message}" for key, value in messages.items() for message in _flatten(value)
        ]
    if isinstance(messages, list):
        return [message for value in messages for message in _flatten(value)]
    return [str(messages)]


def row_errors(errors: dict[str, Any]) -> list[RowError] | None:
    """DRF's errors of single pairs in a JSON list, as row errors like a file's."""
    pairs = errors.get("pairs")
    if set(errors) != {"pairs"} or not isinstance(pairs, dict):
        return None
    return [
        RowError(line=int(index) + 1, reason=reason.replace("non_field_errors: ", ""))
        for index, fields in pairs.items()
        for reason in _flatten(fields)
    ]
