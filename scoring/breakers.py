"""Breaker scores: eq. 1 of the 2017 overview paper, with the weight as a setting.

For team j with pair set D_j and systems i = 1..N:
score(j) = 100 · (1/N) · Σ_i weight(i, j) · break(i, j) / |D_j|.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from scoring._grouping import group_sums
from scoring._inputs import clean_weights
from scoring.breaks import Breaks, broken_pct
from scoring.confusion import accuracy, confusion_counts, macro_f1
from scoring.errors import ScoringInputError

WEIGHT_MODES = ("dev_accuracy", "original_accuracy", "original_f1", "none")

# Where a weight of `dev_or_original_weights` comes from.
WEIGHT_FROM_DEV = "blind_dev"
WEIGHT_FROM_ORIGINALS = "originals"


def check_weight_mode(weight: str) -> None:
    if weight not in WEIGHT_MODES:
        raise ScoringInputError(
            f"unknown weight mode {weight!r}; expected one of {', '.join(WEIGHT_MODES)}"
        )


def system_weights(
    breaks: Breaks, weight: str = "dev_accuracy", weights: pd.DataFrame | None = None
) -> np.ndarray:
    """The weight of each system against each team: (S, T), systems and teams in the order
    of `breaks`.

    - `dev_accuracy`: the `weights` input (system, weight), the same against every team;
    - `original_accuracy`, `original_f1` (macro): the system's score on the originals of
      that team's pairs it saw;
    - `none`: 1.

    Example::

        system_weights(breaks, "original_f1")  # array of shape (systems, teams)
    """
    check_weight_mode(weight)
    shape = (len(breaks.systems), len(breaks.teams))
    if weight == "none":
        return np.ones(shape)
    if weight == "dev_accuracy":
        per_system = clean_weights(weights, breaks.systems)
        return np.broadcast_to(per_system[:, None], shape).copy()
    counts = confusion_counts(
        breaks.gold_original,
        breaks.predicted_original,
        breaks.team_codes,
        len(breaks.teams),
        len(breaks.labels),
        breaks.seen,
    )
    return accuracy(counts) if weight == "original_accuracy" else macro_f1(counts)


def dev_or_original_weights(
    breaks: Breaks, dev_accuracy: Mapping[str, float | None]
) -> pd.DataFrame:
    """Each system's `dev_accuracy` weight: its dev accuracy, else its accuracy on the
    distinct originals of the pairs it saw.

    dev_accuracy: system → accuracy on the blind dev set, None (or NaN, or absent) for a
    system that has none (a system that reported pair predictions only, as in 2017, or a
    task without a blind dev set). Originals are told apart by `original_id`; an original
    counts as right when the system is right on it in every seen pair that holds it. A
    system that saw no original weighs 0. Returns one row per system of `breaks`: system,
    weight, source (`WEIGHT_FROM_DEV` or `WEIGHT_FROM_ORIGINALS`), ready as `score`'s
    `weights` input.

    Example::

        weights = dev_or_original_weights(breaks, {"S1": 0.8, "S2": None})
        score(pairs, predictions, weights=weights)
    """
    codes, originals = pd.factorize(breaks.pairs["original_id"].astype(str))
    seen = group_sums(breaks.seen, codes, len(originals))
    right = group_sums(breaks.original_correct & breaks.seen, codes, len(originals))
    held = seen > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        on_originals = ((right == seen) & held).sum(axis=1) / held.sum(axis=1)
    on_originals = np.nan_to_num(on_originals, nan=0.0)
    weights, sources = [], []
    for system, fallback in zip(breaks.systems, on_originals.tolist(), strict=True):
        dev = dev_accuracy.get(system)
        known = dev is not None and not math.isnan(dev)
        weights.append(float(dev) if known else fallback)  # type: ignore[arg-type]
        sources.append(WEIGHT_FROM_DEV if known else WEIGHT_FROM_ORIGINALS)
    return pd.DataFrame({"system": breaks.systems, "weight": weights, "source": sources})


def breaker_scores(
    breaks: Breaks,
    weight: str = "dev_accuracy",
    weights: pd.DataFrame | None = None,
    break_rate: str = "pairs",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score each breaker team: the mean over systems of weight × break rate, × 100.

    Returns two frames:
    - one row per team, best first: team, pairs, score;
    - one row per (team, system): team, system, pairs (that the system saw), breaks,
      broken_pct, weight, weighted_pct (= weight × broken_pct; the score is its mean over
      the systems that saw at least one of the team's pairs, NaN if none did).

    With weights 0.8 and 0.6 and a team breaking 1 of its 2 pairs on each system, the
    score is (0.8 · 50 + 0.6 · 50) / 2 = 35. Example::

        teams, detail = breaker_scores(breaks, "dev_accuracy", weights)
    """
    weight_matrix = system_weights(breaks, weight, weights)
    breaks_by_team = breaks.by_team(breaks.broken)
    seen_by_team = breaks.seen_by_team
    pct = broken_pct(breaks_by_team, seen_by_team, break_rate)
    weighted = weight_matrix * pct
    rated = np.isfinite(weighted)
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(rated, weighted, 0.0).sum(axis=0) / rated.sum(axis=0)

    teams = pd.DataFrame({"team": breaks.teams, "pairs": breaks.pairs_per_team, "score": score})
    teams = teams.sort_values(
        ["score", "team"], ascending=[False, True], kind="stable"
    ).reset_index(drop=True)

    n_systems, n_teams = weight_matrix.shape
    detail = pd.DataFrame(
        {
            "team": np.tile(breaks.teams, n_systems),
            "system": np.repeat(breaks.systems, n_teams),
            "pairs": seen_by_team.ravel().astype(np.int64),
            "breaks": breaks_by_team.ravel().astype(np.int64),
            "broken_pct": pct.ravel(),
            "weight": weight_matrix.ravel(),
            "weighted_pct": weighted.ravel(),
        }
    )
    detail = detail.sort_values(["team", "system"], kind="stable").reset_index(drop=True)
    return teams, detail
