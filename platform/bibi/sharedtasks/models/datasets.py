"""A task's datasets (train, blind dev, starter) and their examples."""

from __future__ import annotations

from django.db import models

from bibi.sharedtasks.models.tasks import SharedTask
from bibi.tasktypes.examples import EXTERNAL_ID_MAX_LENGTH


class Dataset(models.Model):
    class Split(models.TextChoices):
        TRAIN = "train", "Training"
        BLIND_DEV = "blind_dev", "Blind dev"
        STARTER = "starter", "Starter set"

    shared_task = models.ForeignKey(SharedTask, on_delete=models.CASCADE, related_name="datasets")
    split = models.CharField(max_length=20, choices=Split.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["shared_task", "split"]
        constraints = [
            models.UniqueConstraint(fields=["shared_task", "split"], name="one_dataset_per_split")
        ]

    def __str__(self) -> str:
        return f"{self.shared_task.slug}: {self.split}"


class Example(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="examples")
    external_id = models.CharField(
        max_length=EXTERNAL_ID_MAX_LENGTH, help_text="The id this example has in the imported file."
    )
    text = models.TextField()
    label = models.CharField(
        max_length=100, help_text="Label tasks: the gold label; span tasks: ''."
    )
    position = models.PositiveIntegerField(help_text="Order of import within the dataset.")
    # An item's second text, in types whose items have two (a sentence pair's hypothesis,
    # ``text`` being its premise: ``bibi.tasktypes``).
    text_b = models.TextField(blank=True, help_text="The item's second text; '' for one text.")
    # Span tasks (QA-SRL): the question about one predicate of ``text`` and its gold answers.
    question = models.TextField(blank=True, help_text="Span tasks: the question; '' otherwise.")
    predicate_index = models.PositiveIntegerField(
        null=True, blank=True, help_text="Span tasks: the predicate's token index in the text."
    )
    predicate = models.CharField(
        max_length=100, blank=True, help_text="Span tasks: the predicate (verb) as written."
    )
    answers = models.JSONField(
        default=list,
        blank=True,
        help_text='Span tasks: every gold answer, [{"start": s, "end": e, "text": t}] with '
        "character offsets into text (end exclusive).",
    )

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="unique_example_id_per_dataset"
            )
        ]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.text[:50]}"
