"""The organizer's settings and schedule forms.

``TaskSettingsForm`` holds every field ``PATCH /api/v1/shared-tasks/{slug}/`` can set
(``services.SHARED_TASK_EDITABLE_FIELDS``), grouped, each explained in a sentence and its
default; the service checks and saves them. ``ScheduleForm`` holds the four phases;
``PhaseCloseNowForm`` asks to confirm closing a phase early.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import forms
from django.forms.models import fields_for_model

from bibi.sharedtasks import services as task_services
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.sharedtasks.models.tasks import SETTING_BOUNDS, bounded
from bibi.web.forms import utc_datetime_field

# Group heading → (field, what it does). The default is added from the model.
SETTING_GROUPS: dict[str, list[tuple[str, str]]] = {
    "The task": [
        ("name", "The task's name on every page."),
        ("description", "What the task is about, shown on its front page."),
        ("is_public", "Anonymous visitors may read the task's public pages."),
        ("labels", "The label set, in order, separated by commas; frozen once examples exist."),
        (
            "editable_text",
            "Which text of an item breakers may edit (a sentence pair's premise or hypothesis); "
            "λmax and word hints count that text's words. Frozen once examples exist.",
        ),
        ("allow_anonymous_teams", "Teams may show an alias instead of their name."),
    ],
    "Minimal-pair rules": [
        (
            "pair_min_shared_token_ratio",
            "The least share (0 to 1) of a variant's tokens that must come from its original.",
        ),
        (
            "pair_max_edit_distance",
            "Token edits (insert, delete, replace) always allowed, however short the original.",
        ),
        (
            "pair_max_edit_ratio",
            "Token edits allowed as a share (0 to 1) of the original's tokens, when that is "
            "more than the number above.",
        ),
        ("pair_require_rationale", "Every pair must say why it should break a system."),
        ("pair_max_text_chars", "The longest variant, in characters."),
        ("strategy_tags", "The tags breakers may give a pair, separated by commas."),
    ],
    "Scoring": [
        (
            "weight_mode",
            "How a breaker's breaks of a system are weighted: by the system's quality.",
        ),
        (
            "break_rate_mode",
            "Breaks counted per pair, or per sentence (half the per-pair rate; the 2017 tables).",
        ),
    ],
    "Label validation": [
        (
            "validation_mode",
            "Which entry pairs other people label again, blind (without the claimed label or "
            "the team): none, contested pairs only, a sampled share, or all. In every mode but "
            "off, machine-made pairs marked 'label unverified' are validated too; with "
            "validation off they are left out of the scores. Scores then use the validated "
            "labels and leave out invalid and disputed pairs; the unvalidated score is shown "
            "beside them.",
        ),
        (
            "validation_sample_fraction",
            "With 'sampled': the share (0 to 1) of entry pairs validated, a fixed sample.",
        ),
        ("validations_per_pair", "Votes a pair needs before its outcome is decided."),
        (
            "validation_agreement",
            "When the votes agree on a label: more than half of them, or all. Agreeing on the "
            "claimed label validates the pair, on another relabels it; no agreement disputes it "
            "(a contest for the organizers); more than half flagging one defect (not minimal, "
            "not fluent, original mislabelled, unclear) makes it invalid.",
        ),
        (
            "validation_quota_per_validator",
            "The most pairs one validator labels (0: no limit).",
        ),
        (
            "validation_pending",
            "What the scores do with a pair still waiting for votes: score it with the label "
            "its team claimed (the leaderboards count such pairs per team, and publishing "
            "warns), or leave it out until its votes are in.",
        ),
    ],
    "Answers (span tasks)": [
        (
            "answer_mode",
            "When a span answer is right: exact match after normalisation; token F1 against "
            "the best gold answer at or above the threshold below; overlap_2017, the 2017 "
            "overview's rule read literally (the answer covers at least 75% of the true "
            "answer's characters, however long it is); or overlap_longer, the stricter "
            "reading (at least 75% of the longer of the two spans shared). Changing it "
            "computes every version's dev figures and weights again (see scoring.answers).",
        ),
        (
            "answer_f1_threshold",
            "The least token F1 (0 to 1) that is right, in token_f1 mode; changing it computes "
            "the dev figures again.",
        ),
    ],
    "Guidance for breakers": [
        ("guidance_visibility", "Who sees the λmax guidance on the starter originals."),
        (
            "guidance_shows_systems",
            "The guidance shows each hosted system's prediction and confidence, not only the "
            "ranking (organizers always see them).",
        ),
    ],
    "Quotas": [
        ("max_systems_per_team", "Systems a builder team may register."),
        ("max_uploads_per_system", "Versions and prediction files per system."),
        ("max_pair_sets_per_team", "Submitted pair sets per breaker team (drafts do not count)."),
        ("max_pairs_per_set", "Pairs in one set."),
    ],
}
LIST_FIELDS = ("labels", "strategy_tags")
# Labels plainer than the field names.
LABELS = {
    "pair_min_shared_token_ratio": "Least share of the original's tokens",
    "pair_max_edit_distance": "Token edits always allowed",
    "pair_max_edit_ratio": "Token edits as a share of the original",
    "pair_require_rationale": "Rationale required",
    "pair_max_text_chars": "Longest variant (characters)",
    "validation_mode": "Validate labels",
    "validation_sample_fraction": "Sampled share",
    "validations_per_pair": "Votes per pair",
    "validation_agreement": "Agreement rule",
    "validation_quota_per_validator": "Quota per validator",
    "validation_pending": "Pairs waiting for votes",
}


def _default_text(field: str) -> str:
    default = SharedTask._meta.get_field(field).get_default()
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, list):
        return ", ".join(default)
    choices = dict(SharedTask._meta.get_field(field).choices or [])
    return str(choices.get(default, default)) or "empty"


class TaskSettingsForm(forms.Form):
    """Every editable setting of a task; ``changes()`` are those that differ from the task."""

    preset = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        kwargs.setdefault("initial", self.values_of(shared_task))
        super().__init__(*args, **kwargs)
        self.shared_task = shared_task
        model_fields = fields_for_model(
            SharedTask, fields=task_services.SHARED_TASK_EDITABLE_FIELDS
        )
        # Settings that mean nothing for the task's type are not shown for it.
        hidden = shared_task.kind.hidden_settings()
        for group in SETTING_GROUPS.values():
            for name, what in group:
                if name in hidden:
                    continue
                field = (
                    forms.CharField(max_length=2000) if name in LIST_FIELDS else model_fields[name]
                )
                bounds = ""
                if name in SETTING_BOUNDS:
                    # The model's bounds (``SETTING_BOUNDS``), said and enforced here too: the
                    # database's range is no setting's bound.
                    low, high = SETTING_BOUNDS[name]
                    field = forms.IntegerField(
                        validators=bounded(name),
                        widget=forms.NumberInput(attrs={"min": low, "max": high}),
                    )
                    bounds = f" From {low:,} to {high:,}."
                field.help_text = f"{what}{bounds} Default: {_default_text(name)}."
                field.label = LABELS.get(name, field.label)
                self.fields[name] = field

    @staticmethod
    def values_of(shared_task: SharedTask) -> dict[str, Any]:
        values = {
            name: getattr(shared_task, name) for name in task_services.SHARED_TASK_EDITABLE_FIELDS
        }
        for name in LIST_FIELDS:
            values[name] = ", ".join(values[name])
        return values

    @staticmethod
    def values_of_preset(preset: task_services.Preset) -> dict[str, Any]:
        return {
            name: ", ".join(value) if name in LIST_FIELDS else value
            for name, value in preset.values.items()
        }

    def groups(self) -> list[tuple[str, list[forms.BoundField]]]:
        shown = [
            (title, [self[name] for name, _ in group if name in self.fields])
            for title, group in SETTING_GROUPS.items()
        ]
        return [(title, fields) for title, fields in shown if fields]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name in LIST_FIELDS:
            if isinstance(cleaned.get(name), str):
                cleaned[name] = [item.strip() for item in cleaned[name].split(",") if item.strip()]
        return cleaned

    def changes(self) -> dict[str, Any]:
        return {
            name: value
            for name, value in self.cleaned_data.items()
            if name != "preset" and value != getattr(self.shared_task, name)
        }


class PhaseCloseNowForm(forms.Form):
    confirm = forms.BooleanField(
        label="Yes, close it now",
        help_text="The phase ends at once for every team and cannot be reopened; the next "
        "phase begins at the same moment.",
    )


def _minute(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


class ScheduleForm(forms.Form):
    """The four phases in one form: each one's start and end; both empty: no such phase."""

    def __init__(self, *args: Any, shared_task: SharedTask, **kwargs: Any) -> None:
        self.stored = {phase.kind: phase for phase in shared_task.phases.all()}
        kwargs.setdefault(
            "initial",
            {
                f"{kind}_{end}": getattr(phase, end)
                for kind, phase in self.stored.items()
                for end in ("starts_at", "ends_at")
            },
        )
        super().__init__(*args, **kwargs)
        for kind, label in Phase.Kind.choices:
            self.fields[f"{kind}_starts_at"] = utc_datetime_field(f"{label} starts", required=False)
            self.fields[f"{kind}_ends_at"] = utc_datetime_field(f"{label} ends", required=False)

    def rows(self) -> list[tuple[str, forms.BoundField, forms.BoundField]]:
        return [
            (label, self[f"{kind}_starts_at"], self[f"{kind}_ends_at"])
            for kind, label in Phase.Kind.choices
        ]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for kind, label in Phase.Kind.choices:
            starts, ends = cleaned.get(f"{kind}_starts_at"), cleaned.get(f"{kind}_ends_at")
            if (starts is None) != (ends is None) and not self.errors:
                missing = f"{kind}_ends_at" if ends is None else f"{kind}_starts_at"
                self.add_error(
                    missing, f"Give the {label.lower()} phase both a start and an end, or neither."
                )
        return cleaned

    def changes(self) -> list[task_services.PhaseChange]:
        """The changes to the stored phases; a value equal to the stored one to the minute
        (what the form shows) keeps the stored moment."""
        changes = []
        for kind in Phase.Kind.values:
            phase = self.stored.get(kind)
            starts = self.cleaned_data.get(f"{kind}_starts_at")
            ends = self.cleaned_data.get(f"{kind}_ends_at")
            if starts is None or ends is None:
                if phase is not None:
                    changes.append(
                        task_services.PhaseChange(phase, kind, phase.starts_at, phase.ends_at, True)
                    )
                continue
            if phase is not None:
                starts = phase.starts_at if _minute(phase.starts_at) == starts else starts
                ends = phase.ends_at if _minute(phase.ends_at) == ends else ends
                if (starts, ends) == (phase.starts_at, phase.ends_at):
                    continue
            changes.append(task_services.PhaseChange(phase, kind, starts, ends))
        return changes


class SnapshotPublishOlderForm(forms.Form):
    confirm = forms.BooleanField(
        label="Yes, publish this older snapshot",
        help_text="It becomes the leaderboard everyone reads, in place of the newer scores; "
        "a newer snapshot can be published afterwards.",
    )


class SnapshotPublishPendingForm(forms.Form):
    """Publishing a snapshot scored while pairs waited for votes (``publish_warning``)."""

    confirm_pending = forms.BooleanField(
        label="Yes, publish it with the pairs still waiting for votes",
        help_text="The leaderboards then say how many pairs of each team are scored on the "
        "label the team claimed (or left out), and never that every label was validated.",
    )
