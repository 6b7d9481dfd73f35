"""The leaderboard rank rule, one for every table that shows a rank."""

from __future__ import annotations

import pandas as pd


def rank_leaderboard(frame: pd.DataFrame, column: str, *, ascending: bool) -> pd.DataFrame:
    """`frame` with an integer `rank` column first, ranked on `column`.

    Ties share the better rank (1, 2, 2, 4); a missing score (NaN: a system that saw no
    pair, a team none of whose pairs any system saw) ranks after every score, all missing
    ones sharing the last rank. `ascending`: lower is better (% broken) or not (a breaker
    score). The rows keep their order.

    >>> frame = pd.DataFrame({"team": ["a", "b", "c", "d"], "score": [10.0, None, 30.0, 10.0]})
    >>> rank_leaderboard(frame, "score", ascending=False)["rank"].tolist()
    [2, 4, 1, 2]
    """
    ranked = frame.copy()
    rank = frame[column].rank(method="min", ascending=ascending, na_option="bottom")
    ranked.insert(0, "rank", rank.astype(int))
    return ranked
