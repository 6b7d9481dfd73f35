"""Datasets: one per split, and when a split is frozen."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    Dataset,
    SharedTask,
)
from bibi.texts import moment_text


def dataset_require_unfrozen(
    *, shared_task: SharedTask, split: str, now: datetime | None = None
) -> None:
    """Raises ``ValidationError`` (on ``split``) if the split is frozen: the blind dev and
    starter sets take no example once the break phase has started (see
    ``selectors.split_frozen_since``)."""
    since = selectors.split_frozen_since(shared_task=shared_task, split=split, now=now)
    if since is None:
        return
    name = split.replace("_", " ")
    raise ValidationError(
        {
            "split": f"The {name} set is frozen: the break phase started at "
            f"{moment_text(since)}, and from then on the blind dev and starter sets never "
            "change (systems were validated on them, breakers edit them). Training data can "
            "still be imported."
        }
    )


def dataset_get_or_create(*, shared_task: SharedTask, split: str) -> Dataset:
    if split not in Dataset.Split.values:
        raise ValidationError(
            {"split": f"'{split}' is not a split: use one of {', '.join(Dataset.Split.values)}."}
        )
    dataset, _ = Dataset.objects.get_or_create(shared_task=shared_task, split=split)
    return dataset
