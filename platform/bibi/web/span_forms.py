"""The forms of a span task's pair: the variant's answer picked in the variant (selected, or
typed), on the single-pair form and in the pair editor (``bibi.web.kinds`` gives them to the
span kind of answer)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.forms import Script

from bibi.sharedtasks.models import SharedTask
from bibi.tasktypes.span_extraction.answers import answer_locate_once
from bibi.texts import normalize_text, normalized_offset
from bibi.web.forms import PairAddForm, PairEditorForm


class SpanAnswerForm(forms.Form):
    """A span pair's variant answer, picked in the variant: ``answer_start``/``answer_end``
    are what ``span_answer.js`` measured of a selection in the variant field; without the
    script the answer is typed and must occur exactly once in the variant. ``clean`` leaves
    the variant normalized (``bibi.texts.normalize_text``, as the pair checks store it) and
    ``variant_answers`` offsets into it, or "" for the original's answers found again; the
    pair checks (``bibi.tasktypes.span_extraction.checks``) judge the rest. Its page marks its form
    ``data-span-answer`` (``picks_answer``) and loads ``span_answer.js`` (``media``)."""

    picks_answer = True

    class Media:
        js = [Script("web/span_answer.js", defer=True)]

    variant_answer = forms.CharField(
        required=False,
        max_length=1000,
        label="The variant's answer",
        help_text="Select the answer in the variant, or type it (it must occur once in the "
        "variant). Left empty: the original's answers, found again in the variant.",
    )
    answer_start = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    answer_end = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        raw = data.get("variant_text")
        if raw is None:
            return data
        # A textarea sends line breaks as CR LF; the script measured them as one character.
        raw = raw.replace("\r\n", "\n")
        variant = normalize_text(raw)
        data["variant_text"] = variant
        typed = normalize_text(data.get("variant_answer") or "")
        start, end = data.get("answer_start"), data.get("answer_end")
        if start is None and end is None:
            data["variant_answers"] = self._typed(variant, typed) if typed else ""
            return data
        if start is None or end is None or not 0 <= start < end <= len(raw):
            self.add_error(
                "variant_answer",
                "The selected answer is not a part of the variant: select it again.",
            )
            return data
        selected = normalize_text(raw[start:end])
        if typed and typed != selected:
            self.add_error(
                "variant_answer",
                f"The answer typed ({typed!r}) is not the one selected ({selected!r}): "
                "select it again, or clear the answer and type it.",
            )
            return data
        # The selection's place in the normalized variant (a leading space it took is dropped).
        at = normalized_offset(raw, start)
        found = variant.find(selected, at)
        if not selected or found < 0 or found - at > 1:
            self.add_error(
                "variant_answer", "The selected answer is only spaces: select words of the variant."
            )
            return data
        data["variant_answers"] = [{"start": found, "end": found + len(selected)}]
        return data

    def _typed(self, variant: str, typed: str) -> list[dict[str, Any]] | str:
        answer, problem = answer_locate_once(variant, typed)
        if answer is None:
            self.add_error("variant_answer", f"{problem[0].upper()}{problem[1:]}.")
            return ""
        return [{"start": answer["start"], "end": answer["end"]}]


def _span_fields(form: forms.Form) -> None:
    """A span pair has no label (its form drops the field) and keeps its question."""
    del form.fields["variant_label"]
    variant = form.fields["variant_text"]
    variant.help_text = "The original sentence with a minimal edit; the question stays."


class SpanPairAddForm(SpanAnswerForm, PairAddForm):
    """The single-pair form of a span task: the question is the original's, so it is not asked."""

    field_order = ["original_id", "variant_text", "variant_answer", "rationale", "tags"]

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, shared_task=shared_task, **kwargs)
        _span_fields(self)


class SpanPairEditorForm(SpanAnswerForm, PairEditorForm):
    """The pair editor's form on a span task. ``machine_text`` is set by an answer-moving
    suggestion's "Try": while the variant is still that text, the editor asks for its answer
    (``bibi.web.span_guidance.span_machine_problem``)."""

    field_order = SpanPairAddForm.field_order

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, shared_task=shared_task, **kwargs)
        _span_fields(self)
