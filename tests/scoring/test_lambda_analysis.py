"""λmax analyses: Δλmax per team and system; correlations, AUC and quartiles per kind of pair."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from scoring import ScoringInputError, score


def only(table: pd.DataFrame, **where: object) -> pd.Series:
    """The one row of `table` whose columns have the given values."""
    chosen = table
    for column, value in where.items():
        chosen = chosen[chosen[column] == value]
    assert len(chosen) == 1, f"{len(chosen)} rows match {where}"
    return chosen.iloc[0]


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

    correlation = score(pairs, predictions, weight="none").lambda_analysis.correlation
    row = only(correlation, kind="all", outcome="broken")

    pearson, spearman = stats.pearsonr(original, broken), stats.spearmanr(original, broken)
    assert row["pairs"] == 8
    assert row["pearson_r"] == pytest.approx(pearson.statistic)
    assert row["pearson_p"] == pytest.approx(pearson.pvalue)
    assert row["spearman_r"] == pytest.approx(spearman.statistic)
    assert row["spearman_p"] == pytest.approx(spearman.pvalue)
    assert row["spearman_r"] > 0.8


def test_the_top_quartile_of_original_lambda_breaks_more_often_here(task):
    pairs, predictions, _, _ = task

    quartiles = score(pairs, predictions, weight="none").lambda_analysis.quartiles

    # λmax 1..8: q25 = 2.75, q75 = 6.25; bottom {1, 2}, top {7, 8}.
    bottom, top = only(quartiles, kind="all", quartile=1), only(quartiles, kind="all", quartile=4)
    assert (bottom["lambda_low"], bottom["lambda_high"], top["lambda_low"]) == (1.0, 2.75, 6.25)
    assert (bottom["pairs"], bottom["broken_pct"]) == (2, 0.0)
    assert (top["pairs"], top["broken_pct"], top["lambda_high"]) == (2, 100.0, 8.0)


def test_a_constant_outcome_has_no_correlation_and_json_says_null(make_pairs, make_predictions):
    pairs = make_pairs(*[("T", f"o{index}", 1, f"v{index}", 1) for index in range(4)])
    labels = {f"{side}{index}": 1 for index in range(4) for side in "ov"}
    lambdas = {"S": {text: float(position) for position, text in enumerate(labels)}}
    predictions = make_predictions({"S": labels}, lambda_max=lambdas)

    report = score(pairs, predictions, weight="none")

    row = only(report.lambda_analysis.correlation, kind="all", outcome="broken")
    assert np.isnan(row["pearson_r"]) and np.isnan(row["spearman_p"])
    document = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert document["lambda"]["correlation"][0]["pearson_r"] is None


def test_pairs_missing_a_lambda_max_are_left_out(task):
    pairs, predictions, original, _ = task
    predictions.loc[predictions["text"] == "original 0", "lambda_max"] = np.nan

    analysis = score(pairs, predictions, weight="none").lambda_analysis

    row = only(analysis.correlation, kind="all", outcome="broken")
    assert row["pairs"] == 7
    assert analysis.delta.set_index("team").loc["T", "pairs"] == 3
    broken = (original[1:] >= 5).astype(float)
    assert row["pearson_r"] == pytest.approx(stats.pearsonr(original[1:], broken).statistic)


def split_task(make_pairs, lambdas=None, probabilities=None):
    """Eight label-keeping and eight label-changing pairs (labels 1 / -1, binary) whose
    originals have λmax 1..8 in each kind; system S's prediction moves exactly when the
    original's λmax is at least 5. So near the boundary the label-keeping pairs break and
    the label-changing ones do not (S follows the flip); far from it the reverse."""
    lambdas = list(range(1, 9)) if lambdas is None else lambdas
    rows, texts, labels, values, probs = [], [], [], [], []
    for kind, variant_gold in (("same", 1), ("flip", -1)):
        for index, lam in enumerate(lambdas):
            original, variant = f"{kind} original {index}", f"{kind} variant {index}"
            rows.append(("T", original, 1, variant, variant_gold))
            moves = index >= 4
            texts += [original, variant]
            labels += [1, -1 if moves else 1]
            values += [float(lam), 1.0]
            confidence = None if probabilities is None else probabilities[index]
            probs += [confidence, confidence]
    predictions = pd.DataFrame(
        {"system": "S", "text": texts, "label": labels, "lambda_max": values}
    )
    if probabilities is not None:
        predictions["probabilities"] = probs
    return make_pairs(*rows), predictions


def test_correlations_separate_label_keeping_from_label_changing_pairs(make_pairs):
    pairs, predictions = split_task(make_pairs)
    correlation = score(pairs, predictions, weight="none").lambda_analysis.correlation
    lam = np.arange(1.0, 9.0)
    moved = (lam >= 5).astype(float)

    for kind, broken in (("same_label", moved), ("flipped", 1 - moved)):
        changed_row = only(correlation, kind=kind, outcome="changed")
        broken_row = only(correlation, kind=kind, outcome="broken")
        assert changed_row["pairs"] == broken_row["pairs"] == 8
        assert changed_row["pearson_r"] == pytest.approx(stats.pearsonr(lam, moved).statistic)
        assert changed_row["pearson_p"] == pytest.approx(stats.pearsonr(lam, moved).pvalue)
        assert broken_row["spearman_r"] == pytest.approx(stats.spearmanr(lam, broken).statistic)
    assert only(correlation, kind="same_label", outcome="broken")["pearson_r"] > 0.8
    assert only(correlation, kind="flipped", outcome="broken")["pearson_r"] < -0.8
    # Pooled, the two kinds cancel exactly: that is why the analysis splits them.
    pooled = only(correlation, kind="all", outcome="broken")
    assert pooled["pairs"] == 16 and pooled["pearson_r"] == pytest.approx(0.0, abs=1e-12)
    assert only(correlation, kind="all", outcome="changed")["pearson_r"] > 0.8


@pytest.mark.parametrize(
    ("lambdas", "expected"),
    [
        (list(range(1, 9)), 1.0),
        (list(range(8, 0, -1)), 0.0),
        ([3.0] * 8, None),
        ([1, 2, 3, 5, 4, 6, 7, 8], 15 / 16),
    ],
)
def test_lambda_auc_for_a_changed_prediction(make_pairs, lambdas, expected):
    pairs, predictions = split_task(make_pairs, lambdas=lambdas)
    auc = score(pairs, predictions, weight="none").lambda_analysis.auc
    for kind in ("all", "same_label", "flipped"):
        row = only(auc, kind=kind)
        assert row["changed"] * 2 == row["pairs"]
        if expected is None:
            assert np.isnan(row["lambda_auc"])
        else:
            assert row["lambda_auc"] == pytest.approx(expected)
        assert row["confidence_pairs"] == 0 and np.isnan(row["confidence_auc"])


def test_auc_with_ties_equals_the_mann_whitney_statistic(make_pairs):
    rng = np.random.default_rng(3)
    lambdas = rng.integers(0, 3, size=8).astype(float).tolist()
    pairs, predictions = split_task(make_pairs, lambdas=lambdas)
    row = only(score(pairs, predictions, weight="none").lambda_analysis.auc, kind="same_label")
    moved = np.arange(8) >= 4
    values = np.array(lambdas)
    u = stats.mannwhitneyu(values[moved], values[~moved]).statistic
    assert row["lambda_auc"] == pytest.approx(u / 16)


def test_auc_is_undefined_when_every_prediction_changed_or_none_did(make_pairs, make_predictions):
    rows = [("T", f"o{i}", 1, f"v{i}", 1) for i in range(4)]
    texts = {f"{side}{i}": 1 for i in range(4) for side in "ov"}
    lambdas = {"S": {text: float(position) for position, text in enumerate(texts)}}
    report = score(
        make_pairs(*rows), make_predictions({"S": texts}, lambda_max=lambdas), weight="none"
    )
    auc = report.lambda_analysis.auc
    assert np.isnan(only(auc, kind="all")["lambda_auc"])
    # No label-changing pair at all: an empty group, not an error.
    empty = only(auc, kind="flipped")
    assert empty["pairs"] == 0 and np.isnan(empty["lambda_auc"])
    correlation = only(report.lambda_analysis.correlation, kind="flipped", outcome="changed")
    assert correlation["pairs"] == 0 and np.isnan(correlation["pearson_r"])
    document = json.loads(json.dumps(report.to_dict(), allow_nan=False))
    assert {row["kind"] for row in document["lambda"]["auc"]} == {"all", "same_label", "flipped"}


def test_the_confidence_baseline_sits_beside_lambda(make_pairs):
    # Largest probability falling with the index: uncertainty rises, like λmax here.
    largest = [0.99, 0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.55]
    forms = [
        {"-1": 1 - p, "1": p}
        if index % 3 == 0
        else [1 - p, p]
        if index % 3 == 1
        else json.dumps({"-1": 1 - p, "1": p})
        for index, p in enumerate(largest)
    ]
    pairs, predictions = split_task(make_pairs, probabilities=forms)
    row = only(score(pairs, predictions, weight="none").lambda_analysis.auc, kind="same_label")
    assert row["confidence_pairs"] == 8
    assert row["confidence_auc"] == pytest.approx(1.0) and row["lambda_auc"] == pytest.approx(1.0)

    reversed_forms = [[1 - p, p] for p in reversed(largest)]
    pairs, predictions = split_task(make_pairs, probabilities=reversed_forms)
    row = only(score(pairs, predictions, weight="none").lambda_analysis.auc, kind="flipped")
    assert row["confidence_auc"] == pytest.approx(0.0)


def test_probabilities_missing_for_some_originals_leave_those_pairs_out(make_pairs):
    forms = [None, "", [0.1, 0.9], [0.2, 0.8], [0.3, 0.7], [0.35, 0.65], [0.4, 0.6], [0.45, 0.55]]
    pairs, predictions = split_task(make_pairs, probabilities=forms)
    row = only(score(pairs, predictions, weight="none").lambda_analysis.auc, kind="same_label")
    assert row["pairs"] == 8 and row["confidence_pairs"] == 6
    assert row["confidence_auc"] == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("{not json", "probabilities must be JSON"),
        ("[0.5, 0.7]", "sums to 1.2, not 1"),
        ({"1": 1.5, "-1": -0.5}, r"outside \[0, 1\]"),
        ('"high"', "mapping or list of numbers"),
        ([], "non-empty"),
    ],
)
def test_bad_probabilities_are_named(make_pairs, value, message):
    pairs, predictions = split_task(make_pairs, probabilities=[[0.2, 0.8]] * 8)
    predictions.at[3, "probabilities"] = value
    with pytest.raises(ScoringInputError, match=message) as raised:
        score(pairs, predictions, weight="none")
    assert "system 'S'" in str(raised.value) and "same variant 1" in str(raised.value)


def test_repeats_that_disagree_on_probabilities_conflict(make_pairs):
    pairs, predictions = split_task(make_pairs, probabilities=[[0.2, 0.8]] * 8)
    repeat = predictions.iloc[[0]].assign(probabilities=[[0.4, 0.6]])
    with pytest.raises(ScoringInputError, match="different probabilities"):
        score(pairs, pd.concat([predictions, repeat]), weight="none")


def test_quartiles_per_kind_use_the_same_lambda_edges(make_pairs):
    pairs, predictions = split_task(make_pairs)
    quartiles = score(pairs, predictions, weight="none").lambda_analysis.quartiles
    assert len(quartiles) == 3 * 4
    # λmax 1..8 in each kind: q25 = 2.75, q50 = 4.5, q75 = 6.25 over all sixteen pairs.
    for kind, near, far in (("same_label", 100.0, 0.0), ("flipped", 0.0, 100.0)):
        top, bottom = only(quartiles, kind=kind, quartile=4), only(quartiles, kind=kind, quartile=1)
        assert (top["pairs"], top["broken_pct"], top["changed_pct"]) == (2, near, 100.0)
        assert (bottom["pairs"], bottom["broken_pct"], bottom["changed_pct"]) == (2, far, 0.0)
    edges = only(quartiles, kind="all", quartile=2)
    assert (edges["lambda_low"], edges["lambda_high"], edges["pairs"]) == (2.75, 4.5, 4)


def test_the_markdown_report_shows_every_lambda_table(make_pairs):
    pairs, predictions = split_task(make_pairs, probabilities=[[0.2, 0.8]] * 8)
    markdown = score(pairs, predictions, weight="none").to_markdown()
    for heading in ("λmax AUC", "confidence AUC", "% changed", "same_label", "flipped"):
        assert heading in markdown
