"""How near an original lies to the systems' decision boundaries: λmax percentile ranks.

Each system ranks the originals it has a λmax for: an original's **percentile** is its
average rank, scaled to [0, 1] as (rank − 1) / (n − 1), ties sharing their mean rank; 1 is
the system's most fragile original, and a system with a single original gives it 0.5. An
original's **boundary score** is the mean of the systems' percentiles over the systems that
have its λmax, 0 when none has.

Arithmetic over arrays only: ``bibi.guidance.ranking`` reads the cells and keeps an adapter.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["boundary_scores", "percentile_ranks"]


def percentile_ranks(values: Sequence[float]) -> np.ndarray:
    """Each value's percentile rank among ``values`` in [0, 1], ties sharing their mean rank.

    Shape: ``(n,)`` in, ``(n,)`` out, in the same order.

    >>> percentile_ranks([3.0, 1.0, 2.0]).tolist()
    [1.0, 0.0, 0.5]
    >>> percentile_ranks([1.0, 2.0, 2.0, 5.0]).tolist()
    [0.0, 0.5, 0.5, 1.0]
    >>> percentile_ranks([7.0]).tolist()
    [0.5]
    """
    array = np.asarray(values, dtype=float)
    if array.ndim != 1:
        raise ValueError(f"percentile_ranks takes one row of values, not shape {array.shape}.")
    if np.isnan(array).any():
        raise ValueError("percentile_ranks takes λmax values, not NaN: leave a missing one out.")
    if array.size == 0:
        return array
    if array.size == 1:
        return np.array([0.5])
    ranks = pd.Series(array).rank(method="average").to_numpy()
    return (ranks - 1.0) / (array.size - 1)


def boundary_scores(percentiles: np.ndarray) -> np.ndarray:
    """Each original's boundary score: the mean of its row of ``percentiles`` over the
    systems that have it (NaN where a system has no λmax for it), 0 for a row of NaN.

    Shape: ``(originals, systems)`` in, ``(originals,)`` out.

    >>> boundary_scores(np.array([[1.0, 0.5], [0.0, np.nan], [np.nan, np.nan]])).tolist()
    [0.75, 0.0, 0.0]
    """
    matrix = np.asarray(percentiles, dtype=float)
    if matrix.ndim != 2:
        raise ValueError(f"boundary_scores takes (originals, systems), not shape {matrix.shape}.")
    present = ~np.isnan(matrix)
    counts = present.sum(axis=1)
    sums = np.where(present, matrix, 0.0).sum(axis=1)
    return np.divide(sums, counts, out=np.zeros(len(matrix)), where=counts > 0)
