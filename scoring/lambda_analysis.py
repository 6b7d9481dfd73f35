"""λmax analyses: did the boundary signal of the originals predict what the edits did?

λmax (the largest eigenvalue of the Fisher information metric of a system at a text) is
high near the system's decision boundary, so a high λmax original should see its
prediction move under an edit more often. Whether a moved prediction is a *break* depends
on the pair: when the pair keeps the gold label, a break is a prediction that moves; when
it changes the label, a break on a binary task is a prediction that stays. So every table
is split by kind of pair: `same_label` (original_label == variant_label), `flipped`, and
`all` of them pooled, where the two effects cancel.
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
KINDS = ("all", "same_label", "flipped")
OUTCOMES = ("changed", "broken")


@dataclass(frozen=True, eq=False)
class LambdaAnalysis:
    """The four λmax tables. `kind` is all, same_label or flipped (module docstring).

    delta: team, system, pairs (with λmax on both items), mean_delta, std_delta
        (Δλmax = λmax(variant) − λmax(original); std with ddof 1).
    correlation: system, kind, outcome, pairs, pearson_r, pearson_p, spearman_r,
        spearman_p: the original's λmax against whether the system's prediction `changed`
        between the two items, or whether the pair `broken` it (0/1); NaN when undefined
        (fewer than 3 pairs, or a constant column).
    auc: system, kind, pairs, changed, lambda_auc, confidence_pairs, confidence_auc: the
        ROC AUC of the original's λmax for "the prediction changed", and beside it that of
        the confidence baseline 1 − (largest probability on the original), on the pairs
        whose original has it; NaN when the pairs are all changed or all unchanged, or the
        score is constant, and confidence_auc NaN without probabilities.
    quartiles: system, kind, quartile (1-4), lambda_low, lambda_high, pairs, breaks,
        broken_pct, changed_pct: pairs by the quartile of their original's λmax among all
        the system's pairs, λmax in (lambda_low, lambda_high] (the first quartile includes
        its low end, the smallest λmax); the edges q25, q50, q75 are the same for every kind,
        so kinds compare at equal λmax. broken_pct follows `break_rate`, changed_pct is per
        pair; both NaN for an empty quartile.
    """

    delta: pd.DataFrame
    correlation: pd.DataFrame
    auc: pd.DataFrame
    quartiles: pd.DataFrame


def lambda_analysis(breaks: Breaks, break_rate: str = "pairs") -> LambdaAnalysis | None:
    """The λmax tables, or None when the predictions carry no lambda_max.

    Pairs where a needed λmax (or probability) is missing are left out of each table (the
    `pairs` columns say how many remain).

    Example::

        analysis = lambda_analysis(breaks)
        analysis.auc.query("kind == 'same_label'")[["system", "lambda_auc", "confidence_auc"]]
    """
    if breaks.lambda_original is None or breaks.lambda_variant is None:
        return None
    original, variant = breaks.lambda_original, breaks.lambda_variant
    flipped = breaks.pairs["flipped"].to_numpy(dtype=bool)
    kinds = {
        "all": np.ones_like(flipped),
        "same_label": ~flipped,
        "flipped": flipped,
    }
    outcomes = {"changed": breaks.changed, "broken": breaks.broken}
    uncertainty = None if breaks.confidence_original is None else 1.0 - breaks.confidence_original
    correlation, auc = _kind_tables(breaks.systems, original, uncertainty, kinds, outcomes)
    return LambdaAnalysis(
        delta=_delta_table(breaks, variant - original),
        correlation=correlation,
        auc=auc,
        quartiles=_quartile_table(breaks, original, kinds, break_rate),
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


def _kind_tables(
    systems: list[str],
    original: np.ndarray,
    uncertainty: np.ndarray | None,
    kinds: dict[str, np.ndarray],
    outcomes: dict[str, np.ndarray],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The correlation and AUC tables. A kind is the same set of pairs for every system, so
    each kind works on its own columns, and its λmax ranks serve both tables."""
    correlations, aucs = [], []
    for kind, in_kind in kinds.items():
        columns = np.flatnonzero(in_kind)
        score = original[:, columns]
        known = np.isfinite(score)
        n = known.sum(axis=1)
        ranks = _ranks(score)
        for outcome_name, outcome in outcomes.items():
            values = np.where(known, outcome[:, columns].astype(float), np.nan)
            pearson = _correlation(score, values)
            # The average ranks of a 0/1 outcome are an increasing affine function of it, and
            # Pearson's r ignores those: Spearman's ρ is r(ranks of λmax, outcome).
            spearman = _correlation(ranks, values)
            correlations.append(
                pd.DataFrame(
                    {
                        "system": systems,
                        "kind": kind,
                        "outcome": outcome_name,
                        "pairs": n.astype(np.int64),
                        "pearson_r": pearson,
                        "pearson_p": _p_value(pearson, n),
                        "spearman_r": spearman,
                        "spearman_p": _p_value(spearman, n),
                    }
                )
            )
        changed = outcomes["changed"][:, columns]
        if uncertainty is None:
            confidence_pairs = np.zeros(len(systems), dtype=np.int64)
            confidence_auc = np.full(len(systems), np.nan)
        else:
            baseline = uncertainty[:, columns]
            confidence_pairs = np.isfinite(baseline).sum(axis=1)
            confidence_auc = _auc(baseline, _ranks(baseline), changed)
        aucs.append(
            pd.DataFrame(
                {
                    "system": systems,
                    "kind": kind,
                    "pairs": n.astype(np.int64),
                    "changed": (changed & known).sum(axis=1).astype(np.int64),
                    "lambda_auc": _auc(score, ranks, changed),
                    "confidence_pairs": confidence_pairs.astype(np.int64),
                    "confidence_auc": confidence_auc,
                }
            )
        )
    return _by_system(correlations), _by_system(aucs)


