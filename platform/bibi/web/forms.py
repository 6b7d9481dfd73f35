"""The pages' forms: they check the shape of what was typed; the services check the rest.

A service refuses with Django's ``ValidationError``, often keyed by the field at fault
(``{"name": "A team named ... already exists"}``); ``add_service_error`` puts each message
beside that field when the form has one, and above the form otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import ValidationError

from bibi.api import rejected_file_body
from bibi.evaluation.selectors import ItemFilter
from bibi.files import FileRejected
from bibi.labelmaps import LABEL_MAP_HELP, label_map_parse
from bibi.pairs.models import Contest, PairSet
from bibi.pairs.services import REASON_MAX_CHARS
from bibi.pairs.validation import STATES

# The admin's import form serves the organizers' page too: one form, one set of fields.
from bibi.sharedtasks.admin import ExamplesImportForm as ExamplesImportForm
from bibi.sharedtasks.models import Phase, SharedTask, Team, task_type_choices
from bibi.tasktypes import TEXT_CLASSIFICATION, task_type, task_types
from bibi.texts import blank_name_problem
from bibi.web.validation_results import validation_words


def add_service_error(form: forms.Form, error: ValidationError) -> None:
    """Show a service's refusal on ``form``: by field where it names one the form has."""
    if not hasattr(error, "error_dict"):
        form.add_error(None, error)
        return
    for field, errors in error.error_dict.items():
        messages = [message for each in errors for message in each.messages]
        if field in form.fields:
            form.add_error(field, messages)
        else:
            form.add_error(None, [f"{field.replace('_', ' ')}: {m}" for m in messages])


def add_upload_error(form: forms.Form, error: ValidationError) -> dict[str, Any] | None:
    """A refused file (``FileRejected``) as the envelope its page lists row by row
    (``bibi.api.rejected_file_body``); any other refusal goes on ``form``, and None."""
    if isinstance(error, FileRejected):
        return rejected_file_body(error)
    add_service_error(form, error)
    return None


