"""A shared task, its organizers and its phases."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.utils import timezone

from bibi.tasktypes import TaskType, task_type, task_types
from bibi.texts import blank_name_problem

DEFAULT_STRATEGY_TAGS = ["morphosyntax", "semantics", "pragmatics", "world_knowledge", "other"]


# Every integer setting's bounds, checked wherever it is saved (settings page, API, admin):
# none is left to the database's range, which no organizer means.
SETTING_BOUNDS: dict[str, tuple[int, int]] = {
    # 1000: no edit size imposed (the 2017 replay preset).
    "pair_max_edit_distance": (0, 1000),
    "pair_max_text_chars": (1, 20_000),
    "validations_per_pair": (1, 15),
    # 0: no limit.
    "validation_quota_per_validator": (0, 100_000),
    "max_systems_per_team": (1, 100),
    "max_uploads_per_system": (1, 1000),
    "max_pair_sets_per_team": (1, 1000),
    "max_pairs_per_set": (1, 100_000),
}


def bounded(name: str) -> list[MinValueValidator | MaxValueValidator]:
    """The validators of the integer setting ``name`` (``SETTING_BOUNDS``)."""
    low, high = SETTING_BOUNDS[name]
    return [
        MinValueValidator(
            low, message=f"At least {low:,}: give a number from {low:,} to {high:,}."
        ),
        MaxValueValidator(
            high, message=f"At most {high:,}: give a number from {low:,} to {high:,}."
        ),
    ]


def default_labels() -> list[str]:
    return ["negative", "positive"]


def default_strategy_tags() -> list[str]:
    return list(DEFAULT_STRATEGY_TAGS)


def task_type_choices() -> list[tuple[str, str]]:
    return [(kind.key, kind.name) for kind in task_types()]


class SharedTask(models.Model):
    class WeightMode(models.TextChoices):
        DEV_ACCURACY = "dev_accuracy", "Dev accuracy (eq. 1 of the 2017 overview)"
        ORIGINAL_ACCURACY = "original_accuracy", "Accuracy on the team's originals"
        ORIGINAL_F1 = "original_f1", "Macro-F1 on the team's originals"
        NONE = "none", "Unweighted"

    class AnswerMode(models.TextChoices):
        EXACT = "exact", "Exact match after normalisation"
        TOKEN_F1 = "token_f1", "Token F1 against the best gold answer, at or above a threshold"
        OVERLAP_2017 = (
            "overlap_2017",
            "At least 75% of the true answer's characters covered (the 2017 overview's rule, "
            "read literally)",
        )
        OVERLAP_LONGER = (
            "overlap_longer",
            "At least 75% character overlap over the longer of the two spans (stricter)",
        )

    class BreakRateMode(models.TextChoices):
        PAIRS = "pairs", "Breaks per pair"
        SENTENCES = "sentences", "Breaks per sentence"

    class ValidationMode(models.TextChoices):
        OFF = "off", "Off: scores use the submitted labels"
        CONTESTED = "contested", "Contested pairs only"
        SAMPLED = "sampled", "A sampled fraction of the pairs"
        ALL = "all", "All pairs"

    class ValidationAgreement(models.TextChoices):
        MAJORITY = "majority", "Majority: more than half of the votes give one label"
        UNANIMOUS = "unanimous", "Unanimous: every vote gives the same label"

    class ValidationPending(models.TextChoices):
        CLAIMED = "claimed", "Scored with the label the team claimed, counted on the leaderboards"
        LEFT_OUT = "left_out", "Left out of the scores until their votes are in"

    class GuidanceVisibility(models.TextChoices):
        ORGANIZERS = "organizers", "Organizers only"
        BREAKERS = "breakers", "Organizers and breaker teams"
        PUBLIC = "public", "Everyone who can see the task"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    is_public = models.BooleanField(
        default=True, help_text="Anonymous visitors may read the task's public pages."
    )
    # One of the registered types (``bibi.tasktypes``): what an item is and what systems answer.
    task_type = models.CharField(
        max_length=40, choices=task_type_choices, default="text_classification"
    )
    labels = models.JSONField(
        default=default_labels, help_text="The ordered label set, e.g. negative, positive."
    )

    # Span tasks: when an answer is right (scoring.answers; see its docstring for each mode).
    answer_mode = models.CharField(
        max_length=20, choices=AnswerMode.choices, default=AnswerMode.TOKEN_F1
    )
    answer_f1_threshold = models.FloatField(
        default=0.5, help_text="Span tasks, token_f1 mode: the least token F1 that is right."
    )

    weight_mode = models.CharField(
        max_length=20, choices=WeightMode.choices, default=WeightMode.DEV_ACCURACY
    )
    break_rate_mode = models.CharField(
        max_length=20, choices=BreakRateMode.choices, default=BreakRateMode.PAIRS
    )

    # Minimal-pair rules, checked on submission (defaults let every BACKGROUND.md example pass).
    pair_min_shared_token_ratio = models.FloatField(default=0.5)
    pair_max_edit_distance = models.PositiveIntegerField(
        validators=bounded("pair_max_edit_distance"),
        default=4,
        help_text="Token edit distance allowed at least, whatever the original's length.",
    )
    pair_max_edit_ratio = models.FloatField(
        default=0.35, help_text="Token edit distance allowed as a share of the original's tokens."
    )
    pair_require_rationale = models.BooleanField(default=False)
    editable_text = models.CharField(
        max_length=20,
        choices=[
            ("second", "The second text only (a sentence pair's hypothesis)"),
            ("first", "The first text only (a sentence pair's premise)"),
            ("both", "Either text, or both"),
        ],
        default="second",
        help_text="Task types whose items have two texts a breaker may edit (sentence pairs): "
        "which of them a pair may change.",
    )
    pair_max_text_chars = models.PositiveIntegerField(
        validators=bounded("pair_max_text_chars"), default=1000
    )
    strategy_tags = models.JSONField(default=default_strategy_tags)

    # Label validation (pairs app, ``bibi.pairs.validation``): which pairs are labelled again
    # blind, by how many validators, and when their votes agree.
    validation_mode = models.CharField(
        max_length=20,
        choices=ValidationMode.choices,
        default=ValidationMode.OFF,
        help_text="Which entry pairs validators label again, blind. Machine-made pairs marked "
        "label unverified are validated in every mode but off (and left out of scoring when off).",
    )
    validation_sample_fraction = models.FloatField(
        default=0.2, help_text="Mode 'sampled': the share of entry pairs validated, in (0, 1]."
    )
    validations_per_pair = models.PositiveIntegerField(
        validators=bounded("validations_per_pair"),
        default=3,
        help_text="Votes a pair needs before its outcome is decided (k).",
    )
    validation_agreement = models.CharField(
        max_length=20,
        choices=ValidationAgreement.choices,
        default=ValidationAgreement.MAJORITY,
        help_text="When the votes on a pair agree on a label.",
    )
    validation_quota_per_validator = models.PositiveIntegerField(
        validators=bounded("validation_quota_per_validator"),
        default=0,
        help_text="Most pairs one validator labels in this task; 0 for no limit.",
    )
    validation_pending = models.CharField(
        max_length=20,
        choices=ValidationPending.choices,
        default=ValidationPending.CLAIMED,
        help_text="What scoring does with a pair in scope still waiting for votes: score it "
        "with its claimed label (the leaderboards say how many per team) or leave it out.",
    )

    guidance_visibility = models.CharField(
        max_length=20, choices=GuidanceVisibility.choices, default=GuidanceVisibility.BREAKERS
    )
    guidance_shows_systems = models.BooleanField(
        default=True,
        help_text="Whoever sees the guidance sees each hosted system's prediction, confidence "
        "and λmax on the starter originals (and on draft variants); otherwise only the ranking. "
        "Organizers always do.",
    )
    max_systems_per_team = models.PositiveIntegerField(
        validators=bounded("max_systems_per_team"), default=3
    )
    max_uploads_per_system = models.PositiveIntegerField(
        validators=bounded("max_uploads_per_system"), default=10
    )
    max_pair_sets_per_team = models.PositiveIntegerField(
        validators=bounded("max_pair_sets_per_team"), default=10
    )
    max_pairs_per_set = models.PositiveIntegerField(
        validators=bounded("max_pairs_per_set"), default=10_000
    )
    allow_anonymous_teams = models.BooleanField(default=True)

    organizers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Organizer", related_name="organized_shared_tasks"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "id"]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        blank = blank_name_problem(self.name)
        if blank:
            raise ValidationError({"name": blank})
        labels = self.labels
        if not isinstance(labels, list) or len(labels) < 2:
            raise ValidationError(
                {"labels": "A task needs an ordered list of at least two labels."}
            )
        if any(not isinstance(label, str) or not label.strip() for label in labels):
            raise ValidationError({"labels": "Every label must be a non-empty string."})
        blank = [label for label in labels if blank_name_problem(label)]
        if blank:
            raise ValidationError(
                {"labels": blank_name_problem(blank[0], what=f"The label {blank[0]!r}")}
            )
        if len(set(labels)) != len(labels):
            raise ValidationError({"labels": "Labels must be distinct."})
        if not 0 < self.pair_min_shared_token_ratio <= 1:
            raise ValidationError({"pair_min_shared_token_ratio": "Must be in (0, 1]."})
        if not 0 < self.answer_f1_threshold <= 1:
            raise ValidationError({"answer_f1_threshold": "Must be in (0, 1]."})
        if not 0 < self.pair_max_edit_ratio <= 1:
            raise ValidationError({"pair_max_edit_ratio": "Must be in (0, 1]."})
        if not 0 < self.validation_sample_fraction <= 1:
            raise ValidationError({"validation_sample_fraction": "Must be in (0, 1]."})
        if self.validations_per_pair < 1:
            raise ValidationError({"validations_per_pair": "A pair needs at least one vote."})
        problems = self.kind.settings_problems(
            {field.name: getattr(self, field.name) for field in self._meta.concrete_fields}
        )
        if problems:
            raise ValidationError(problems)
        tags = self.strategy_tags
        if (
            not isinstance(tags, list)
            or not tags
            or any(not isinstance(t, str) or not t for t in tags)
        ):
            raise ValidationError({"strategy_tags": "Give a non-empty list of tag names."})

    @property
    def kind(self) -> TaskType:
        """The task's type (``bibi.tasktypes``): every rule that differs by type is asked of it."""
        return task_type(self.task_type)

    # These read ``phases.all()`` (four rows at most) so that a task fetched with
    # ``prefetch_related("phases")`` costs no query per question.
    def phase_of(self, kind: str) -> Phase | None:
        """The task's ``kind`` phase (a task has at most one of each kind), or None."""
        return next((phase for phase in self.phases.all() if phase.kind == kind), None)

    def phase_at(self, moment: datetime | None = None) -> Phase | None:
        """The phase running at ``moment`` (now by default), or None between phases."""
        moment = moment or timezone.now()
        running = [phase for phase in self.phases.all() if phase.is_open(moment)]
        return min(running, key=lambda phase: phase.starts_at, default=None)

    @property
    def results_published(self) -> bool:
        now = timezone.now()
        return any(
            phase.kind == Phase.Kind.RESULTS and phase.starts_at <= now
            for phase in self.phases.all()
        )


class Organizer(models.Model):
    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["shared_task", "user"], name="unique_organizer")
        ]

    def __str__(self) -> str:
        return f"{self.user} organizes {self.shared_task}"


class Phase(models.Model):
    class Kind(models.TextChoices):
        BUILD = "build", "Build"
        BREAK = "break", "Break"
        CONTEST = "contest", "Contest"
        RESULTS = "results", "Results"

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="phases")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    starts_at = models.DateTimeField()
    ends_at = models.DateTimeField()

    class Meta:
        ordering = ["starts_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["shared_task", "kind"], name="one_phase_of_each_kind"),
            models.CheckConstraint(
                condition=models.Q(ends_at__gt=models.F("starts_at")), name="phase_ends_after_start"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.shared_task.slug}: {self.kind}"

    def is_open(self, moment: datetime | None = None) -> bool:
        moment = moment or timezone.now()
        return self.starts_at <= moment < self.ends_at