def _ranks(values: np.ndarray) -> np.ndarray:
    """Average ranks (ties share the mean rank) along each row of an (S, P) array, NaN where
    the value is NaN. NaNs are ranked after every number, which leaves the numbers' ranks
    what they are among themselves, and one vectorised call ranks every row."""
    known = np.isfinite(values)
    ranks = stats.rankdata(np.where(known, values, np.inf), axis=1)
    return np.where(known, ranks, np.nan)


def _auc(score: np.ndarray, ranks: np.ndarray, positive: np.ndarray) -> np.ndarray:
    """ROC AUC of each row of `score` (S, P; NaN = left out; `ranks` its `_ranks`) for
    `positive` (S, P bool): the probability that a positive outranks a negative, ties
    counting half (the Mann-Whitney U over the product of the group sizes). NaN without
    positives, without negatives, or when the known scores of a row are all equal."""
    known = np.isfinite(score)
    n_positive = (positive & known).sum(axis=1)
    n_negative = (~positive & known).sum(axis=1)
    rank_sum = np.where(positive & known, ranks, 0.0).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        auc = (rank_sum - n_positive * (n_positive + 1) / 2) / (n_positive * n_negative)
        # With `initial`, a kind without pairs (no column) has an undefined spread, not an error.
        spread = np.max(np.where(known, score, -np.inf), axis=1, initial=-np.inf) - np.min(
            np.where(known, score, np.inf), axis=1, initial=np.inf
        )
    auc[(n_positive == 0) | (n_negative == 0) | ~(spread > 0)] = np.nan
    return np.asarray(auc, dtype=np.float64)


def _quartile_table(
    breaks: Breaks, original: np.ndarray, kinds: dict[str, np.ndarray], break_rate: str
) -> pd.DataFrame:
    known = np.isfinite(original)
    with warnings.catch_warnings():
        # A system without any λmax has no quartiles: NaN edges, and no pair in any of them.
        warnings.simplefilter("ignore", RuntimeWarning)
        edges = np.nanquantile(original, [0.25, 0.5, 0.75], axis=1).T  # (S, 3)
    with np.errstate(invalid="ignore"):
        quartile = 1 + (original[:, :, None] > edges[:, None, :]).sum(axis=2)
    lows = np.column_stack([np.nanmin(np.where(known, original, np.inf), axis=1), edges])
    highs = np.column_stack([edges, np.nanmax(np.where(known, original, -np.inf), axis=1)])
    tables = []
    for kind, in_kind in kinds.items():
        for q in range(1, 5):
            chosen = known & in_kind & (quartile == q)
            pairs = chosen.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                tables.append(
                    pd.DataFrame(
                        {
                            "system": breaks.systems,
                            "kind": kind,
                            "quartile": q,
                            "lambda_low": np.where(
                                np.isfinite(lows[:, q - 1]), lows[:, q - 1], np.nan
                            ),
                            "lambda_high": np.where(
                                np.isfinite(highs[:, q - 1]), highs[:, q - 1], np.nan
                            ),
                            "pairs": pairs.astype(np.int64),
                            "breaks": (chosen & breaks.broken).sum(axis=1).astype(np.int64),
                            "broken_pct": broken_pct(
                                (chosen & breaks.broken).sum(axis=1), pairs, break_rate
                            ),
                            "changed_pct": 100.0 * (chosen & breaks.changed).sum(axis=1) / pairs,
                        }
                    )
                )
    return _by_system(tables)


def _by_system(tables: list[pd.DataFrame]) -> pd.DataFrame:
    """The long tables in order: system, then the order the rows were built in."""
    table = pd.concat(tables, ignore_index=True)
    table["_order"] = np.arange(len(table))
    return (
        table.sort_values(["system", "_order"], kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )
