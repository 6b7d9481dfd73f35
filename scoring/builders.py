"""Builder metrics: macro-F1 and accuracy over every sentence, and the share of pairs broken."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from scoring.breaks import Breaks, broken_pct
from scoring.confusion import accuracy, confusion_counts, macro_f1


def builder_metrics(breaks: Breaks, break_rate: str = "pairs") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score each system over all sentences (originals and variants) of all breaker teams,
    and over each team's sentences.

    Returns two frames:
    - overall, one row per system, best first (fewest broken, then highest F1): system, f1,
      accuracy, broken_pct, breaks, pairs, unseen, both_wrong, outside_label_set (number of
      sentences whose prediction is outside the label set);
    - by team, one row per (system, team): system, team, pairs, unseen, f1, accuracy,
      breaks, broken_pct, both_wrong.
    A sentence counts once per pair it belongs to, as in the 2017 tables. `pairs` are the
    pairs the system saw; the `unseen` ones count nowhere.

    Example::

        overall, by_team = builder_metrics(find_breaks(pairs, predictions), "sentences")
        overall[["system", "f1", "broken_pct"]]
    """
    n_labels = len(breaks.labels)
    gold = np.concatenate([breaks.gold_original, breaks.gold_variant])
    predicted = np.concatenate([breaks.predicted_original, breaks.predicted_variant], axis=1)
    groups = np.concatenate([breaks.team_codes, breaks.team_codes])
    counted = np.concatenate([breaks.seen, breaks.seen], axis=1)
    by_team = _ByTeam(
        confusion=confusion_counts(gold, predicted, groups, len(breaks.teams), n_labels, counted),
        broken=breaks.by_team(breaks.broken),
        both_wrong=breaks.by_team(breaks.both_wrong),
        seen=breaks.seen_by_team.astype(np.int64),
    )
    outside = ((predicted >= n_labels) & counted).sum(axis=1)
    return _overall(breaks, by_team, outside, break_rate), _by_team(breaks, by_team, break_rate)


@dataclass(frozen=True)
class _ByTeam:
    """(S, T) counts per system and team: confusion counts (S, T, K, K + 1), breaks, pairs
    wrong on both items, pairs seen."""

    confusion: np.ndarray
    broken: np.ndarray
    both_wrong: np.ndarray
    seen: np.ndarray


def _overall(
    breaks: Breaks, by_team: _ByTeam, outside: np.ndarray, break_rate: str
) -> pd.DataFrame:
    """One row per system over all teams' sentences, best first."""
    total_counts = by_team.confusion.sum(axis=1)
    broken = by_team.broken.sum(axis=1)
    seen = by_team.seen.sum(axis=1)
    overall = pd.DataFrame(
        {
            "system": breaks.systems,
            "f1": macro_f1(total_counts),
            "accuracy": accuracy(total_counts),
            "broken_pct": broken_pct(broken, seen, break_rate),
            "breaks": broken.astype(np.int64),
            "pairs": seen,
            "unseen": len(breaks.pairs) - seen,
            "both_wrong": by_team.both_wrong.sum(axis=1).astype(np.int64),
            "outside_label_set": outside,
        }
    )
    return overall.sort_values(
        ["broken_pct", "f1", "system"], ascending=[True, False, True], kind="stable"
    ).reset_index(drop=True)


def _by_team(breaks: Breaks, by_team: _ByTeam, break_rate: str) -> pd.DataFrame:
    """One row per (system, team) over that team's sentences."""
    n_systems, n_teams = len(breaks.systems), len(breaks.teams)
    return pd.DataFrame(
        {
            "system": np.repeat(breaks.systems, n_teams),
            "team": np.tile(breaks.teams, n_systems),
            "pairs": by_team.seen.ravel(),
            "unseen": (breaks.pairs_per_team[None, :] - by_team.seen).ravel(),
            "f1": macro_f1(by_team.confusion).ravel(),
            "accuracy": accuracy(by_team.confusion).ravel(),
            "breaks": by_team.broken.ravel().astype(np.int64),
            "broken_pct": broken_pct(by_team.broken, by_team.seen, break_rate).ravel(),
            "both_wrong": by_team.both_wrong.ravel().astype(np.int64),
        }
    )
