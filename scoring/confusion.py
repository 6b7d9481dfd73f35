"""Accuracy and macro-F1 from confusion counts, for many systems and groups at once."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scoring.errors import ScoringInputError


def confusion_counts(
    gold: npt.NDArray[np.integer],
    predicted: npt.NDArray[np.integer],
    groups: npt.NDArray[np.integer],
    n_groups: int,
    n_labels: int,
    counted: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.int64]:
    """Count (gold, predicted) label pairs per system and group.

    gold: (N,) codes in [0, n_labels); predicted: (S, N) codes, where a code >= n_labels is a
    prediction outside the label set; groups: (N,) codes in [0, n_groups); counted: (S, N),
    False for items a system is not scored on (their code may then be anything).
    Returns (S, n_groups, n_labels, n_labels + 1): the last column counts the predictions
    outside the label set, which are wrong for every gold label.

    >>> confusion_counts(np.array([0, 1]), np.array([[0, 2]]), np.array([0, 0]), 1, 2)[0, 0]
    array([[1, 0, 0],
           [0, 0, 1]])
    """
    n_systems = predicted.shape[0]
    width = n_labels + 1
    clipped = np.minimum(predicted, n_labels).astype(np.int64)
    system = np.arange(n_systems, dtype=np.int64)[:, None]
    cell = ((system * n_groups + groups) * n_labels + gold) * width + clipped
    cells = cell.ravel() if counted is None else cell[counted]
    counts = np.bincount(cells, minlength=n_systems * n_groups * n_labels * width)
    return counts.reshape(n_systems, n_groups, n_labels, width)


def accuracy(counts: npt.NDArray[np.integer]) -> npt.NDArray[np.float64]:
    """Share of correct predictions; counts (..., K, K + 1) -> (...).

    >>> float(accuracy(np.array([[3, 1, 0], [0, 2, 2]])))
    0.625
    """
    n_labels = counts.shape[-2]
    correct = np.trace(counts[..., :n_labels], axis1=-2, axis2=-1)
    total = counts.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(correct / total, dtype=np.float64)


def macro_f1(counts: npt.NDArray[np.integer]) -> npt.NDArray[np.float64]:
    """Unweighted mean of the per-label F1 = 2·TP / (2·TP + FP + FN) over the labels of the
    label set that occur (as gold or as prediction); counts (..., K, K + 1) -> (...).

    A prediction outside the label set is a miss for its gold label and no label's hit.
    Below, label 0 has F1 6/7 and label 1 has F1 4/7 (two of its gold items got a label
    outside the set):

    >>> round(float(macro_f1(np.array([[3, 1, 0], [0, 2, 2]]))), 4)
    0.7143
    """
    n_labels = counts.shape[-2]
    hits = np.diagonal(counts[..., :n_labels], axis1=-2, axis2=-1)
    as_gold = counts.sum(axis=-1)
    as_predicted = counts[..., :n_labels].sum(axis=-2)
    # 2·TP + FP + FN is the number of times a label occurs as gold plus as prediction.
    occurrences = as_gold + as_predicted
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        per_label = np.where(occurrences > 0, 2 * hits / occurrences, np.nan)
        return np.asarray(np.nanmean(per_label, axis=-1), dtype=np.float64)


@dataclass(frozen=True)
class LabelScores:
    """Accuracy and macro-F1 (both in [0, 1]; NaN over no item) of one list of predictions."""

    accuracy: float
    macro_f1: float


def label_scores(
    labels: Sequence[str], gold: Sequence[str], predicted: Sequence[str]
) -> LabelScores:
    """Accuracy and macro-F1 of `predicted` against `gold`, over the label set `labels`.

    Labels compare exactly as given. Every gold label must be in `labels`; a predicted label
    outside them is wrong (a miss for its gold label, no label's hit), as in `macro_f1`.
    Raises ScoringInputError when a gold label is outside the set or the lengths differ.

    Below, `pos` has F1 2/3 and `neg` 1/2 (`?` is outside the set):

    >>> scores = label_scores(["neg", "pos"], ["pos", "pos", "neg", "neg"], ["pos", "neg", "neg", "?"])
    >>> scores.accuracy, round(scores.macro_f1, 4)
    (0.5, 0.5833)
    """
    if len(gold) != len(predicted):
        raise ScoringInputError(
            f"{len(gold)} gold label(s) but {len(predicted)} prediction(s): one per item"
        )
    code = {label: index for index, label in enumerate(labels)}
    outside = sorted({label for label in gold if label not in code})
    if outside:
        raise ScoringInputError(
            f"gold label(s) {', '.join(map(repr, outside))} outside the label set "
            f"{', '.join(map(repr, labels))}"
        )
    gold_codes = np.array([code[label] for label in gold], dtype=np.int64)
    predicted_codes = np.array(
        [[code.get(label, len(labels)) for label in predicted]], dtype=np.int64
    )
    groups = np.zeros(len(gold), dtype=np.int64)
    counts = confusion_counts(gold_codes, predicted_codes, groups, 1, len(labels))
    return LabelScores(
        accuracy=float(accuracy(counts)[0, 0]), macro_f1=float(macro_f1(counts)[0, 0])
    )
