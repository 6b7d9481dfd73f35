"""Checks on the three inputs and their canonical forms; every problem is a ScoringInputError."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from pandas.api.types import is_numeric_dtype

from scoring.errors import ScoringInputError
from scoring.labels import normalize_labels, sort_labels

PAIR_COLUMNS = (
    "pair_id",
    "team",
    "original_id",
    "original_text",
    "original_label",
    "variant_text",
    "variant_label",
)
PREDICTION_COLUMNS = ("system", "text", "label")
UNSEEN_COLUMNS = ("system", "pair_id")
WEIGHT_COLUMNS = ("system", "weight")

# Long sentences would drown the message that names them.
_TEXT_IN_MESSAGE = 80


def quote(value: object) -> str:
    """A value as it appears in an error message, long texts shortened."""
    text = str(value)
    if len(text) > _TEXT_IN_MESSAGE:
        text = text[: _TEXT_IN_MESSAGE - 1] + "…"
    return repr(text)


def quote_some(values: Iterable[object], limit: int = 3) -> str:
    """`'a', 'b', 'c' and 4 more`."""
    values = list(values)
    shown = ", ".join(quote(value) for value in values[:limit])
    if len(values) > limit:
        shown += f" and {len(values) - limit} more"
    return shown


def _require_frame(frame: object, columns: Sequence[str], what: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ScoringInputError(f"{what} must be a pandas DataFrame, not {type(frame).__name__}")
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ScoringInputError(
            f"{what} is missing column(s) {', '.join(missing)}; "
            f"it has: {', '.join(map(str, frame.columns)) or 'no columns'}"
        )
    if frame.empty:
        raise ScoringInputError(f"{what} has no rows: there is nothing to score")
    return frame


def _categorical(series: pd.Series, clean: Callable[[pd.Series], pd.Series]) -> pd.Series:
    """Apply `clean` to the distinct values only and return a categorical Series.

    Prediction files repeat each system name, text and label many times: cleaning millions
    of rows one by one is the slow part of scoring, cleaning their distinct values is not.
    `clean` maps a Series of raw values to cleaned ones, missing where blank.
    """
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    cleaned = clean(pd.Series(np.asarray(uniques, dtype=object), dtype=object))
    # Cleaning may merge values (" a" and "a", "1" and "+1"): factorize again.
    merged_codes, categories = pd.factorize(cleaned, use_na_sentinel=True)
    final_codes = np.append(merged_codes, -1)[codes]
    return pd.Series(
        pd.Categorical.from_codes(final_codes, categories=pd.Index(categories, dtype=object)),
        index=series.index,
    )


def _strip_blank(values: pd.Series, *, strip: bool) -> pd.Series:
    """Values as `str`, stripped when `strip`; missing or whitespace-only ones missing."""
    text = values.astype(str)
    stripped = text.str.strip()
    result = (stripped if strip else text).astype(object)
    result[values.isna() | (stripped == "")] = np.nan
    return result


def _strings(series: pd.Series, *, strip: bool) -> pd.Series:
    """The values as categorical `str` (stripped when `strip`), blank ones missing."""
    return _categorical(series, lambda values: _strip_blank(values, strip=strip))


def clean_pairs(pairs: pd.DataFrame) -> pd.DataFrame:
    """Check the pairs and return them in canonical order (team, then pair_id).

    Output columns: pair_id, team, original_id, original_text, original_label (normalized),
    variant_text, variant_label (normalized), tags (`str`, empty when untagged), flipped.
    The canonical order makes every result independent of the input's row order.
    """
    pairs = _require_frame(pairs, PAIR_COLUMNS, "pairs")
    pair_id = pairs["pair_id"]
    if pair_id.isna().any():
        rows = np.flatnonzero(pair_id.isna().to_numpy())
        raise ScoringInputError(f"pairs has rows without a pair_id (row(s) {quote_some(rows)})")
    if not is_numeric_dtype(pair_id):
        pair_id = _strip_blank(pair_id, strip=True)
        if pair_id.isna().any():
            rows = np.flatnonzero(pair_id.isna().to_numpy())
            raise ScoringInputError(f"pairs has a blank pair_id in row(s) {quote_some(rows)}")
        # Ids read from a file arrive as text; whole numbers sort and print as numbers.
        number = pd.to_numeric(pair_id, errors="coerce")
        if number.notna().all() and (number == np.round(number)).all():
            pair_id = number.astype(np.int64)
    repeated = pair_id[pair_id.duplicated()].unique()
    if len(repeated):
        raise ScoringInputError(f"pair_id must be unique; repeated: {quote_some(repeated)}")

    def require(values: pd.Series, column: str) -> pd.Series:
        if values.isna().any():
            blank = quote_some(pair_id[values.isna()])
            raise ScoringInputError(f"{column} is blank for pair(s) {blank}")
        return values

    clean = pd.DataFrame(
        {
            "pair_id": pair_id,
            "team": require(_strip_blank(pairs["team"], strip=True), "team"),
            "original_id": pairs["original_id"],
        }
    )
    for side in ("original", "variant"):
        text = _strip_blank(pairs[f"{side}_text"], strip=False)
        clean[f"{side}_text"] = require(text, f"{side}_text")
        clean[f"{side}_label"] = require(normalize_labels(pairs[f"{side}_label"]), f"{side}_label")
    if "tags" in pairs.columns:
        clean["tags"] = _strip_blank(pairs["tags"], strip=True).fillna("")
    else:
        clean["tags"] = ""
    clean["flipped"] = clean["original_label"] != clean["variant_label"]
    return clean.sort_values(["team", "pair_id"], kind="stable").reset_index(drop=True)


def resolve_labels(pairs: pd.DataFrame, labels: Sequence[object] | None) -> list[str]:
    """The task's label set: the given labels (normalized, in their order) or, by default,
    the gold labels seen in the (clean) pairs. A gold label outside a given set is an error.
    """
    gold = pd.concat([pairs["original_label"], pairs["variant_label"]])
    if labels is None:
        return sort_labels(gold.unique())
    if isinstance(labels, str):
        raise ScoringInputError("labels must be a sequence of labels, not one string")
    normalized = normalize_labels(pd.Series(list(labels), dtype=object))
    if normalized.isna().any() or normalized.empty:
        raise ScoringInputError("labels must be a non-empty list of non-blank labels")
    label_set = list(dict.fromkeys(normalized))
    for side in ("original", "variant"):
        outside = ~pairs[f"{side}_label"].isin(label_set)
        if outside.any():
            first = pairs[outside].iloc[0]
            raise ScoringInputError(
                f"pair {quote(first['pair_id'])} has {side}_label {quote(first[f'{side}_label'])}, "
                f"which is not in the label set {label_set} "
                f"({int(outside.sum())} pair(s) have such a {side}_label)"
            )
    return label_set


def clean_predictions(predictions: pd.DataFrame) -> pd.DataFrame:
    """Check the predictions; output columns system, text, label (normalized), all three
    categorical, lambda_max (float) when the input has a lambda_max column with at least one
    value, and confidence (float, the largest probability) when it has a probabilities column
    with at least one value.

    A blank label is a missing prediction, named by its system and text.
    """
    predictions = _require_frame(predictions, PREDICTION_COLUMNS, "predictions")
    text = _strings(predictions["text"], strip=False)
    system = _strings(predictions["system"], strip=True)
    if text.isna().any():
        systems = system[text.isna()].dropna().unique()
        raise ScoringInputError(
            f"predictions has {int(text.isna().sum())} row(s) with a blank text "
            f"(system(s) {quote_some(systems)})"
        )
    if system.isna().any():
        raise ScoringInputError(
            f"predictions has a blank system for text(s) {quote_some(text[system.isna()])}"
        )
    label = _categorical(predictions["label"], normalize_labels)
    if label.isna().any():
        first = int(label.isna().to_numpy().argmax())
        raise ScoringInputError(
            f"system {quote(system.iloc[first])} has no prediction for text "
            f"{quote(text.iloc[first])} (a blank label; {int(label.isna().sum())} in all)"
        )
    clean = pd.DataFrame({"system": system, "text": text, "label": label})
    if "lambda_max" in predictions.columns:
        raw = predictions["lambda_max"]
        lambda_max = pd.to_numeric(raw, errors="coerce").astype(float)
        # Only the cells that did not parse can be blank; checking those alone is cheap.
        unparsed = ~np.isfinite(lambda_max)
        unreadable = unparsed.copy()
        unreadable[unparsed] = _strip_blank(raw[unparsed], strip=True).notna()
        if unreadable.any():
            first = int(unreadable.to_numpy().argmax())
            raise ScoringInputError(
                f"lambda_max must be a finite number; system {quote(system.iloc[first])} has "
                f"{quote(raw.iloc[first])} for text {quote(text.iloc[first])}"
            )
        if lambda_max.notna().any():
            clean["lambda_max"] = lambda_max
    if "probabilities" in predictions.columns:
        confidence = _confidence(predictions["probabilities"], system, text)
        if np.isfinite(confidence).any():
            clean["confidence"] = confidence
    return clean


# Rounded probabilities (a CSV with 4 decimals) may miss 1 by a little; more is an error.
_PROBABILITY_SUM_TOLERANCE = 0.01


def _confidence(raw: pd.Series, system: pd.Series, text: pd.Series) -> np.ndarray:
    """The largest probability of each row, NaN where the cell is blank.

    A cell is a mapping label → probability (as the platform stores it), a sequence of
    probabilities, or either one as JSON text (as a CSV file holds it); values are numbers
    in [0, 1] that sum to 1 (within 0.01).
    """
    values = raw.to_numpy(dtype=object)
    confidence = np.full(len(values), np.nan)
    # Files repeat few distinct strings per system only rarely, but parsing each distinct
    # string once costs nothing when they do.
    parsed: dict[str, float] = {}

    def where(row: int) -> tuple[object, object]:
        # Looked up only for an error message: per-row lookups are the slow part otherwise.
        return system.iloc[row], text.iloc[row]

    for row, value in enumerate(values):
        if isinstance(value, str):
            if not value.strip():
                continue
            if value not in parsed:
                parsed[value] = _largest_probability(_parse_json(value, row, where), row, where)
            confidence[row] = parsed[value]
        elif value is not None and not (isinstance(value, float) and np.isnan(value)):
            confidence[row] = _largest_probability(value, row, where)
    return confidence


Where = Callable[[int], tuple[object, object]]


def _parse_json(value: str, row: int, where: Where) -> object:
    try:
        return json.loads(value)
    except json.JSONDecodeError as error:
        system, text = where(row)
        raise ScoringInputError(
            f"probabilities must be JSON (an object label → probability, or a list); system "
            f"{quote(system)} has {quote(value)} for text {quote(text)}: {error.msg}"
        ) from error


def _largest_probability(value: object, row: int, where: Where) -> float:
    """The largest of one cell's probabilities, checked (plain Python: cells are short)."""
    numbers: Any = list(value.values()) if isinstance(value, Mapping) else value
    problem = ""
    try:
        probabilities = [float(number) for number in numbers]
    except (TypeError, ValueError):
        probabilities = []
        problem = "is not a mapping or list of numbers"
    if not problem:
        total = sum(probabilities)
        if not probabilities:
            problem = "is not a non-empty mapping or list of numbers"
        elif not all(0.0 <= probability <= 1.0 for probability in probabilities):
            problem = "has a value outside [0, 1]"
        elif abs(total - 1.0) > _PROBABILITY_SUM_TOLERANCE:
            problem = f"sums to {total:.4g}, not 1"
    if problem:
        system, text = where(row)
        raise ScoringInputError(
            f"probabilities {problem}; system {quote(system)} has {quote(value)} for text "
            f"{quote(text)}"
        )
    return max(probabilities)