class LabelMapField(forms.CharField):
    """``0=negative,1=positive`` into ``{"0": "negative", "1": "positive"}`` (or None)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", LABEL_MAP_HELP)
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> dict[str, str] | None:  # type: ignore[override]
        text = super().to_python(value)
        return label_map_parse(text) or None


class DateTimeLocalInput(forms.DateTimeInput):
    """The browser's date and time picker; the value is read as UTC, the server's time."""

    input_type = "datetime-local"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(format="%Y-%m-%dT%H:%M", **kwargs)


def utc_datetime_field(label: str, **kwargs: Any) -> forms.DateTimeField:
    return forms.DateTimeField(label=f"{label} (UTC)", widget=DateTimeLocalInput(), **kwargs)


# --- Accounts ------------------------------------------------------------------------------


class SignupForm(UserCreationForm):
    email = forms.EmailField(
        help_text="Used only to send you a link when you forget your password."
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_username(self) -> str:
        """Django's user name check, and the name rule's: a user name shows what it holds
        (no Hangul filler, which Django's check takes for a letter)."""
        username = super().clean_username()
        problem = blank_name_problem(username, what="The user name")
        if problem:
            raise ValidationError(problem)
        return username


# --- Shared tasks and phases ---------------------------------------------------------------


class SharedTaskCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    slug = forms.SlugField(
        max_length=80,
        help_text="The task's name in its web address: letters, digits, hyphens. It never changes.",
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False)
    task_type = forms.ChoiceField(
        choices=task_type_choices,
        initial=TEXT_CLASSIFICATION.key,
        required=False,
        help_text="What an item is and what systems answer: "
        + "; ".join(f"{kind.name}: {kind.description}" for kind in task_types())
        + ". It never changes.",
    )
    labels = forms.CharField(
        initial="negative, positive",
        required=False,
        help_text="Label tasks: the label set, in order, separated by commas.",
    )
    answer_mode = forms.ChoiceField(
        choices=SharedTask.AnswerMode.choices,
        initial=SharedTask.AnswerMode.TOKEN_F1,
        required=False,
        help_text="Span tasks: when an answer is right (changeable later in the settings).",
    )
    is_public = forms.BooleanField(
        required=False, initial=True, label="Anyone may read the task's public pages"
    )

    def clean_labels(self) -> list[str]:
        return [label.strip() for label in self.cleaned_data["labels"].split(",") if label.strip()]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        # Not given: a label task, as before there were other types.
        cleaned["task_type"] = cleaned.get("task_type") or TEXT_CLASSIFICATION.key
        kind = task_type(cleaned["task_type"])
        # Settings the type has no use for are left to the model's defaults (a span task's
        # label set stands in, unused).
        for name in kind.hidden_settings():
            cleaned.pop(name, None)
        for name, value in kind.setting_defaults.items():
            cleaned[name] = cleaned.get(name) or value
        for name, problem in kind.settings_problems(cleaned).items():
            self.add_error(name, problem)
        return cleaned


class PhaseCreateForm(forms.Form):
    kind = forms.ChoiceField(choices=Phase.Kind.choices, label="Phase")
    starts_at = utc_datetime_field("Starts")
    ends_at = utc_datetime_field("Ends")


class PhaseUpdateForm(forms.Form):
    starts_at = utc_datetime_field("Starts")
    ends_at = utc_datetime_field("Ends")


class PhaseExtendForm(forms.Form):
    ends_at = utc_datetime_field("New deadline")
    reason = forms.CharField(max_length=500, required=False, help_text="Shown in the audit log.")


class TaskInvitationForm(forms.Form):
    note = forms.CharField(
        max_length=200, required=False, help_text="Who the link is for; only organizers see it."
    )
    max_uses = forms.IntegerField(
        min_value=1,
        required=False,
        label="How many people may use it",
        help_text="Empty: any number for a plain link, 1 for a link for validators; until it "
        "expires or is revoked.",
    )
    expires_at = utc_datetime_field("Expires", required=False, help_text="Empty: in 14 days.")
    grants_validator = forms.BooleanField(
        required=False,
        label="For validators",
        help_text="Whoever accepts it gets the validator role in this task: they label other "
        "teams' pairs blind, in no team.",
    )


# --- Teams ---------------------------------------------------------------------------------


class TeamCreateForm(forms.Form):
    kind = forms.ChoiceField(
        choices=Team.Kind.choices, widget=forms.RadioSelect, label="The team builds or breaks"
    )
    name = forms.CharField(max_length=120, label="Team name")
    is_anonymous = forms.BooleanField(
        required=False,
        label="Anonymous: show an alias instead of the name to everyone but the team and the organizers",
    )


class TeamUpdateForm(forms.Form):
    name = forms.CharField(max_length=120, label="Team name")
    is_anonymous = forms.BooleanField(
        required=False,
        label="Anonymous: show an alias instead of the name to everyone but the team and the organizers",
    )


# --- Builders: bibi.web.system_forms -------------------------------------------------------


# --- Breakers ------------------------------------------------------------------------------


def _pairs_said(pair_set: PairSet) -> str:
    count = getattr(pair_set, "pair_count", None)
    size = "" if count is None else f"{count} pair{'s' * (count != 1)}, "
    return f"{size}{pair_set.filename or pair_set.source}"


class PairSetUploadForm(forms.Form):
    file = forms.FileField(
        label="Pair-set file",
        help_text="CSV, TSV or JSON Lines: one pair a row (original_id, variant_text, "
        "variant_label, optional rationale and tags), or the 2017 two-rows-a-pair layout.",
    )
    format = forms.ChoiceField(
        choices=[
            ("", "From the file name"),
            ("csv", "CSV"),
            ("tsv", "TSV"),
            ("jsonl", "JSON Lines"),
        ],
        required=False,
    )
    label_map = LabelMapField(label="Label map")
    partial = forms.BooleanField(
        required=False,
        label="Store the pairs that pass and list the refused rows",
        help_text="Off: one failing pair refuses the whole file. On: the pairs that pass "
        "become the set, and the refused rows are listed with the rule that refused each, "
        "as a file to download, fix and upload again.",
    )
    append_to = forms.TypedChoiceField(
        coerce=int,
        empty_value=None,
        required=False,
        label="Add to a set",
        help_text="A set of its own becomes your team's entry in place of the one before "
        "(unless a set is marked final). Added to a set, the file's pairs and that set's make a "
        "new set, the set itself staying as it was: how to add the fixed rows of a partial "
        "upload.",
    )

    def __init__(
        self,
        *args: Any,
        shared_task: SharedTask,
        pair_sets: Sequence[PairSet] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        kind = shared_task.kind
        if not kind.labelled:
            # Pairs without labels: nothing to translate.
            del self.fields["label_map"]
        self.fields["file"].help_text = kind.pair_file_help
        # The team's submitted sets, to add the file's pairs to.
        self.fields["append_to"].choices = [
            ("", "No: upload the file as a set of its own"),
            *(
                (pair_set.id, f"Set {pair_set.id}: {_pairs_said(pair_set)}")
                for pair_set in pair_sets
                if pair_set.status == PairSet.Status.SUBMITTED
            ),
        ]


class PairAddForm(forms.Form):
    original_id = forms.CharField(
        max_length=200,
        label="Original (its id in the starter set)",
        help_text="Pick one from the starter set page, or type its id.",
    )
    variant_text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        strip=False,
        label="Variant",
        help_text="The original with a minimal edit.",
    )
    variant_label = forms.ChoiceField(label="The variant's label")
    rationale = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        required=False,
        help_text="Why this edit should be hard for the systems.",
    )
    tags = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple, required=False, label="Strategy"
    )
    # Whether the variant's answer is picked in the variant (a span task's form): the page
    # marks the form ``data-span-answer`` for ``span_answer.js``.
    picks_answer = False

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["variant_label"].choices = [(label, label) for label in shared_task.labels]
        self.fields["tags"].choices = [(tag, tag) for tag in shared_task.strategy_tags]
        variant_fields_by_segment(self, shared_task)


