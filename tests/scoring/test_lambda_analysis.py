"""λmax analyses: Δλmax per team and system, correlations with breaking, quartiles."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from scoring import score


@pytest.fixture
def task(make_pairs):
    """Eight pairs, four per team; system S is broken exactly by the pairs whose original has
    λmax ≥ 5, so high λmax marks the fragile originals."""
    rows = [("T", f"original {index}", 1, f"variant {index}", 1) for index in range(8)]
    pairs = make_pairs(*rows[:4], *[("U", *row[1:]) for row in rows[4:]])
    lambda_original = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    lambda_variant = [1.5, 2.5, 2.0, 4.0, 9.0, 6.0, 7.5, 12.0]
    texts, labels, lambdas = [], [], []
    for index in range(8):
        broken = lambda_original[index] >= 5
        texts += [f"original {index}", f"variant {index}"]
        labels += [1, -1 if broken else 1]
        lambdas += [lambda_original[index], lambda_variant[index]]
    predictions = pd.DataFrame(
        {"system": "S", "text": texts, "label": labels, "lambda_max": lambdas}
    )
    return pairs, predictions, np.array(lambda_original), np.array(lambda_variant)


def test_without_lambda_max_there_is_no_lambda_section(make_pairs, make_predictions):
    pairs = make_pairs(("T", "good", 1, "not good", -1))
    report = score(pairs, make_predictions({"S": {"good": 1, "not good": 1}}), weight="none")

    assert report.lambda_analysis is None
    assert "lambda" not in report.to_dict()
    assert "λmax" not in report.to_markdown()


def test_a_lambda_max_column_without_values_counts_as_absent(make_pairs, make_predictions):
    pairs = make_pairs(("T", "good", 1, "not good", -1))
    predictions = make_predictions({"S": {"good": 1, "not good": 1}}).assign(lambda_max="")

    assert score(pairs, predictions, weight="none").lambda_analysis is None


def test_delta_lambda_has_a_mean_and_std_per_team_and_system(task):
    pairs, predictions, original, variant = task

    delta = score(pairs, predictions, weight="none").lambda_analysis.delta.set_index("team")

    assert delta.loc["T", "pairs"] == 4
    # T: deltas 0.5, 0.5, -1.0, 0.0
    assert delta.loc["T", "mean_delta"] == pytest.approx(0.0)
    assert delta.loc["T", "std_delta"] == pytest.approx(np.std([0.5, 0.5, -1.0, 0.0], ddof=1))
    # U: deltas 4.0, 0.0, 0.5, 4.0
    assert delta.loc["U", "mean_delta"] == pytest.approx(2.125)
    assert delta.loc["U", "std_delta"] == pytest.approx(np.std([4.0, 0.0, 0.5, 4.0], ddof=1))


def test_correlations_with_breaking_agree_with_scipy(task):
    pairs, predictions, original, _ = task
    broken = (original >= 5).astype(float)

    row = score(pairs, predictions, weight="none").lambda_analysis.correlation.iloc[0]

    pearson, spearman = stats.pearsonr(original, broken), stats.spearmanr(original, broken)
    assert row["pairs"] == 8
    assert row["pearson_r"] == pytest.approx(pearson.statistic)
    assert row["pearson_p"] == pytest.approx(pearson.pvalue)
    assert row["spearman_r"] == pytest.approx(spearman.statistic)
    assert row["spearman_p"] == pytest.approx(spearman.pvalue)
    assert row["spearman_r"] > 0.8


def test_the_top_quartile_of_original_lambda_breaks_more_often_here(task):
    pairs, predictions, _, _ = task

    row = score(pairs, predictions, weight="none").lambda_analysis.quartiles.iloc[0]

    # λmax 1..8: q25 = 2.75, q75 = 6.25; bottom {1, 2}, top {7, 8}.
    assert (row["q25"], row["q75"]) == (2.75, 6.25)
    assert (row["bottom_pairs"], row["bottom_broken_pct"]) == (2, 0.0)
    assert (row["top_pairs"], row["top_broken_pct"]) == (2, 100.0)


def test_a_constant_outcome_has_no_correlation_and_json_says_null(make_pairs, make_predictions):
    pairs = make_pairs(*[("T", f"o{index}", 1, f"v{index}", 1) for index in range(4)])
    labels = {f"{side}{index}": 1 for index in range(4) for side in "ov"}
    lambdas = {"S": {text: float(position) for position, text in enumerate(labels)}}
    predictions = make_predictions({"S": labels}, lambda_max=lambdas)

    report = score(pairs, predictions, weight="none")

    row = report.lambda_analysis.correlation.iloc[0]
    assert np.isnan(row["pearson_r"]) and np.isnan(row["spearman_p"])
    document = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert document["lambda"]["correlation"][0]["pearson_r"] is None


def test_pairs_missing_a_lambda_max_are_left_out(task):
    pairs, predictions, original, _ = task
    predictions.loc[predictions["text"] == "original 0", "lambda_max"] = np.nan

    analysis = score(pairs, predictions, weight="none").lambda_analysis

    assert analysis.correlation.iloc[0]["pairs"] == 7
    assert analysis.delta.set_index("team").loc["T", "pairs"] == 3
    broken = (original[1:] >= 5).astype(float)
    assert analysis.correlation.iloc[0]["pearson_r"] == pytest.approx(
        stats.pearsonr(original[1:], broken).statistic
    )