def clean_weights(weights: pd.DataFrame | None, systems: Sequence[str]) -> np.ndarray:
    """One weight per system, in the order of `systems`, each a number in [0, 1]
    (an accuracy). Missing, extra, conflicting or out-of-range weights are errors.
    """
    if weights is None:
        raise ScoringInputError(
            "weight mode 'dev_accuracy' needs weights (columns system, weight); pass them "
            "or choose weight 'original_accuracy', 'original_f1' or 'none'"
        )
    weights = _require_frame(weights, WEIGHT_COLUMNS, "weights")
    system = _strip_blank(weights["system"], strip=True)
    if system.isna().any():
        rows = np.flatnonzero(system.isna().to_numpy())
        raise ScoringInputError(f"weights has a blank system in row(s) {quote_some(rows)}")
    value = pd.to_numeric(weights["weight"], errors="coerce").astype(float)
    bad = ~np.isfinite(value) | (value < 0) | (value > 1)
    if bad.any():
        first = bad.to_numpy().argmax()
        raise ScoringInputError(
            f"weight must be a number between 0 and 1 (an accuracy); system "
            f"{quote(system.iloc[first])} has {quote(weights['weight'].iloc[first])}"
        )
    table = pd.DataFrame({"system": system, "weight": value}).drop_duplicates()
    conflicting = table["system"][table["system"].duplicated()].unique()
    if len(conflicting):
        raise ScoringInputError(
            f"weights gives different weights for system(s) {quote_some(conflicting)}"
        )
    by_system = table.set_index("system")["weight"]
    missing = [name for name in systems if name not in by_system.index]
    if missing:
        raise ScoringInputError(f"weights has no weight for system(s) {quote_some(missing)}")
    extra = sorted(set(by_system.index) - set(systems))
    if extra:
        raise ScoringInputError(
            f"weights names system(s) {quote_some(extra)} that have no predictions"
        )
    return by_system.loc[list(systems)].to_numpy(dtype=float)


