"""Properties every scoring run must have, checked on random small tasks (hypothesis)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import score

WEIGHT_MODES_WITHOUT_INPUT = ["none", "original_accuracy", "original_f1"]


@st.composite
def tasks(draw) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Pairs over a pool of texts, each text with one gold label (so a system can be
    right on everything), and every system's prediction, sometimes outside the label set,
    with λmax."""
    n_texts = draw(st.integers(2, 10))
    gold = draw(st.lists(st.sampled_from([-1, 1]), min_size=n_texts, max_size=n_texts))
    n_pairs = draw(st.integers(1, 10))
    rows = []
    for pair_id in range(n_pairs):
        original = draw(st.integers(0, n_texts - 1))
        variant = draw(
            st.integers(0, n_texts - 1).filter(lambda index, first=original: index != first)
        )
        rows.append(
            {
                "pair_id": f"p{pair_id}",
                "team": draw(st.sampled_from(["Ada", "Bo", "Cy"])),
                "original_id": f"o{original}",
                "original_text": f"text {original}",
                "original_label": gold[original],
                "variant_text": f"text {variant}",
                "variant_label": gold[variant],
                "tags": draw(st.sampled_from(["", "lexical", "syntax", "lexical;syntax"])),
            }
        )
    n_systems = draw(st.integers(1, 4))
    predictions = pd.DataFrame(
        [
            {
                "system": f"sys{system}",
                "text": f"text {text}",
                "label": draw(st.sampled_from([-1, 1, 1, 0])),
                "lambda_max": draw(st.floats(0, 100, allow_nan=False)),
            }
            for system in range(n_systems)
            for text in range(n_texts)
        ]
    )
    return pd.DataFrame(rows), predictions


def as_json(report) -> str:
    return json.dumps(report.to_dict(), allow_nan=False, sort_keys=True)


def rates(report) -> dict:
    """Every rate of a report, without the counts that grow with the pairs."""
    return {
        "builders": report.builders[["system", "f1", "accuracy", "broken_pct"]].to_dict("list"),
        "breakers": report.breakers[["team", "score"]].to_dict("list"),
        "matrix": report.matrix.to_dict(),
        "tags": report.tags_by_system.to_dict(),
        "flips": report.flips_by_system.to_dict(),
    }


def assert_same_rates(first: dict, second: dict) -> None:
    assert first.keys() == second.keys()
    for key in first:
        left, right = pd.json_normalize(first[key]), pd.json_normalize(second[key])
        pd.testing.assert_frame_equal(left, right, check_exact=False, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(
    task=tasks(),
    order=st.randoms(use_true_random=False),
    weight=st.sampled_from(WEIGHT_MODES_WITHOUT_INPUT),
)
def test_row_order_never_changes_a_result(task, order, weight):
    pairs, predictions = task
    pair_rows, prediction_rows = list(range(len(pairs))), list(range(len(predictions)))
    order.shuffle(pair_rows)
    order.shuffle(prediction_rows)

    before = score(pairs, predictions, weight=weight)
    after = score(pairs.iloc[pair_rows], predictions.iloc[prediction_rows], weight=weight)

    assert as_json(before) == as_json(after)


@settings(max_examples=30, deadline=None)
@given(task=tasks())
def test_a_system_that_is_always_right_is_never_broken(task):
    pairs, predictions = task
    gold = pd.concat(
        [
            pairs[["original_text", "original_label"]].set_axis(["text", "label"], axis=1),
            pairs[["variant_text", "variant_label"]].set_axis(["text", "label"], axis=1),
        ]
    ).drop_duplicates()
    oracle = gold.assign(system="oracle", lambda_max=1.0)

    report = score(pairs, pd.concat([predictions, oracle]), weight="none")

    builder = report.builders.set_index("system").loc["oracle"]
    assert builder["breaks"] == 0 and builder["broken_pct"] == 0
    assert builder["accuracy"] == 1 and builder["f1"] == 1
    assert (report.matrix["oracle"] == 0).all()
    assert all("oracle" not in item["broken"] for item in report.to_dict()["items"])


@settings(max_examples=30, deadline=None)
@given(task=tasks(), data=st.data())
def test_swapping_a_pair_s_two_items_changes_no_break(task, data):
    pairs, predictions = task
    swap = np.array(data.draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs))))
    swapped = pairs.copy()
    for side, other in (("text", "text"), ("label", "label")):
        original, variant = pairs[f"original_{side}"], pairs[f"variant_{other}"]
        swapped[f"original_{side}"] = np.where(swap, variant, original)
        swapped[f"variant_{other}"] = np.where(swap, original, variant)

    before = score(pairs, predictions, weight="none")
    after = score(swapped, predictions, weight="none")

    np.testing.assert_array_equal(before.breaks.broken, after.breaks.broken)
    np.testing.assert_array_equal(before.breaks.both_wrong, after.breaks.both_wrong)
    assert_same_rates(rates(before), rates(after))


@settings(max_examples=30, deadline=None)
@given(task=tasks(), weight=st.sampled_from(WEIGHT_MODES_WITHOUT_INPUT))
def test_doubling_every_pair_set_changes_no_rate(task, weight):
    pairs, predictions = task
    doubled = pd.concat([pairs, pairs.assign(pair_id=pairs["pair_id"] + "-copy")])

    before = score(pairs, predictions, weight=weight)
    after = score(doubled, predictions, weight=weight)

    assert_same_rates(rates(before), rates(after))
    assert (after.builders["breaks"] == 2 * before.builders["breaks"]).all()


@settings(max_examples=15, deadline=None)
@given(task=tasks())
def test_the_sentence_convention_is_half_the_pair_rate(task):
    pairs, predictions = task

    per_pair = score(pairs, predictions, weight="original_f1")
    per_sentence = score(pairs, predictions, weight="original_f1", break_rate="sentences")

    assert per_sentence.matrix.to_numpy() == pytest.approx(per_pair.matrix.to_numpy() / 2)
    assert per_sentence.breakers["score"].to_numpy() == pytest.approx(
        per_pair.breakers["score"].to_numpy() / 2
    )
