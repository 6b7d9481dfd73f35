"""Scoring runs, the chunks of cells they wait for, and the immutable snapshots they leave.

The cells of the prediction matrix are ``bibi.systems.models.Prediction`` rows (one per
system version, source and text). This app adds what it takes to fill and score them:

- ``CellChunk``: missing cells of one version, computed by one ``gpu.cells_compute`` task.
  The chunk row, not the broker message, is the record that the work is owed: a chunk not
  ``done_at`` is sent again by housekeeping, and its cells are upserted, so a message lost
  or delivered twice changes nothing.
- ``CellFailure``: a text a version's model failed on (it raised, or gave a non-number);
  that version is scored without the pairs that hold the text.
- ``ScoringRun``: ``waiting_for_cells → scoring → done | failed``, with progress.
- ``Snapshot`` and ``SnapshotItem``: everything a done run computed, written once and never
  changed (only its publication is recorded on it later).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.db.models import Q

from bibi.sharedtasks.models import SharedTask
from bibi.systems.models import Prediction, SystemVersion


class ScoringRun(models.Model):
    class Status(models.TextChoices):
        WAITING_FOR_CELLS = "waiting_for_cells", "Waiting for prediction cells"
        SCORING = "scoring", "Scoring"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    class Trigger(models.TextChoices):
        BREAK_CLOSED = "break_closed", "The break phase closed"
        ORGANIZER = "organizer", "An organizer asked"
        ADJUDICATION = "adjudication", "A contest was adjudicated"
        VALIDATION = "validation", "Label validation decided pairs"
        VERSION_READY = "version_ready", "A system version became ready"
        COMMAND = "command", "manage.py score"

    shared_task = models.ForeignKey(
        SharedTask, on_delete=models.CASCADE, related_name="scoring_runs"
    )
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.WAITING_FOR_CELLS
    )
    failure_reason = models.TextField(blank=True)
    cells_needed = models.PositiveIntegerField(
        default=0, help_text="Cells of hosted systems the pairs need, known ones included."
    )
    cells_done = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    progress_at = models.DateTimeField(
        null=True, blank=True, help_text="When the run last moved: housekeeping wakes it after."
    )
    scoring_started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["shared_task", "status"])]
        constraints = [
            # A waiting run serves every request for its task (``services.scoring_run_request``):
            # the database holds that even when requests arrive at once.
            models.UniqueConstraint(
                fields=["shared_task"],
                condition=models.Q(status="waiting_for_cells"),
                name="scoring_run_one_waiting_per_task",
            )
        ]

    def __str__(self) -> str:
        return f"scoring run {self.id} of {self.shared_task.slug} ({self.status})"


class CellChunk(models.Model):
    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="+")
    system_version = models.ForeignKey(
        SystemVersion, on_delete=models.CASCADE, related_name="cell_chunks"
    )
    run = models.ForeignKey(
        ScoringRun,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="cell_chunks",
        help_text="The run that found the cells missing; empty for a dataset import.",
    )
    source = models.CharField(max_length=20, choices=Prediction.Source.choices)
    items = models.JSONField(
        help_text="Pair texts (source pairs) or example ids (starter, blind dev) to predict."
    )
    size = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    sends = models.PositiveIntegerField(default=0, help_text="Messages sent for it (resends too).")
    started_at = models.DateTimeField(
        null=True, blank=True, help_text="When a worker last began computing it."
    )
    done_at = models.DateTimeField(null=True, blank=True)
    computed = models.PositiveIntegerField(
        default=0, help_text="Cells the worker wrote (those already there are skipped)."
    )

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["shared_task"], condition=Q(done_at__isnull=True), name="open_cell_chunks"
            )
        ]

    def __str__(self) -> str:
        state = "done" if self.done_at else "open"
        return f"{self.size} {self.source} cells of {self.system_version} ({state})"


class CellFailure(models.Model):
    system_version = models.ForeignKey(
        SystemVersion, on_delete=models.CASCADE, related_name="cell_failures"
    )
    source = models.CharField(max_length=20, choices=Prediction.Source.choices)
    text = models.TextField()
    text_sha256 = models.CharField(max_length=64)
    reason = models.TextField()
    run = models.ForeignKey(
        ScoringRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["system_version", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["system_version", "source", "text_sha256"], name="one_failure_per_cell"
            )
        ]

    def __str__(self) -> str:
        return f"{self.system_version} failed on {self.text[:40]}"


class ImmutableSnapshot(Exception):
    """Something tried to change a snapshot after it was written."""


class Snapshot(models.Model):
    """What one scoring run computed, and with what. Written once, then only published."""

    run = models.OneToOneField(ScoringRun, on_delete=models.CASCADE, related_name="snapshot")
    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="snapshots")
    created_at = models.DateTimeField(auto_now_add=True)
    code_version = models.CharField(max_length=100)
    settings_used = models.JSONField(help_text="weight_mode, break_rate_mode, labels, ...")
    pair_set_ids = models.JSONField(help_text="The entry pair sets scored.")
    systems = models.JSONField(
        help_text="The system versions scored: id, name, team, version, kind, weight, ..."
    )
    excluded_systems = models.JSONField(
        default=list, help_text="Systems left out of this run, and why."
    )
    tables = models.JSONField(help_text="Every table of the report but the items, by name.")
    counts = models.JSONField(help_text="pairs, systems, teams, texts, cells, failures.")
    failures = models.JSONField(
        default=list, help_text="Texts a model failed on: system, text, reason (organizers)."
    )
    published_at = models.DateTimeField(null=True, blank=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["shared_task", "published_at"])]

    def __str__(self) -> str:
        state = "published" if self.published_at else "unpublished"
        return f"snapshot {self.id} of {self.shared_task.slug} ({state})"

    # The only fields that change once a snapshot is written: publishing it.
    PUBLICATION_FIELDS = frozenset({"published_at", "published_by"})

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Written once; afterwards only ``save(update_fields=...)`` of the publication fields.
        What was scored, and how, never changes under a published leaderboard."""
        if self.pk is not None and not kwargs.get("force_insert"):
            fields = kwargs.get("update_fields")
            if fields is None or not set(fields) <= self.PUBLICATION_FIELDS:
                raise ImmutableSnapshot(
                    f"Snapshot {self.pk} is immutable: only its publication can change "
                    f"(save(update_fields=...) of {', '.join(sorted(self.PUBLICATION_FIELDS))})."
                )
        super().save(*args, **kwargs)


