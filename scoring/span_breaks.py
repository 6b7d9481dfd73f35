"""The break rule and builder scores for span tasks, on top of the label machinery.

A pair breaks a system when the system is right on exactly one of its two items, for spans as
for labels. Rather than restate that rule, :func:`span_breaks` hands correctness to the label
rule (:func:`scoring.find_breaks`): every item's gold label is ``right`` and a system's
"label" for it is ``right`` or ``wrong`` (a label outside the set, so always wrong). The result
is an ordinary :class:`scoring.Breaks`, so break counts, breaker scores (eq. 1, unchanged) and
the tables work as they do for labels. Builder scores become answer accuracy and mean token F1
(:func:`span_builder_metrics`).

:func:`span_score` makes the whole :class:`scoring.ScoreReport` of a span task: the label
report's tables over these breaks, with the builders' ``accuracy`` being answer accuracy and
their ``f1`` mean token F1 (overall and per team), and no "outside the label set" rows (a
wrong answer is not a label outside the set).

Example::

    scores = answer_scores(predictions, gold, mode="overlap_2017")
    breaks = span_breaks(pairs, scores)
    span_builder_metrics(breaks, scores)
    report = span_score(pairs, scores, weights=None, weight="none")
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from scoring.breakers import check_weight_mode
from scoring.breaks import Breaks, broken_pct, check_break_rate, find_breaks
from scoring.builders import builder_metrics
from scoring.errors import ScoringInputError
from scoring.report import ScoreReport, report_of_breaks

RIGHT, WRONG = "right", "wrong"
SPAN_PAIR_COLUMNS = ("pair_id", "team", "original_id", "original_item", "variant_item")


def span_breaks(
    pairs: pd.DataFrame, scores: pd.DataFrame, unseen: pd.DataFrame | None = None
) -> Breaks:
    """Apply the break rule to span pairs.

    pairs: ``pair_id, team, original_id, original_item, variant_item`` (optional ``tags``),
    where the items are the keys of ``scores``. scores: ``system, item, correct`` (e.g. from
    :func:`scoring.answers.answer_scores`). unseen: as for :func:`scoring.find_breaks`.
    In the returned Breaks, ``pairs.original_text`` / ``variant_text`` hold the item keys as
    text and ``original_correct`` / ``variant_correct`` the correctness.

    >>> pairs = pd.DataFrame({"pair_id": [1], "team": ["T"], "original_id": ["o1"],
    ...     "original_item": ["o1"], "variant_item": ["v1"]})
    >>> scores = pd.DataFrame({"system": ["S", "S"], "item": ["o1", "v1"],
    ...     "correct": [True, False]})
    >>> span_breaks(pairs, scores).broken
    array([[ True]])
    """
    absent = [column for column in SPAN_PAIR_COLUMNS if column not in pairs.columns]
    if absent:
        raise ScoringInputError(f"span pairs are missing column(s) {', '.join(absent)}")
    absent = [c for c in ("system", "item", "correct") if c not in scores.columns]
    if absent:
        raise ScoringInputError(f"answer scores are missing column(s) {', '.join(absent)}")
    label_pairs = pairs.assign(
        original_text=pairs["original_item"].astype(str),
        variant_text=pairs["variant_item"].astype(str),
        original_label=RIGHT,
        variant_label=RIGHT,
    )
    predictions = pd.DataFrame(
        {
            "system": scores["system"],
            "text": scores["item"].astype(str),
            "label": np.where(scores["correct"].astype(bool), RIGHT, WRONG),
        }
    )
    if "lambda_max" in scores.columns:
        # λmax of each item, for the λmax analyses of the report.
        predictions["lambda_max"] = scores["lambda_max"].to_numpy()
    return find_breaks(label_pairs, predictions, labels=[RIGHT], unseen=unseen)


def span_builder_metrics(
    breaks: Breaks, scores: pd.DataFrame, break_rate: str = "pairs"
) -> pd.DataFrame:
    """One row per system, best first (fewest broken, then highest accuracy): system,
    answer_accuracy, mean_token_f1 (both over every item of every pair it saw, originals and
    variants, an item counting once per pair as in the 2017 tables), broken_pct, breaks,
    pairs, unseen, both_wrong.

    scores: ``system, item, token_f1`` for every item of the pairs (as from
    :func:`scoring.answers.answer_scores`).
    """
    f1, seen = _f1_matrix(breaks, scores)
    correct = np.concatenate([breaks.original_correct, breaks.variant_correct], axis=1)
    n_items = seen.sum(axis=1)
    breaks_count = breaks.broken.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        overall = pd.DataFrame(
            {
                "system": breaks.systems,
                "answer_accuracy": (correct & seen).sum(axis=1) / n_items,
                "mean_token_f1": np.where(seen, f1, 0.0).sum(axis=1) / n_items,
                "broken_pct": broken_pct(breaks_count, breaks.seen.sum(axis=1), break_rate),
                "breaks": breaks_count.astype(np.int64),
                "pairs": breaks.seen.sum(axis=1).astype(np.int64),
                "unseen": (~breaks.seen).sum(axis=1).astype(np.int64),
                "both_wrong": breaks.both_wrong.sum(axis=1).astype(np.int64),
            }
        )
    return overall.sort_values(
        ["broken_pct", "answer_accuracy", "system"], ascending=[True, False, True], kind="stable"
    ).reset_index(drop=True)


def _f1_matrix(breaks: Breaks, scores: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(S, 2P) token F1 of each system on each pair's original then variant, and (S, 2P)
    whether the system saw that pair. Raises when a seen item has no token F1."""
    if "token_f1" not in scores.columns:
        raise ScoringInputError("answer scores are missing column(s) token_f1")
    table = scores.assign(item=scores["item"].astype(str)).pivot_table(
        index="system", columns="item", values="token_f1", aggfunc="max"
    )
    items = pd.concat([breaks.pairs["original_text"], breaks.pairs["variant_text"]])
    f1 = table.reindex(index=breaks.systems, columns=items.to_numpy()).to_numpy(dtype=float)
    seen = np.concatenate([breaks.seen, breaks.seen], axis=1)
    lacking = np.isnan(f1) & seen
    if lacking.any():
        system, column = np.argwhere(lacking)[0]
        raise ScoringInputError(
            f"system {breaks.systems[system]!r} has no token_f1 for item {items.iloc[column]!r}"
        )
    return f1, seen