def several_editable(kind: Any) -> bool:
    """Whether breakers may edit more than one text of the type's items (the task setting
    ``editable_text`` choosing which): a pair form's text left empty is then the original's."""
    return sum(1 for segment in kind.segments if segment.editable) > 1


def variant_fields_by_segment(form: forms.Form, shared_task: SharedTask) -> None:
    """A pair form's variant texts, one field per segment: where a type lets breakers edit
    more than one of its segments (the task setting ``editable_text`` choosing which),
    ``variant_text`` becomes a field per segment the task lets them edit, ``variant_<field>``,
    titled by its segment; one left empty is the original's. Types with one editable segment
    keep ``variant_text``."""
    kind = shared_task.kind
    if not several_editable(kind):
        return
    editable = kind.editable_fields(shared_task.editable_text)
    fields = {}
    for name, field in form.fields.items():
        if name != "variant_text":
            fields[name] = field
            continue
        for segment in kind.segments:
            if segment.field in editable:
                title = segment.title.lower()
                fields[f"variant_{segment.field}"] = forms.CharField(
                    widget=forms.Textarea(attrs={"rows": 3}),
                    strip=False,
                    required=False,
                    label=f"Variant {title}",
                    help_text=f"The original's {title} with a minimal edit, or as it is.",
                )
    form.fields = fields


class ContestForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        max_length=REASON_MAX_CHARS,
        help_text="Why the label is wrong. The author team and the organizers read it.",
    )


class AdjudicateForm(forms.Form):
    decision = forms.ChoiceField(choices=Contest.Decision.choices, widget=forms.RadioSelect)
    new_label = forms.ChoiceField(
        required=False, label="New label", help_text="Only for the decision 'Relabel'."
    )
    note = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2}),
        max_length=REASON_MAX_CHARS,
        help_text="The reasons for the decision: both teams read it.",
    )

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["new_label"].choices = [("", "—")] + [
            (label, label) for label in shared_task.labels
        ]


# --- Results ---------------------------------------------------------------------------------

Choices = list[tuple[int | str, str]]


class ItemFilterForm(forms.Form):
    """The item explorer's filters (a GET form). A value that is not one of the choices is
    refused beside its field and that filter left out; the others still apply."""

    team = forms.TypedChoiceField(
        label="Breaker team", required=False, coerce=int, empty_value=None
    )
    system = forms.TypedChoiceField(label="System", required=False, coerce=int, empty_value=None)
    tag = forms.ChoiceField(label="Strategy tag", required=False)
    broken = forms.ChoiceField(
        label="Broken",
        required=False,
        choices=[("", "Either"), ("yes", "Broken"), ("no", "Not broken")],
        help_text="By the system chosen, or without one by any system.",
    )
    label = forms.ChoiceField(
        label="Gold label",
        required=False,
        choices=[("", "Either"), ("kept", "Kept by the variant"), ("changed", "Changed")],
    )
    validation = forms.ChoiceField(
        label="Label validation",
        required=False,
        choices=[("", "Any state"), *((state, validation_words(state)) for state in STATES)],
        help_text="The pair's state after the validators' votes.",
    )

    def __init__(
        self,
        *args: Any,
        teams: Choices,
        systems: Choices,
        tags: list[str],
        labelled: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if not labelled:
            # Pairs without gold labels have no label to keep or change, and no label
            # validation.
            del self.fields["label"], self.fields["validation"]
        self.fields["team"].choices = [("", "Every team"), *teams]
        self.fields["system"].choices = [("", "Every system"), *systems]
        self.fields["tag"].choices = [("", "Any tag"), *((tag, tag) for tag in tags)]

    def item_filter(self) -> ItemFilter:
        """The filters that were valid (call after ``is_valid``)."""
        data = self.cleaned_data
        yes_no = {"yes": True, "no": False}
        return ItemFilter(
            team_id=data.get("team"),
            system_id=data.get("system"),
            tag=data.get("tag") or None,
            broken=yes_no.get(data.get("broken", "")),
            flipped={"changed": True, "kept": False}.get(data.get("label", "")),
            validation_state=data.get("validation") or None,
        )


class LambdaSystemForm(forms.Form):
    system = forms.TypedChoiceField(label="System", coerce=int)

    def __init__(self, *args: Any, systems: Choices, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["system"].choices = systems


class PairEditorForm(PairAddForm):
    """A pair made in the guidance editor: its original is the page's. ``machine_text`` is the
    suggested edit the variant came from (set by a suggestion's "Try"; ``machine_text_b`` the
    second text of a sentence pair's, one ``machine_<field>`` per variant text of the form): a
    pair whose variant is still that text and whose label differs from the original's is stored
    label unverified."""

    original_id = forms.CharField(max_length=200, widget=forms.HiddenInput)
    machine_text = forms.CharField(required=False, strip=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        super().__init__(*args, shared_task=shared_task, **kwargs)
        for name in [name for name in self.fields if name.startswith("variant_text")]:
            self.fields.setdefault(
                name.replace("variant_", "machine_", 1),
                forms.CharField(required=False, strip=False, widget=forms.HiddenInput),
            )
