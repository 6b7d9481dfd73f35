"""The detailed tables: breaker × builder matrix, items, strategy tags, flips, both-wrong
pairs, pairs that broke every system and predictions outside the label set.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scoring._grouping import group_sums
from scoring._inputs import PAIR_COLUMNS
from scoring.breaks import Breaks, broken_pct

PAIR_FIELDS = [*PAIR_COLUMNS, "tags", "flipped"]


def break_matrix(breaks: Breaks, break_rate: str = "pairs") -> pd.DataFrame:
    """% of each team's pairs (that the system saw) that break each system: index team, one
    column per system.

    Example::

        break_matrix(breaks).loc["OSU", "PCNN"]
    """
    pct = broken_pct(breaks.by_team(breaks.broken), breaks.seen_by_team, break_rate)
    matrix = pd.DataFrame(pct.T, index=pd.Index(breaks.teams, name="team"), columns=breaks.systems)
    matrix.columns.name = "system"
    return matrix


def item_table(breaks: Breaks) -> pd.DataFrame:
    """One row per pair, in canonical order: the pair's fields, then broken (systems it
    broke), both_wrong (systems wrong on both items), outside_label_set (systems with a
    prediction outside the label set on either item), unseen (systems that did not see
    it) and broke_every_system (every system that saw it, and at least one did).

    Example::

        item_table(breaks).loc[lambda items: items.broke_every_system, "pair_id"]
    """
    items = breaks.pairs[PAIR_FIELDS].copy()
    n_labels = len(breaks.labels)
    outside = (breaks.predicted_original >= n_labels) | (breaks.predicted_variant >= n_labels)
    seen = breaks.seen.sum(axis=0)
    items["broken"] = breaks.broken.sum(axis=0)
    items["both_wrong"] = breaks.both_wrong.sum(axis=0)
    items["outside_label_set"] = (outside & breaks.seen).sum(axis=0)
    items["unseen"] = len(breaks.systems) - seen
    items["broke_every_system"] = (items["broken"] == seen) & (seen > 0)
    return items


def item_predictions(breaks: Breaks) -> pd.DataFrame:
    """One row per (pair, system): pair_id, system, original_prediction,
    variant_prediction, original_correct, variant_correct, seen, broken, both_wrong.
    Pairs in canonical order, systems sorted within each pair; a prediction the system did
    not give (for a pair it did not see) is missing.

    Example::

        item_predictions(breaks).query("broken")
    """
    n_systems, n_pairs = breaks.broken.shape
    vocabulary = pd.Index(breaks.vocabulary)

    def by_pair(matrix: np.ndarray) -> np.ndarray:
        return matrix.T.ravel()

    return pd.DataFrame(
        {
            "pair_id": np.repeat(breaks.pairs["pair_id"].to_numpy(), n_systems),
            "system": pd.Categorical.from_codes(
                np.tile(np.arange(n_systems), n_pairs), categories=breaks.systems
            ),
            "original_prediction": pd.Categorical.from_codes(
                by_pair(breaks.predicted_original), categories=vocabulary
            ),
            "variant_prediction": pd.Categorical.from_codes(
                by_pair(breaks.predicted_variant), categories=vocabulary
            ),
            "original_correct": by_pair(breaks.original_correct),
            "variant_correct": by_pair(breaks.variant_correct),
            "seen": by_pair(breaks.seen),
            "broken": by_pair(breaks.broken),
            "both_wrong": by_pair(breaks.both_wrong),
        }
    )


def _rates_by_group(
    breaks: Breaks,
    pair_index: np.ndarray,
    group_codes: np.ndarray,
    names: list[str],
    key: str,
    break_rate: str,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Break rates of pairs grouped by a code; a pair may sit in several groups (tags).

    Returns (summary: key, pairs, breaks, broken_pct = mean over the systems that saw a
    pair of the group; by system: index key, one column per system, % broken of the
    group's pairs the system saw).
    """
    n_groups = len(names)
    pairs = np.bincount(group_codes, minlength=n_groups)
    breaks_by_group = group_sums(breaks.broken[:, pair_index], group_codes, n_groups)
    seen_by_group = group_sums(breaks.seen[:, pair_index], group_codes, n_groups)
    pct = broken_pct(breaks_by_group, seen_by_group, break_rate)
    rated = np.isfinite(pct)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_pct = np.where(rated, pct, 0.0).sum(axis=0) / rated.sum(axis=0)
    summary = pd.DataFrame(
        {
            key: names,
            "pairs": pairs,
            "breaks": breaks_by_group.sum(axis=0).astype(np.int64),
            "broken_pct": mean_pct,
        }
    )
    by_system = pd.DataFrame(pct.T, index=pd.Index(names, name=key), columns=breaks.systems)
    by_system.columns.name = "system"
    return summary, by_system


