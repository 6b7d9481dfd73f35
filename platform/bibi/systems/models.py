"""Builder systems, their versions, and the predictions they produced.

A ``System`` is a team's named entry; each upload makes a ``SystemVersion``; one version is
the active one. ``Prediction`` is one cell of the prediction matrix: what one system
version says about one text (and, for starter originals, its λmax and token hints).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from bibi.sharedtasks.models import Example, SharedTask, Team


class System(models.Model):
    class Kind(models.TextChoices):
        HOSTED = "hosted", "Hosted: the platform runs the model"
        SELF_REPORTED = "self_reported", "Self-reported: the team uploads predictions"

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="systems")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=120)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    active_version = models.ForeignKey(
        "SystemVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["shared_task", "team", "id"]
        constraints = [
            models.UniqueConstraint(fields=["team", "name"], name="unique_system_name_per_team")
        ]

    def __str__(self) -> str:
        return f"{self.team.name}/{self.name}"


class SystemVersion(models.Model):
    # Not a column: what a self-reported upload's answer says of the rows that repeated an
    # item's prediction with the same answer (counted once; ``systems.label_predictions``).
    repeated_predictions: int = 0

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        READY = "ready", "Ready"
        FAILED = "failed", "Failed"

    class FailureReason(models.TextChoices):
        INVALID_ARCHIVE = "invalid_archive", "The archive was refused"
        INVALID_MODEL = "invalid_model", "The model directory was refused"
        LABEL_MISMATCH = "label_mismatch", "The model's labels do not match the task's"
        MODEL_ERROR = "model_error", "The model failed while running"
        TIMEOUT = "timeout", "The model took longer than the time limit"
        OUT_OF_MEMORY = "out_of_memory", "The model ran out of memory"
        WORKER_CRASHED = (
            "worker_crashed",
            "The model was killed while running, most likely for memory",
        )
        WORKER_LOST = "worker_lost", "The platform lost the worker (not counted against the quota)"

    # Refusals found before the model ran (it predicted nothing, so it learnt nothing of the
    # blind dev set and cost little) and losses the platform caused never count against a
    # team's upload quota; a crash counts only when it happened on every attempt.
    UNCOUNTED_FAILURES = frozenset(
        {
            FailureReason.INVALID_ARCHIVE,
            FailureReason.INVALID_MODEL,
            FailureReason.LABEL_MISMATCH,
            FailureReason.WORKER_LOST,
        }
    )
    # Failures where the worker went away: the archive is kept for the operators to look at.
    WORKER_FAILURES = frozenset({FailureReason.WORKER_LOST, FailureReason.WORKER_CRASHED})

    uuid = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    uploaded_at = models.DateTimeField(auto_now_add=True)

    archive_name = models.CharField(max_length=255, blank=True)
    archive_path = models.CharField(
        max_length=500, blank=True, help_text="Where the upload is kept, under UPLOAD_ROOT."
    )
    archive_sha256 = models.CharField(max_length=64, blank=True)
    archive_bytes = models.BigIntegerField(null=True, blank=True)
    model_dir = models.CharField(
        max_length=500,
        blank=True,
        help_text="The unpacked model, under MODEL_STORE (each worker machine's own cache).",
    )
    model_format = models.CharField(max_length=40, blank=True)
    label_mapping = models.JSONField(
        default=dict,
        blank=True,
        help_text="The model's labels → the task's labels, as stated or as found.",
    )

    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    failure_reason = models.CharField(max_length=30, choices=FailureReason.choices, blank=True)
    failure_detail = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(
        default=0, help_text="Validation runs started, the crashed and lost ones included."
    )
    crashes = models.PositiveIntegerField(
        default=0, help_text="Attempts whose worker process died while running this archive."
    )
    queued_at = models.DateTimeField(
        default=timezone.now, help_text="When the version last entered the queued state."
    )
    sent_at = models.DateTimeField(
        null=True, blank=True, help_text="When its work was last sent to the broker."
    )
    started_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(
        max_length=255, blank=True, help_text="host:pid of the worker process running it."
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="The running attempt's last sign of life."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    dev_accuracy = models.FloatField(null=True, blank=True)
    dev_macro_f1 = models.FloatField(null=True, blank=True)
    dev_token_f1 = models.FloatField(
        null=True,
        blank=True,
        help_text="Span tasks: mean token F1 on the blind dev set (dev_accuracy is the answer "
        "accuracy under the task's answer mode).",
    )
    dev_count = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Span tasks: distinct (sentence, question) cells scored, each against the "
        "union of the gold answers of the dev examples that ask it.",
    )
    dev_answer_mode = models.CharField(
        max_length=20,
        blank=True,
        help_text="Span tasks: the answer mode dev_accuracy was computed under ('' for labels).",
    )
    dev_answer_threshold = models.FloatField(
        null=True,
        blank=True,
        help_text="Span tasks: the token F1 threshold dev_accuracy was computed with.",
    )
    truncated_count = models.PositiveIntegerField(default=0)
    outside_label_count = models.PositiveIntegerField(
        default=0,
        help_text="Self-reported predictions with a label outside the task's set, kept as "
        "given and counted wrong when scored.",
    )
    dev_predictions_sha256 = models.CharField(
        max_length=64, blank=True, help_text="sha256 of the blind-dev predictions file taken."
    )
    pair_predictions_sha256 = models.CharField(
        max_length=64, blank=True, help_text="sha256 of the pair predictions file taken."
    )

    class Meta:
        ordering = ["system", "number"]
        constraints = [
            models.UniqueConstraint(fields=["system", "number"], name="unique_version_number")
        ]

    def __str__(self) -> str:
        return f"{self.system} v{self.number} ({self.status})"

    @property
    def counts_against_quota(self) -> bool:
        if self.status != self.Status.FAILED:
            return True
        if self.failure_reason == self.FailureReason.WORKER_CRASHED:
            return self.crashes >= self.attempts
        return self.failure_reason not in self.UNCOUNTED_FAILURES


class Prediction(models.Model):
    class Source(models.TextChoices):
        BLIND_DEV = "blind_dev", "Blind dev set"
        STARTER = "starter", "Starter set"
        PAIRS = "pairs", "Pair texts"

    system_version = models.ForeignKey(
        SystemVersion, on_delete=models.CASCADE, related_name="predictions"
    )
    source = models.CharField(max_length=20, choices=Source.choices)
    example = models.ForeignKey(
        Example, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    text = models.TextField()
    text_sha256 = models.CharField(max_length=64)
    label = models.CharField(
        max_length=100, help_text="The predicted label, in the task's label set."
    )
    probabilities = models.JSONField(
        null=True, blank=True, help_text="Task label → probability (hosted systems)."
    )
    # The item's second text in types whose items have two (a sentence pair's hypothesis).
    text_b = models.TextField(blank=True)
    # Span tasks: the question asked of ``text`` and the answer span the system gave
    # (character offsets into text, end exclusive). ``label`` is '' for span predictions.
    question = models.TextField(blank=True)
    answer_start = models.PositiveIntegerField(null=True, blank=True)
    answer_end = models.PositiveIntegerField(null=True, blank=True)
    answer_text = models.TextField(blank=True)
    lambda_max = models.FloatField(null=True, blank=True)
    hints = models.JSONField(
        null=True,
        blank=True,
        help_text="[word, score] pairs: where an edit moves the prediction most.",
    )
    leverage = models.JSONField(
        null=True,
        blank=True,
        help_text="[word, score] pairs: the first-order KL divergence of deleting each word.",
    )
    truncated = models.BooleanField(default=False)
    input_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the token ids the model saw (hosted systems): two texts that "
        "truncation cut to the same input make a pair the system did not see.",
    )
    precision = models.CharField(
        max_length=8,
        blank=True,
        help_text="The numeric precision the worker ran the model in (fp32, tf32, bf16; "
        "SYSTEM_PRECISION); empty for self-reported predictions.",
    )

    class Meta:
        ordering = ["system_version", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["system_version", "source", "text_sha256"], name="one_prediction_per_text"
            )
        ]
        indexes = [models.Index(fields=["text_sha256"])]

    def __str__(self) -> str:
        return f"{self.system_version}: {self.label} for {self.text[:40]}"
