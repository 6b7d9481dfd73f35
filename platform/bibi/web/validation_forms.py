"""The validator's vote: the variant's label, or "unclear", with flags. The service
(``bibi.pairs.validation.services.validation_submit``) checks the vote; the form only
shapes it."""

from __future__ import annotations

from typing import Any

from django import forms

from bibi.sharedtasks.models import SharedTask


class LabelChoiceField(forms.ChoiceField):
    """A label chosen from the task's, ignoring case as the service does ("Positive" is
    ``positive``)."""

    def to_python(self, value: Any) -> str:
        text = super().to_python(value).strip()
        known = {str(key).casefold(): str(key) for key, _ in self.choices}
        return known.get(text.casefold(), text)


class ValidationVoteForm(forms.Form):
    label = LabelChoiceField(
        widget=forms.RadioSelect,
        label="The variant's label",
        help_text="As you read the variant yourself; none if you mark it unclear.",
        error_messages={"required": "Give the variant a label, or mark it unclear."},
    )
    not_minimal = forms.BooleanField(
        required=False,
        label="Not a minimal edit",
        help_text="The variant changes more than it needs to, or rewrites the original.",
    )
    not_fluent = forms.BooleanField(
        required=False,
        label="Not fluent, or ungrammatical",
        help_text="A careful writer would not write the variant.",
    )
    original_mislabelled = forms.BooleanField(
        required=False,
        label="The original is mislabelled",
        help_text="The starter set's label of the original is wrong.",
    )
    unclear = forms.BooleanField(
        required=False,
        label="Unclear: no label fits",
        help_text="The variant is ambiguous or makes no sense.",
    )
    note = forms.CharField(
        required=False,
        max_length=2000,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Note",
        help_text="Why, if it helps the organizers (they alone read it).",
    )

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["label"].choices = [(label, label) for label in shared_task.labels]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # An unclear variant has no label: the missing one is no error then.
        if cleaned.get("unclear") and "label" in self.errors and not self.data.get("label"):
            del self.errors["label"]
            cleaned["label"] = ""
        return cleaned
