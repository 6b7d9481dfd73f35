"""The break rule: a pair breaks a system when the system is right on exactly one item.

Everything downstream (builder metrics, breaker scores, tables, λmax analyses) reads the
matrices built here: one row per system, one column per pair, in canonical order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from scoring._grouping import group_sums
from scoring._inputs import (
    clean_pairs,
    clean_predictions,
    clean_unseen,
    quote,
    quote_some,
    resolve_labels,
)
from scoring.errors import ScoringInputError
from scoring.labels import normalize_labels, sort_labels

BREAK_RATE_MODES = ("pairs", "sentences")

Codes = npt.NDArray[np.int32]
Flags = npt.NDArray[np.bool_]
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class Breaks:
    """Who got which item of which pair right, for every system and pair.

    `pairs` is the clean pair table in canonical order (team, pair_id); every (S, P) array
    has one row per system of `systems` (sorted) and one column per row of `pairs`.
    Label codes index `vocabulary`; codes below `len(labels)` are in the task's label set,
    the others are predictions outside it (always wrong); -1 is no prediction, which only
    a pair the system did not see may have. `lambda_*` and `confidence_original` (the
    largest probability on the original) are NaN where the predictions did not give them or
    the system did not see the pair, and None when they never do.

    `seen` (S, P) is False where a system did not see a pair (the `unseen` input of
    `find_breaks`, e.g. both items identical after the system's truncation): such a pair
    is neither a break nor a non-break for that system, and every count leaves it out.
    """

    pairs: pd.DataFrame
    systems: list[str]
    teams: list[str]
    labels: list[str]
    vocabulary: list[str]
    team_codes: npt.NDArray[np.intp]
    gold_original: Codes
    gold_variant: Codes
    predicted_original: Codes
    predicted_variant: Codes
    original_correct: Flags
    variant_correct: Flags
    lambda_original: Floats | None
    lambda_variant: Floats | None
    confidence_original: Floats | None
    seen: Flags

    @property
    def changed(self) -> Flags:
        """(S, P): the system predicts different labels for the two items of a seen pair."""
        return (self.predicted_original != self.predicted_variant) & self.seen

    @property
    def broken(self) -> Flags:
        """(S, P): right on exactly one of the two items of a pair the system saw."""
        return break_rule(self.original_correct, self.variant_correct) & self.seen

    @property
    def both_wrong(self) -> Flags:
        """(S, P): wrong on both items of a seen pair; not a break, reported apart."""
        return ~self.original_correct & ~self.variant_correct & self.seen

    @property
    def seen_by_team(self) -> Floats:
        """(S, T): how many of each team's pairs each system saw (the denominators)."""
        return self.by_team(self.seen)

    @property
    def pairs_per_team(self) -> npt.NDArray[np.int64]:
        """(T,) number of pairs of each team of `teams`."""
        return np.bincount(self.team_codes, minlength=len(self.teams))

    def by_team(self, values: npt.NDArray[np.generic]) -> Floats:
        """Sum an (S, P) array over each team's pairs: (S, T)."""
        return group_sums(values, self.team_codes, len(self.teams))


def broken_pct(breaks: npt.ArrayLike, pairs: npt.ArrayLike, break_rate: str = "pairs") -> Floats:
    """Break counts as percentages under a break-rate convention.

    `pairs` (the definition): 100 · breaks / pairs. `sentences`: 100 · breaks / (2 · pairs),
    the per-sentence convention of the published 2017 tables. NaN where there are no pairs
    (a system that saw none of a team's pairs).

    >>> broken_pct(3, 4), broken_pct(3, 4, "sentences")
    (np.float64(75.0), np.float64(37.5))
    """
    check_break_rate(break_rate)
    per_pair = 2 if break_rate == "sentences" else 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return 100.0 * np.asarray(breaks, dtype=float) / (per_pair * np.asarray(pairs, dtype=float))


def check_break_rate(break_rate: str) -> None:
    if break_rate not in BREAK_RATE_MODES:
        raise ScoringInputError(
            f"unknown break_rate mode {break_rate!r}; expected one of {', '.join(BREAK_RATE_MODES)}"
        )


def break_rule(original_right: Any, variant_right: Any) -> Any:
    """The break rule, elementwise: right on exactly one of the two items.

    Takes whether a system is right on the original and on the variant, as bools or bool
    arrays that broadcast; returns a bool or a bool array. `Breaks.broken` applies it to
    every system and pair, `pair_breaks` to one pair.

    >>> break_rule(True, False), break_rule(False, False)
    (True, False)
    """
    return original_right != variant_right


def pair_breaks(
    gold_original: str, gold_variant: str, predicted_original: str, predicted_variant: str
) -> bool:
    """Whether one pair breaks one system: the rule of `find_breaks` for a single pair.

    Labels are compared as normalized strings, as in `find_breaks` (`1`, `1.0` and `+1` are
    one label); a blank label is an error.

    >>> pair_breaks("1", "-1", "1", "1")
    True
    >>> pair_breaks("pos", "neg", "neg", "pos")
    False
    """
    labels = normalize_labels([gold_original, gold_variant, predicted_original, predicted_variant])
    if labels.isna().any():
        raise ScoringInputError("pair_breaks needs four non-blank labels")
    gold_o, gold_v, predicted_o, predicted_v = labels.tolist()
    return bool(break_rule(predicted_o == gold_o, predicted_v == gold_v))


def find_breaks(
    pairs: pd.DataFrame,
    predictions: pd.DataFrame,
    labels: Sequence[object] | None = None,
    unseen: pd.DataFrame | None = None,
) -> Breaks:
    """Apply the break rule to every pair and system.

    pairs: pair_id, team, original_id, original_text, original_label, variant_text,
    variant_label[, tags]. predictions: system, text, label[, lambda_max, probabilities],
    one per system and distinct pair text (others ignored; repeats must agree). labels: the
    task's label set (default: the pairs' gold labels). unseen: system, pair_id: pairs a
    system did not see (left out of its counts; their texts need no prediction from it).

    >>> pairs = pd.DataFrame({"pair_id": [1], "team": ["T"], "original_id": ["o1"],
    ...     "original_text": ["good"], "original_label": [1], "variant_text": ["not good"],
    ...     "variant_label": [-1]})
    >>> predictions = pd.DataFrame({"system": ["S", "S"], "text": ["good", "not good"],
    ...     "label": [1, 1]})
    >>> find_breaks(pairs, predictions).broken
    array([[ True]])
    """
    clean = clean_pairs(pairs)
    label_set = resolve_labels(clean, labels)
    predicted = clean_predictions(predictions)
    # One code per distinct text: a starter original shared by many pairs is predicted once.
    text_codes, texts = pd.factorize(pd.concat([clean["original_text"], clean["variant_text"]]))
    systems = sorted(predicted["system"].cat.categories)
    cells, vocabulary = _cells(predicted, texts, systems, label_set)
    grid = _CellGrid(cells, len(systems), len(texts))
    original_text, variant_text = np.split(text_codes, 2)
    seen = clean_unseen(unseen, clean["pair_id"], systems)
    matrix = grid.labels()
    _require_every_prediction(matrix, seen, (original_text, variant_text), systems, texts)
    lambda_matrix, confidence_matrix = grid.values("lambda_max"), grid.values("confidence")
    gold_original, gold_variant = (
        pd.Index(vocabulary).get_indexer(clean[column]).astype(np.int32)
        for column in ("original_label", "variant_label")
    )
    predicted_original, predicted_variant = matrix[:, original_text], matrix[:, variant_text]
    team_codes, teams = pd.factorize(clean["team"], sort=True)
    return Breaks(
        pairs=clean,
        systems=systems,
        teams=list(teams),
        labels=label_set,
        vocabulary=vocabulary,
        team_codes=team_codes,
        gold_original=gold_original,
        gold_variant=gold_variant,
        predicted_original=predicted_original,
        predicted_variant=predicted_variant,
        original_correct=predicted_original == gold_original,
        variant_correct=predicted_variant == gold_variant,
        lambda_original=_seen_only(lambda_matrix, original_text, seen),
        lambda_variant=_seen_only(lambda_matrix, variant_text, seen),
        confidence_original=_seen_only(confidence_matrix, original_text, seen),
        seen=seen,
    )


def _cells(
    predicted: pd.DataFrame, texts: pd.Index, systems: list[str], label_set: list[str]
) -> tuple[pd.DataFrame, list[str]]:
    """The predictions of pair texts as (cell, label[, lambda_max, confidence]) rows, where
    cell = system code · texts + text code, one row per cell, and the label vocabulary: the
    label set, then the labels predicted outside it."""
    # The columns are categorical: look up each distinct value once, then index by code.
    text_column = predicted["text"].cat
    text_of_row = pd.Index(texts).get_indexer(text_column.categories)[text_column.codes.to_numpy()]
    used = text_of_row >= 0
    system_column = predicted["system"].cat
    system_of_row = pd.Index(systems).get_indexer(system_column.categories)[
        system_column.codes.to_numpy()[used]
    ]
    label_column = predicted["label"].cat
    seen_labels = label_column.categories[np.unique(label_column.codes.to_numpy()[used])]
    vocabulary = label_set + sort_labels(set(seen_labels) - set(label_set))
    label_of_row = pd.Index(vocabulary).get_indexer(label_column.categories)[
        label_column.codes.to_numpy()[used]
    ]
    cells = pd.DataFrame(
        {
            "cell": system_of_row.astype(np.int64) * len(texts) + text_of_row[used],
            "label": label_of_row.astype(np.int32),
        }
    )
    for column in ("lambda_max", "confidence"):
        if column in predicted.columns:
            cells[column] = predicted[column].to_numpy()[used]
    if np.bincount(cells["cell"].to_numpy(), minlength=len(systems) * len(texts)).max() > 1:
        cells = _one_row_per_cell(cells, systems, texts, vocabulary)
    return cells, vocabulary


@dataclass(frozen=True)
class _CellGrid:
    """One row per cell (see `_cells`) laid out as systems × texts matrices."""

    cells: pd.DataFrame
    n_systems: int
    n_texts: int

    def labels(self) -> Codes:
        """(S, X) label codes, -1 where a system gave no prediction."""
        flat = np.full(self.n_systems * self.n_texts, -1, dtype=np.int32)
        flat[self.cells["cell"].to_numpy()] = self.cells["label"].to_numpy()
        return flat.reshape(self.n_systems, self.n_texts)

    def values(self, column: str) -> Floats | None:
        """(S, X) values of a numeric column, NaN where not given; None without the column."""
        if column not in self.cells.columns:
            return None
        flat = np.full(self.n_systems * self.n_texts, np.nan)
        flat[self.cells["cell"].to_numpy()] = self.cells[column].to_numpy()
        return flat.reshape(self.n_systems, self.n_texts)


def _seen_only(matrix: Floats | None, text_codes: np.ndarray, seen: Flags) -> Floats | None:
    """λmax per (system, pair item), NaN where the system did not see the pair."""
    if matrix is None:
        return None
    return np.where(seen, matrix[:, text_codes], np.nan)


def _one_row_per_cell(
    cells: pd.DataFrame, systems: list[str], texts: pd.Index, vocabulary: list[str]
) -> pd.DataFrame:
    """Drop exact repeats of a (system, text) prediction; conflicting repeats are errors.

    Rows that agree on the label but not on lambda_max or probabilities conflict too:
    keeping either one would make the result depend on row order.
    """
    distinct = cells.drop_duplicates()
    conflicting = distinct[distinct["cell"].duplicated(keep=False)]
    if conflicting.empty:
        return distinct
    first = conflicting["cell"].min()
    system, text = systems[first // len(texts)], texts[first % len(texts)]
    rows = conflicting[conflicting["cell"] == first]
    given = sorted({vocabulary[code] for code in rows["label"]})
    if len(given) > 1:
        what = f"labels {quote_some(given)}"
    elif "lambda_max" in rows and rows["lambda_max"].nunique(dropna=False) > 1:
        what = "different lambda_max values"
    else:
        what = "different probabilities"
    raise ScoringInputError(
        f"system {quote(system)} has conflicting predictions for text {quote(text)}: {what} "
        f"({conflicting['cell'].nunique()} (system, text) pair(s) conflict)"
    )


def _require_every_prediction(
    matrix: Codes,
    seen: Flags,
    pair_texts: tuple[np.ndarray, np.ndarray],
    systems: list[str],
    texts: pd.Index,
) -> None:
    """A missing prediction is an error, never a silent zero.

    matrix (S, X) label codes, -1 for none; seen (S, P); pair_texts: the text codes of the
    originals and of the variants (P,). A text is needed from a system when a pair it saw
    holds it.
    """
    needed = np.zeros_like(matrix, dtype=bool)
    for text_codes in pair_texts:
        needed |= group_sums(seen, text_codes, len(texts)) > 0
    missing = np.flatnonzero(((matrix < 0) & needed).ravel())
    if not len(missing):
        return
    n_texts = len(texts)
    first = int(missing[0])
    per_system = np.bincount(missing // n_texts, minlength=len(systems))
    counts = ", ".join(
        f"{quote(systems[index])}: {per_system[index]}" for index in np.flatnonzero(per_system)
    )
    raise ScoringInputError(
        f"system {quote(systems[first // n_texts])} has no prediction for text "
        f"{quote(texts[first % n_texts])}; missing predictions per system: {counts}"
    )