def span_score(
    pairs: pd.DataFrame,
    scores: pd.DataFrame,
    *,
    weights: pd.DataFrame | None = None,
    weight: str = "dev_accuracy",
    break_rate: str = "pairs",
    unseen: pd.DataFrame | None = None,
) -> ScoreReport:
    """The whole report of a span task (see the module docstring); arguments as for
    :func:`span_breaks` and :func:`scoring.score`. ``scores`` may carry ``lambda_max``.

    >>> pairs = pd.DataFrame({"pair_id": [1], "team": ["T"], "original_id": ["o1"],
    ...     "original_item": ["o1"], "variant_item": ["v1"]})
    >>> scores = pd.DataFrame({"system": ["S", "S"], "item": ["o1", "v1"],
    ...     "correct": [True, False], "token_f1": [1.0, 0.5]})
    >>> span_score(pairs, scores, weight="none").builders[["accuracy", "f1"]].values.tolist()
    [[0.5, 0.75]]
    """
    check_weight_mode(weight)
    check_break_rate(break_rate)
    breaks = span_breaks(pairs, scores, unseen)
    overall, by_team = builder_metrics(breaks, break_rate)
    f1, seen = _f1_matrix(breaks, scores)
    masked = np.where(seen, f1, 0.0)
    n_pairs = len(breaks.pairs)
    # (S, T) sums over each team's originals and variants; both items of a seen pair count.
    f1_sums = breaks.by_team(masked[:, :n_pairs]) + breaks.by_team(masked[:, n_pairs:])
    counts = 2 * breaks.seen_by_team
    with np.errstate(invalid="ignore", divide="ignore"):
        by_team["f1"] = (f1_sums / counts).ravel()
        mean_f1 = pd.Series(f1_sums.sum(axis=1) / counts.sum(axis=1), index=breaks.systems)
    overall["f1"] = overall["system"].map(mean_f1).to_numpy(dtype=float)
    overall["outside_label_set"] = 0
    report = report_of_breaks(
        breaks, weights=weights, weight=weight, break_rate=break_rate, builders=(overall, by_team)
    )
    return dataclasses.replace(report, outside_label_set=report.outside_label_set.iloc[0:0])