class SnapshotItem(models.Model):
    """One pair of a snapshot's item table, with every system's predictions on it."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField(help_text="Canonical order: team, then pair id.")
    pair_id = models.BigIntegerField()
    team_id = models.BigIntegerField()
    original_id = models.CharField(max_length=200)
    original_text = models.TextField()
    original_label = models.CharField(max_length=100)
    variant_text = models.TextField()
    # Items of two texts (a sentence pair's hypothesis): each item's second text.
    original_text_b = models.TextField(blank=True, default="")
    variant_text_b = models.TextField(blank=True, default="")
    variant_label = models.CharField(max_length=100)
    tags = models.JSONField(default=list)
    flipped = models.BooleanField()
    broken = models.PositiveIntegerField(help_text="Systems the pair broke.")
    unseen = models.PositiveIntegerField(help_text="Systems that did not see the pair.")
    predictions = models.JSONField(
        help_text="Per system: original label, variant label, outcome, as codes "
        "(see bibi.evaluation.reports.report_items)."
    )
    validation_state = models.CharField(
        max_length=20,
        blank=True,
        help_text="The pair's label-validation state (bibi.pairs.validation.STATES).",
    )
    validation = models.JSONField(
        default=dict,
        blank=True,
        help_text="The pair's validation: votes, flags, agreement (PairValidation.as_row).",
    )
    span = models.JSONField(
        null=True,
        blank=True,
        help_text="Span tasks: question, original_answers, variant_answers (gold) and answers "
        "(system id → [its answer to the original, to the variant]); labels are then ''.",
    )

    class Meta:
        ordering = ["snapshot", "position"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "position"], name="one_item_per_position")
        ]

    def __str__(self) -> str:
        return f"item {self.position} of snapshot {self.snapshot_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None and not kwargs.get("force_insert"):
            raise ImmutableSnapshot(
                f"Item {self.position} of snapshot {self.snapshot_id} is immutable."
            )
        super().save(*args, **kwargs)
