"""Sums of per-pair columns by group (team, tag, flip kind), for all systems at once."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy import sparse


def group_sums(
    values: npt.NDArray[np.generic], groups: npt.NDArray[np.integer], n_groups: int
) -> npt.NDArray[np.float64]:
    """Sum the columns of `values` (systems × rows) by the group code of each row.

    values: (S, R) bool or numbers; groups: (R,) codes in [0, n_groups).
    Returns (S, n_groups) float64; sums of counts are exact up to 2**53.

    >>> group_sums(np.array([[1, 0, 1], [0, 1, 1]]), np.array([0, 1, 0]), 2)
    array([[2., 0.],
           [1., 1.]])
    """
    rows = len(groups)
    # A sparse one-hot matrix keeps this one matrix product even with many groups (tags).
    one_hot = sparse.csr_matrix((np.ones(rows), (np.arange(rows), groups)), shape=(rows, n_groups))
    product = one_hot.T @ np.asarray(values, dtype=np.float64).T
    return np.asarray(product).T