def clean_unseen(
    unseen: pd.DataFrame | None, pair_ids: pd.Series, systems: Sequence[str]
) -> npt.NDArray[np.bool_]:
    """(S, P) True where system s saw pair p: everywhere, except the (system, pair_id) rows
    of `unseen`. `pair_ids` are the clean pairs' ids in canonical order. A row naming a
    system without predictions or a pair that is not scored is an error; repeats are not.
    """
    seen = np.ones((len(systems), len(pair_ids)), dtype=bool)
    if unseen is None or (isinstance(unseen, pd.DataFrame) and unseen.empty):
        return seen
    unseen = _require_frame(unseen, UNSEEN_COLUMNS, "unseen")
    system = _strip_blank(unseen["system"], strip=True)
    system_index = pd.Index(list(systems)).get_indexer(system)
    if (system_index < 0).any():
        strangers = system[system_index < 0].unique()
        raise ScoringInputError(
            f"unseen names system(s) {quote_some(strangers)} that have no predictions"
        )
    raw = unseen["pair_id"]
    if is_numeric_dtype(pair_ids) and not is_numeric_dtype(raw):
        raw = pd.to_numeric(_strip_blank(raw, strip=True), errors="coerce")
    elif not is_numeric_dtype(pair_ids):
        raw = _strip_blank(raw, strip=True)
    pair_index = pd.Index(pair_ids).get_indexer(raw)
    if (pair_index < 0).any():
        strangers = unseen["pair_id"][pair_index < 0].unique()
        raise ScoringInputError(f"unseen names pair(s) {quote_some(strangers)} that are not scored")
    seen[system_index, pair_index] = False
    return seen
