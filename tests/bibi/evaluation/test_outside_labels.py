"""A self-reported prediction outside the task's labels ("neutral" in a binary task) is kept
as given and scored as a wrong answer, as the 2017 organizers counted it: never mapped to a
task label."""

from __future__ import annotations

import pytest

from bibi.pairs.selectors import pairs_effective
from bibi.systems import predictions as system_predictions

from .conftest import score_now

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def upload_pair_predictions(task, labels: dict[str, str]):
    rows = "text,label\n" + "".join(
        f'"{text.replace(chr(34), chr(34) * 2)}",{label}\n'
        for text, label in sorted(labels.items())
    )
    return system_predictions.system_predictions_upload(
        system=task.by_hand,
        actor=task.cast.builder,
        data=rows.encode(),
        filename="pairs.csv",
        source="pairs",
    )


def by_hand_row(task) -> dict:
    run = score_now(task)
    return next(
        row for row in run.snapshot.tables["builders"] if row["system_id"] == task.by_hand.id
    )


def test_a_pair_prediction_outside_the_labels_counts_wrong_and_is_reported(scored_task):
    pairs = pairs_effective(shared_task=scored_task.shared_task)
    # Right on every text: no pair breaks the system.
    right = {pair["original_text"]: pair["original_label"] for pair in pairs}
    right |= {pair["variant_text"]: pair["variant_label"] for pair in pairs}
    upload_pair_predictions(scored_task, right)
    before = by_hand_row(scored_task)
    assert (before["breaks"], before["outside_label_set"]) == (0, 0)

    # One variant answered "neutral": wrong on it, right on its original, so its pair breaks.
    neutral = sorted(pair["variant_text"] for pair in pairs)[0]
    version = upload_pair_predictions(scored_task, {**right, neutral: "neutral"})
    assert version.outside_label_count == 1
    after = by_hand_row(scored_task)
    assert (after["breaks"], after["outside_label_set"]) == (1, 1)
    assert after["pairs"] == before["pairs"]
