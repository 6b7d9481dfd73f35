"""λmax analyses: did the boundary signal of the originals predict which pairs broke?

λmax (the largest eigenvalue of the Fisher information metric of a system at a text) is
high near the system's decision boundary. Given per-(system, text) λmax, these tables ask
whether pairs built from high-λmax originals broke the system more often.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from scoring.breaks import Breaks, broken_pct

# Below three points a correlation and its p-value say nothing.
_MIN_POINTS = 3


@dataclass(frozen=True, eq=False)
class LambdaAnalysis:
    """The three λmax tables.

    delta: team, system, pairs (with λmax on both items), mean_delta, std_delta
        (Δλmax = λmax(variant) − λmax(original); std with ddof 1).
    correlation: system, pairs, pearson_r, pearson_p, spearman_r, spearman_p: the original's
        λmax against whether the pair broke the system (0/1); NaN when undefined
        (fewer than 3 pairs, or a constant column).
    quartiles: system, q25, q75, bottom_pairs, bottom_broken_pct, top_pairs, top_broken_pct:
        break rate of the pairs whose original's λmax is ≤ q25 vs. ≥ q75 (ties included).
    """

    delta: pd.DataFrame
    correlation: pd.DataFrame
    quartiles: pd.DataFrame


def lambda_analysis(breaks: Breaks, break_rate: str = "pairs") -> LambdaAnalysis | None:
    """The λmax tables, or None when the predictions carry no lambda_max.

    Pairs where a needed λmax is missing are left out of each table (the `pairs` columns
    say how many remain).

    Example::

        analysis = lambda_analysis(breaks)
        analysis.correlation[["system", "spearman_r", "spearman_p"]]
    """
    if breaks.lambda_original is None or breaks.lambda_variant is None:
        return None
    original, variant = breaks.lambda_original, breaks.lambda_variant
    broken = breaks.broken
    return LambdaAnalysis(
        delta=_delta_table(breaks, variant - original),
        correlation=_correlation_table(breaks.systems, original, broken),
        quartiles=_quartile_table(breaks.systems, original, broken, break_rate),
    )


def _delta_table(breaks: Breaks, delta: np.ndarray) -> pd.DataFrame:
    known = np.isfinite(delta)
    count = breaks.by_team(known)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = breaks.by_team(np.where(known, delta, 0.0)) / count
        # Two passes (mean, then squared deviations) keep the std accurate for large λmax.
        deviation = np.where(known, delta - mean[:, breaks.team_codes], 0.0)
        std = np.sqrt(breaks.by_team(deviation**2) / (count - 1))
    std[count < 2] = np.nan
    n_systems, n_teams = count.shape
    table = pd.DataFrame(
        {
            "team": np.tile(breaks.teams, n_systems),
            "system": np.repeat(breaks.systems, n_teams),
            "pairs": count.ravel().astype(np.int64),
            "mean_delta": mean.ravel(),
            "std_delta": std.ravel(),
        }
    )
    return table.sort_values(["team", "system"], kind="stable").reset_index(drop=True)


def _correlation(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of two (S, P) arrays that are NaN at the same places;
    NaN where a row has fewer than 3 values or no spread."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        first = first - np.nanmean(first, axis=1, keepdims=True)
        second = second - np.nanmean(second, axis=1, keepdims=True)
        spread = np.sqrt(np.nansum(first**2, axis=1) * np.nansum(second**2, axis=1))
        r = np.nansum(first * second, axis=1) / spread
    n = np.isfinite(first).sum(axis=1)
    r[(n < _MIN_POINTS) | ~(spread > 0)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _p_value(r: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Two-sided p-value of r against no correlation: the t-test with n − 2 degrees of
    freedom (what scipy's spearmanr uses, and equal to pearsonr's exact test)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.abs(r) * np.sqrt((n - 2) / (1.0 - r**2))
        return np.asarray(2 * stats.t.sf(t, n - 2), dtype=np.float64)


def _correlation_table(
    systems: list[str], original: np.ndarray, broken: np.ndarray
) -> pd.DataFrame:
    known = np.isfinite(original)
    n = known.sum(axis=1)
    outcome = np.where(known, broken.astype(float), np.nan)
    pearson = _correlation(original, outcome)
    spearman = _correlation(
        stats.rankdata(original, axis=1, nan_policy="omit"),
        stats.rankdata(outcome, axis=1, nan_policy="omit"),
    )
    return pd.DataFrame(
        {
            "system": systems,
            "pairs": n.astype(np.int64),
            "pearson_r": pearson,
            "pearson_p": _p_value(pearson, n),
            "spearman_r": spearman,
            "spearman_p": _p_value(spearman, n),
        }
    )


def _quartile_table(
    systems: list[str], original: np.ndarray, broken: np.ndarray, break_rate: str
) -> pd.DataFrame:
    known = np.isfinite(original)
    with warnings.catch_warnings():
        # A system without any λmax has no quartiles: NaN, and no pair in either group.
        warnings.simplefilter("ignore", RuntimeWarning)
        q25, q75 = np.nanquantile(original, [0.25, 0.75], axis=1)
    bottom = known & (original <= q25[:, None])
    top = known & (original >= q75[:, None])
    bottom_pairs, top_pairs = bottom.sum(axis=1), top.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return pd.DataFrame(
            {
                "system": systems,
                "q25": q25,
                "q75": q75,
                "bottom_pairs": bottom_pairs,
                "bottom_broken_pct": broken_pct(
                    (bottom & broken).sum(axis=1), bottom_pairs, break_rate
                ),
                "top_pairs": top_pairs,
                "top_broken_pct": broken_pct((top & broken).sum(axis=1), top_pairs, break_rate),
            }
        )