def tag_table(breaks: Breaks, break_rate: str = "pairs") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Break rate by strategy tag (`tags` split on `;`); untagged pairs are left out and a
    pair with several tags counts for each.

    Returns (tag, pairs, breaks, broken_pct: the mean over systems) sorted by tag, and the
    tag × system matrix of % broken.

    Example::

        summary, by_system = tag_table(breaks)
    """
    split = breaks.pairs["tags"].str.split(";").explode()
    tags = split.str.strip()
    tagged = pd.DataFrame({"pair": tags.index.to_numpy(), "tag": tags.to_numpy()})
    tagged = tagged[tagged["tag"].notna() & (tagged["tag"] != "")].drop_duplicates()
    codes, names = pd.factorize(tagged["tag"], sort=True)
    return _rates_by_group(breaks, tagged["pair"].to_numpy(), codes, list(names), "tag", break_rate)


def flip_table(breaks: Breaks, break_rate: str = "pairs") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Break rate of pairs whose variant flips the gold label vs. keeps it.

    Returns (kind in `flipped`, `same_label`; pairs, breaks, broken_pct) for the kinds
    present, and the kind × system matrix of % broken.

    Example::

        summary, by_system = flip_table(breaks, "sentences")
    """
    kinds = np.where(breaks.pairs["flipped"].to_numpy(), "flipped", "same_label")
    codes, names = pd.factorize(kinds, sort=True)
    return _rates_by_group(breaks, np.arange(len(kinds)), codes, list(names), "kind", break_rate)


def both_wrong_table(breaks: Breaks) -> pd.DataFrame:
    """Pairs wrong on both items, per system and team (not breaks; reported apart):
    system, team, pairs (that the system saw), both_wrong, both_wrong_pct (of those pairs).

    Example::

        both_wrong_table(breaks).groupby("system").both_wrong.sum()
    """
    counts = breaks.by_team(breaks.both_wrong)
    n_systems, n_teams = counts.shape
    pairs = breaks.seen_by_team.ravel().astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        pct = 100.0 * counts.ravel() / pairs
    return pd.DataFrame(
        {
            "system": np.repeat(breaks.systems, n_teams),
            "team": np.tile(breaks.teams, n_systems),
            "pairs": pairs,
            "both_wrong": counts.ravel().astype(np.int64),
            "both_wrong_pct": pct,
        }
    )


def outside_label_table(breaks: Breaks) -> pd.DataFrame:
    """Predictions outside the task's label set (each one counted wrong), per system and
    label: system, label, sentences (items of seen pairs that got it). Empty when there are
    none.

    Example::

        outside_label_table(breaks)  # e.g. RNTN, "0", 2
    """
    n_labels, n_vocabulary = len(breaks.labels), len(breaks.vocabulary)
    predicted = np.concatenate([breaks.predicted_original, breaks.predicted_variant], axis=1)
    counted = np.concatenate([breaks.seen, breaks.seen], axis=1)
    system = np.arange(len(breaks.systems))[:, None]
    counts = np.bincount(
        (system * n_vocabulary + predicted)[counted],
        minlength=len(breaks.systems) * n_vocabulary,
    ).reshape(len(breaks.systems), n_vocabulary)
    system_index, label_index = np.nonzero(counts[:, n_labels:])
    return pd.DataFrame(
        {
            "system": np.asarray(breaks.systems, dtype=object)[system_index],
            "label": np.asarray(breaks.vocabulary, dtype=object)[label_index + n_labels],
            "sentences": counts[system_index, label_index + n_labels].astype(np.int64),
        }
    )
