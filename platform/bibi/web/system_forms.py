"""The builders' forms: a system, a model archive, self-reported predictions (one file or
several). The shape of what was typed only; the services check the rest."""

from __future__ import annotations

from typing import Any

from django import forms

from bibi.sharedtasks.models import SharedTask
from bibi.systems.models import Prediction, System
from bibi.web.forms import LabelMapField


class SystemCreateForm(forms.Form):
    name = forms.CharField(max_length=120, label="System name")
    kind = forms.ChoiceField(choices=System.Kind.choices, widget=forms.RadioSelect)


class ArchiveUploadForm(forms.Form):
    archive = forms.FileField(
        label="Model archive",
        help_text="A .zip or .tar.gz of a transformers or bibi-native model directory.",
        widget=forms.ClearableFileInput(attrs={"accept": ".zip,.tar.gz,.tgz"}),
    )
    label_mapping = LabelMapField(
        label="Label mapping",
        help_text="Only if the model's label names differ from the task's: MODEL_LABEL=TASK_LABEL "
        "pairs separated by commas, e.g. LABEL_0=negative,LABEL_1=positive.",
    )


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One file or several chosen together: cleaned to a list."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(**kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[Any]:  # type: ignore[override]
        each = data if isinstance(data, list | tuple) else [data]
        return [super(MultipleFileField, self).clean(item, initial) for item in each]


class PredictionsUploadForm(forms.Form):
    """A self-reported system's predictions: one file, or several that together predict every
    item (one per breaker team); the formats and the help text are the task type's
    (``TaskType.prediction_formats``, ``predictions_file_help``), and a task without labels
    has no label map."""

    file = MultipleFileField(label="Predictions file(s)")
    source = forms.ChoiceField(
        choices=[
            (Prediction.Source.BLIND_DEV, "The blind dev set (during the build phase)"),
            (Prediction.Source.PAIRS, "The pair texts (after the break phase)"),
        ],
        widget=forms.RadioSelect,
        label="Predictions for",
    )
    format = forms.ChoiceField(
        required=False,
        help_text="By the content: a first row naming columns is a header (CSV or TSV, by "
        "its separator); a line starting with { is JSON Lines; the file's name is not read.",
    )
    label_map = LabelMapField(label="Label map")

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        kind = shared_task.kind
        self.fields["file"].help_text = kind.predictions_file_help
        format_field = self.fields["format"]
        assert isinstance(format_field, forms.ChoiceField)
        format_field.choices = [("", "Judge by the content"), *kind.prediction_formats]
        if not kind.labelled:
            # Answers are not labels: nothing to translate.
            del self.fields["label_map"]
