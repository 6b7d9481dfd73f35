"""λmax percentile ranks and boundary scores (``scoring.boundary``), checked by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

import scoring


def test_percentiles_scale_the_rank_to_zero_and_one():
    # λmax 0.2 < 0.9 < 1.5 < 4.0: ranks 1..4, (rank - 1) / 3.
    ranks = scoring.percentile_ranks([1.5, 0.2, 4.0, 0.9])

    assert ranks.tolist() == pytest.approx([2 / 3, 0.0, 1.0, 1 / 3])


def test_ties_share_their_mean_rank():
    # 0.5 once (rank 1), 2.0 three times (ranks 2, 3, 4: mean 3), 9.0 once (rank 5); n - 1 = 4.
    ranks = scoring.percentile_ranks([2.0, 0.5, 2.0, 9.0, 2.0])

    assert ranks.tolist() == pytest.approx([0.5, 0.0, 0.5, 1.0, 0.5])


def test_one_original_stands_in_the_middle_and_none_gives_nothing():
    assert scoring.percentile_ranks([3.2]).tolist() == [0.5]
    assert scoring.percentile_ranks([]).tolist() == []


def test_every_value_equal_is_the_middle_for_all():
    assert scoring.percentile_ranks([1.0, 1.0, 1.0]).tolist() == [0.5, 0.5, 0.5]


def test_nan_is_refused_not_ranked():
    with pytest.raises(ValueError, match="NaN"):
        scoring.percentile_ranks([1.0, math.nan])


def test_the_boundary_score_is_the_mean_over_the_systems_that_have_the_original():
    percentiles = np.array(
        [
            [1.0, 0.5, 0.0],  # every system: (1 + 0.5 + 0) / 3
            [0.25, np.nan, 0.75],  # two systems: (0.25 + 0.75) / 2
            [np.nan, np.nan, np.nan],  # no system has its λmax: 0
        ]
    )

    assert scoring.boundary_scores(percentiles).tolist() == pytest.approx([0.5, 0.5, 0.0])


def test_the_boundary_score_takes_a_table():
    with pytest.raises(ValueError, match="originals, systems"):
        scoring.boundary_scores(np.array([0.1, 0.2]))
