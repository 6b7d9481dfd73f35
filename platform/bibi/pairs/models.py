"""Breaker pair sets, their pairs, and contests of pair labels.

Choices made here, and why:

- A ``PairSet`` is a version of a breaker team's submission. A submitted set never changes:
  a team that wants to change its pairs submits a new set, and its *entry* (what is scored)
  is the set it marked final, else its latest set submitted before the break deadline
  (``selectors.pair_set_entry``). Sets from a file or a JSON list are submitted whole.
- Pairs added one at a time (the web form, ``POST .../pairs/``) go into the team's one
  *draft* set, checked as they come; the team submits the draft when it is done, and only
  then does it become a version and count against the quota.
- A ``Pair`` keeps copies of what it was checked against (the original's normalized text
  and label) beside the foreign key to the starter ``Example``, so a pair reads the same
  however the starter set is later displayed. The key is RESTRICT: an example that a pair
  uses cannot be deleted on its own, but deleting the whole task deletes both. ``variant_label`` is what the team submitted
  and never changes; ``effective_label`` and ``is_excluded`` are what scoring uses, and
  only an adjudication (``services.contest_adjudicate``) changes them.
- A ``Contest`` is one team's challenge of one pair's label; a team contests a pair at most
  once. The organizers' decision is absolute (keep = the submitted label, relabel = a new
  label, exclude = out of scoring), so the latest decision on a pair is its state and a
  decision can be revised. Two teams may contest the same pair: the pair then has one
  state, set by the contest named in ``Pair.decision``; every other decided contest of that
  pair is *superseded* (``Contest.decision_state``), so no contest claims a state the pair
  is not in.
- A contest is filed by a team, or opened by label validation (``origin``) when the votes on
  a pair do not agree (a *disputed* pair): it then has no team, and the organizers decide it
  like any other.
- A ``LabelValidation`` is one validator's blind vote on one pair's variant: handed out by
  the queue (``assigned``), then submitted (``done``). A validator votes on a pair once.
  What the votes decide is ``bibi.pairs.validation`` (the rule: ``scoring.agreement.pair_state``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from bibi.sharedtasks.models import Example, SharedTask, Team


class PairSet(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft (pairs added one at a time)"
        SUBMITTED = "submitted", "Submitted"

    class Source(models.TextChoices):
        FILE = "file", "File upload"
        API = "api", "JSON list"
        FORM = "form", "One pair at a time"
        BASELINE = "baseline", "The automatic baseline breaker"

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="pair_sets")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="pair_sets")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.SUBMITTED)
    source = models.CharField(max_length=20, choices=Source.choices)
    filename = models.CharField(max_length=255, blank=True)
    file_format = models.CharField(max_length=20, blank=True, help_text="csv, tsv or jsonl.")
    layout = models.CharField(
        max_length=20, blank=True, help_text="'pairs' or 'sst2017' for files."
    )
    encoding = models.CharField(max_length=20, blank=True)
    is_final = models.BooleanField(
        default=False, help_text="The team's chosen entry, whatever it submitted later."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(
        null=True, blank=True, help_text="Server time of submission; empty for a draft."
    )
    content_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="The uploaded file's sha256, with its label map and mode: an identical "
        "re-upload is recognised and not stored again.",
    )
    refused_count = models.PositiveIntegerField(
        default=0, help_text="Rows refused when the valid ones were stored (partial upload)."
    )
    refused_csv = models.TextField(
        blank=True,
        help_text="The refused rows of a partial upload: line, rule, setting, reason, content.",
    )
    draft_reminded_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the team was e-mailed that this draft is unsubmitted before the "
        "break deadline (once per draft and deadline).",
    )

    class Meta:
        ordering = ["-submitted_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["team"], condition=Q(status="draft"), name="one_draft_pair_set_per_team"
            ),
            models.UniqueConstraint(
                fields=["team"], condition=Q(is_final=True), name="one_final_pair_set_per_team"
            ),
            models.CheckConstraint(
                condition=Q(status="draft", submitted_at__isnull=True, is_final=False)
                | Q(status="submitted", submitted_at__isnull=False),
                name="pair_set_submitted_iff_dated",
            ),
        ]

    def __str__(self) -> str:
        return f"pair set {self.id} of {self.team} ({self.status})"


class Pair(models.Model):
    pair_set = models.ForeignKey(PairSet, on_delete=models.CASCADE, related_name="pairs")
    row = models.PositiveIntegerField(
        help_text="Line in the file (header = 1), position in the JSON list, or order added."
    )
    source_id = models.CharField(
        max_length=200, blank=True, help_text="The pair's own id in the file, if it had one."
    )
    original = models.ForeignKey(Example, on_delete=models.RESTRICT, related_name="+")
    original_text = models.TextField()
    original_label = models.CharField(max_length=100)
    variant_text = models.TextField()
    variant_label = models.CharField(max_length=100)
    rationale = models.TextField(blank=True)
    # Span tasks: the question (the same for both items, never edited) and each item's gold
    # answers, [{"start": s, "end": e, "text": t}] with character offsets into its own text.
    # The second text of each item, in types whose items have two (a sentence pair's
    # hypothesis); '' otherwise.
    original_text_b = models.TextField(blank=True)
    variant_text_b = models.TextField(blank=True)
    question = models.TextField(blank=True)
    original_answers = models.JSONField(default=list, blank=True)
    variant_answers = models.JSONField(default=list, blank=True)
    tags = models.JSONField(default=list, blank=True)
    edit_distance = models.PositiveIntegerField(help_text="Token edit distance to the original.")
    effective_label = models.CharField(
        max_length=100, help_text="The label scoring uses: the variant's, unless relabelled."
    )
    is_excluded = models.BooleanField(default=False, help_text="Excluded from scoring.")
    label_unverified = models.BooleanField(
        default=False,
        help_text=(
            "A machine-made edit meant to change the label (suggest, the pair editor, the baseline"
            " breaker): nobody has checked the label, so it reaches the scores only through"
            " validation."
        ),
    )
    decision = models.ForeignKey(
        "Contest",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The contest whose decision is the pair's state; empty while none is decided.",
    )

    class Meta:
        ordering = ["pair_set", "row"]
        constraints = [
            models.UniqueConstraint(fields=["pair_set", "row"], name="unique_pair_row_per_set")
        ]

    def __str__(self) -> str:
        return f"pair {self.id}: {self.variant_text[:50]}"


class Contest(models.Model):
    class Status(models.TextChoices):
        OPEN = "open", "Open"
        KEPT = "kept", "Label kept"
        RELABELLED = "relabelled", "Relabelled"
        EXCLUDED = "excluded", "Excluded"

    class Decision(models.TextChoices):
        KEEP = "keep", "Keep the label"
        RELABEL = "relabel", "Relabel"
        EXCLUDE = "exclude", "Exclude the pair"

    class Origin(models.TextChoices):
        TEAM = "team", "Filed by a team"
        VALIDATION = "validation", "Opened by label validation (the votes disagreed)"

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="contests")
    origin = models.CharField(max_length=20, choices=Origin.choices, default=Origin.TEAM)
    team = models.ForeignKey(
        Team,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="contests",
        help_text="The contesting team; empty for a contest opened by label validation.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    new_label = models.CharField(max_length=100, blank=True)
    note = models.TextField(blank=True, help_text="The organizers' reasons for the decision.")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["pair", "team"], name="one_contest_per_pair_per_team"),
            models.UniqueConstraint(
                fields=["pair"],
                condition=Q(origin="validation"),
                name="one_validation_contest_per_pair",
            ),
            models.CheckConstraint(
                condition=Q(origin="team", team__isnull=False)
                | Q(origin="validation", team__isnull=True),
                name="contest_team_iff_filed_by_a_team",
            ),
        ]

    def __str__(self) -> str:
        return f"contest {self.id} of pair {self.pair_id} ({self.status})"

    @property
    def decision_state(self) -> str:
        """``open`` (undecided), ``current`` (its decision is the pair's state) or
        ``superseded`` (a later decision on the same pair, in another contest, replaced it)."""
        if self.status == self.Status.OPEN:
            return "open"
        return "current" if self.pair.decision_id == self.id else "superseded"


class LabelValidation(models.Model):
    """One validator's blind vote on one pair: the label they give the variant and flags."""

    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Handed out, not yet answered"
        SKIPPED = "skipped", "Handed back unanswered (never handed to them again)"
        DONE = "done", "Answered"

    class Role(models.TextChoices):
        BREAKER = "breaker", "Member of another breaker team"
        VALIDATOR = "validator", "Invited validator"
        ORGANIZER = "organizer", "Organizer"

    pair = models.ForeignKey(Pair, on_delete=models.CASCADE, related_name="validations")
    validator = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="label_validations"
    )
    role = models.CharField(max_length=20, choices=Role.choices)
    team = models.ForeignKey(
        Team,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text=(
            "The breaker team the validator belongs to in the task; none for invited "
            "validators and organizers, each their own one-person team."
        ),
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ASSIGNED)
    label = models.CharField(
        max_length=100, blank=True, help_text="The variant's label as the validator reads it."
    )
    not_minimal = models.BooleanField(default=False)
    not_fluent = models.BooleanField(default=False, help_text="Not fluent or ungrammatical.")
    original_mislabelled = models.BooleanField(default=False)
    unclear = models.BooleanField(default=False, help_text="No label can be given.")
    note = models.TextField(blank=True)
    assigned_at = models.DateTimeField(auto_now_add=True)
    submitted_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pair", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["pair", "validator"], name="one_validation_per_pair_per_validator"
            ),
            # One team decides no rival's pair alone: at most one vote (given or handed
            # out) per team and pair. A validator in no team has a null team here, which
            # never collides: the constraint above keeps them to one vote.
            models.UniqueConstraint(
                fields=["pair", "team"],
                condition=Q(status__in=["assigned", "done"]),
                name="one_validation_per_pair_per_team",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["assigned", "skipped"], submitted_at__isnull=True, label="")
                | Q(status="done", submitted_at__isnull=False, unclear=True, label="")
                | (Q(status="done", submitted_at__isnull=False, unclear=False) & ~Q(label="")),
                name="validation_done_with_a_label_or_unclear",
            ),
        ]
        indexes = [models.Index(fields=["validator", "status"], name="validation_by_validator")]

    def __str__(self) -> str:
        return f"validation {self.id} of pair {self.pair_id} ({self.status})"
