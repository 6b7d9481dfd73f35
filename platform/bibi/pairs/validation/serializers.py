"""What the validation API reads and answers (``apis``).

Blind on purpose: what a validator reads of a pair (``ValidationItemOutput``) is the
original with its starter label, the variant, and the task's labels. Never the label the
team claimed, the team, the pair set, the pair's id, its rationale or its tags: the item is
named by the validation's own id.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from drf_spectacular.utils import inline_serializer
from rest_framework import serializers

from bibi.pairs.models import LabelValidation


class ValidationItemOutput(serializers.ModelSerializer):
    """A pair as its validator sees it: no claimed label, team, set, id or rationale."""

    original_text = serializers.CharField(source="pair.original_text")
    original_label = serializers.CharField(source="pair.original_label")
    variant_text = serializers.CharField(source="pair.variant_text")
    # Items of two texts (a sentence pair's hypotheses); '' for one text.
    original_text_b = serializers.CharField(source="pair.original_text_b")
    variant_text_b = serializers.CharField(source="pair.variant_text_b")
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
            "original_text_b",
            "variant_text_b",
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

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        kind = self.context.get("kind")
        if kind is None:  # the schema: every type's fields
            return fields
        # The second texts only where items have two (a sentence pair's hypotheses).
        texts = {*kind.pair_fields("original"), *kind.pair_fields("variant")}
        return {
            name: field
            for name, field in fields.items()
            if not name.endswith("_text_b") or name in texts
        }

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
