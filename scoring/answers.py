"""When a span answer is right: normalisation, token F1 and the three matching modes.

A span task's item has one or more gold answers; a system answers with one span. Modes
(``ANSWER_MODES``), a task setting:

* ``exact``: right when the normalised prediction equals a normalised gold answer.
* ``token_f1``: right when the token F1 of the normalised prediction against the best gold
  answer is at least ``threshold`` (default ``DEFAULT_F1_THRESHOLD`` = 0.5, i.e. at least half
  of the tokens agree on balance: one token of a two-token gold answer, given alone, is right).
* ``overlap_2017``: the 2017 organizers' rule as the overview (section 5.3) words it: "an
  answer was marked as correct ... if it overlapped at least 75% in characters with the true
  answer". Read literally: the characters the prediction shares with the gold answer (the two
  spans' offsets in the sentence), divided by the *gold answer's* length, are at least 75%.
  This reading does not limit the prediction's own length: a span that holds the whole gold
  answer is right however much more it holds; the whole sentence is right for every question
  (measured on wiki1.dev: 100% under this mode, 3.9% under ``overlap_longer``). It is what the
  2017 text says, so the name ``overlap_2017`` (and the QA-SRL 2017 preset) is this reading.
* ``overlap_longer``: the stricter reading bibi used as ``overlap_2017`` before: the shared
  characters divided by the length of the *longer* of the two spans, so the prediction must
  cover at least 75% of the gold answer and at least 75% of the prediction must lie inside it.
  On the 2017 QA-SRL blind dev set the two readings differ a lot (a trained MiniLM span
  model: 11.0% under ``overlap_longer``, 41.4% under ``overlap_2017``).

Both overlap modes need character offsets (``start``, ``end``, end exclusive).

Normalisation (as SQuAD-style evaluation does; our own code): lower case; delete punctuation
and symbols (every character that is not a letter, digit or whitespace: ASCII punctuation as
in SQuAD, and also PTB quotes `` '', curly quotes and dashes); delete
the articles *a*, *an*, *the* as whole words; collapse whitespace. Token F1 compares the
normalised texts' whitespace tokens as multisets: F1 = 2·P·R / (P + R) with P = common /
|prediction| and R = common / |gold|; two empty texts score 1, one empty text 0. An empty or
missing prediction (blank text) is therefore wrong under every mode, and so is one that is
only punctuation or articles.

Example::

    scores = answer_scores(predictions, gold, mode="token_f1")
    scores.groupby("system")[["correct", "token_f1"]].mean()
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from scoring.errors import ScoringInputError

ANSWER_MODES = ("exact", "token_f1", "overlap_2017", "overlap_longer")
OVERLAP_MODES = ("overlap_2017", "overlap_longer")
DEFAULT_F1_THRESHOLD = 0.5
OVERLAP_2017 = 0.75

# Every character that is neither a letter, a digit nor whitespace (the underscore included).
_PUNCTUATION_RE = r"[^\w\s]|_"
_ARTICLES_RE = r"\b(?:a|an|the)\b"


def normalize_answers(texts: pd.Series) -> pd.Series:
    """Normalise many answers at once (see the module docstring); blanks become ``""``.

    >>> normalize_answers(pd.Series(["The  Dublin champions!", "`` An Apple ''", None])).tolist()
    ['dublin champions', 'apple', '']
    """
    lowered = texts.fillna("").astype(str).str.lower()
    no_punctuation = lowered.str.replace(_PUNCTUATION_RE, "", regex=True)
    no_articles = no_punctuation.str.replace(_ARTICLES_RE, " ", regex=True)
    return no_articles.str.split().str.join(" ")


def normalize_answer(text: str) -> str:
    """One answer, normalised.

    >>> normalize_answer("the University of Gothenburg.")
    'university of gothenburg'
    """
    return str(normalize_answers(pd.Series([text], dtype=object)).iloc[0])


def token_f1(predicted: pd.Series, gold: pd.Series) -> np.ndarray:
    """Token F1 of each normalised prediction against the gold answer of the same row.

    Both inputs are normalised strings of equal length; the result is float64 (N,).
    Counts common tokens as multisets, without a Python loop over rows.

    >>> token_f1(pd.Series(["ucd", "", "dublin champions"]), pd.Series(["ucd", "ucd", "champions"]))
    array([1.        , 0.        , 0.66666667])
    """
    rows = np.arange(len(predicted))
    pred_tokens = _token_counts(predicted, rows)
    gold_tokens = _token_counts(gold, rows)
    both = pred_tokens.merge(gold_tokens, on=["row", "token"], suffixes=("_p", "_g"))
    common = np.zeros(len(rows))
    np.add.at(
        common,
        both["row"].to_numpy(),
        np.minimum(both["count_p"], both["count_g"]).to_numpy(),
    )
    n_pred = predicted.str.split().str.len().fillna(0).to_numpy(dtype=float)
    n_gold = gold.str.split().str.len().fillna(0).to_numpy(dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        f1 = 2 * common / (n_pred + n_gold)
    return np.where((n_pred == 0) & (n_gold == 0), 1.0, np.nan_to_num(f1))


def _token_counts(texts: pd.Series, rows: np.ndarray) -> pd.DataFrame:
    tokens = pd.DataFrame({"row": rows, "token": texts.str.split().to_numpy()}).explode("token")
    tokens = tokens.dropna(subset=["token"])
    return tokens.groupby(["row", "token"], sort=False).size().rename("count").reset_index()


def overlap_ratio(
    pred_start: np.ndarray,
    pred_end: np.ndarray,
    gold_start: np.ndarray,
    gold_end: np.ndarray,
    *,
    over: str = "longer",
) -> np.ndarray:
    """Characters the two spans share, over the longer span's length (``over="longer"``,
    ``overlap_longer``) or over the gold span's length (``over="gold"``, ``overlap_2017``);
    0 where that length is 0.

    >>> overlap_ratio(np.array([0, 0]), np.array([8, 4]), np.array([0, 0]), np.array([8, 8]))
    array([1. , 0.5])
    >>> overlap_ratio(np.array([0]), np.array([20]), np.array([4]), np.array([8]), over="gold")
    array([1.])
    """
    if over not in ("longer", "gold"):
        raise ScoringInputError(f"overlap_ratio divides by 'longer' or 'gold', not {over!r}")
    shared = np.clip(np.minimum(pred_end, gold_end) - np.maximum(pred_start, gold_start), 0, None)
    gold_length = gold_end - gold_start
    longer = np.maximum(pred_end - pred_start, gold_length)
    base = gold_length if over == "gold" else longer
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(base > 0, shared / base, 0.0).astype(np.float64)


def answer_scores(
    predictions: pd.DataFrame,
    gold: pd.DataFrame,
    *,
    mode: str = "token_f1",
    threshold: float = DEFAULT_F1_THRESHOLD,
) -> pd.DataFrame:
    """Per-prediction correctness and token F1 against the best gold answer.

    predictions: ``system, item, text`` and, for the overlap modes, ``start, end`` (character
    offsets in the item's sentence, end exclusive), one row per system and item. gold:
    ``item, text`` (and ``start, end``), one row per gold answer, several per item allowed.
    Returns ``system, item, correct`` (bool, under ``mode``) and ``token_f1`` (the best over
    the item's gold answers, whatever the mode), in the predictions' row order.

    Raises:
        ScoringInputError: an unknown mode, a threshold outside (0, 1], a missing column, a
            prediction for an item without gold answers, repeated (system, item) rows, or
            offsets that are missing, negative or reversed where the mode needs them.

    >>> predictions = pd.DataFrame({"system": ["S", "S"], "item": [1, 2],
    ...     "text": ["UCD", "the final"]})
    >>> gold = pd.DataFrame({"item": [1, 2, 2], "text": ["ucd", "St Vincents", "in the final"]})
    >>> answer_scores(predictions, gold, mode="exact")[["correct", "token_f1"]].to_numpy().tolist()
    [[True, 1.0], [False, 0.6666666666666666]]
    """
    _check_mode(mode, threshold)
    offsets = ["start", "end"] if mode in OVERLAP_MODES else []
    _require_columns(predictions, ["system", "item", "text", *offsets], "predictions")
    _require_columns(gold, ["item", "text", *offsets], "gold")
    if predictions.duplicated(["system", "item"]).any():
        first = predictions[predictions.duplicated(["system", "item"])].iloc[0]
        raise ScoringInputError(
            f"system {first['system']!r} has more than one prediction for item {first['item']!r}"
        )
    missing = ~predictions["item"].isin(gold["item"])
    if missing.any():
        raise ScoringInputError(
            f"item {predictions.loc[missing, 'item'].iloc[0]!r} has no gold answer "
            f"({int(missing.sum())} prediction(s) without one)"
        )
    left = predictions.reset_index(drop=True).assign(row=lambda frame: frame.index)
    left = left.assign(norm=normalize_answers(left["text"]))
    right = gold.assign(gold_norm=normalize_answers(gold["text"]))
    both = left.merge(right, on="item", suffixes=("", "_gold"))
    both["f1"] = token_f1(both["norm"], both["gold_norm"])
    if mode == "exact":
        both["right"] = both["norm"] == both["gold_norm"]
    elif mode == "token_f1":
        both["right"] = both["f1"] >= threshold
    else:
        spans = [_offsets(both, column, side) for side in ("", "_gold") for column in offsets]
        over = "gold" if mode == "overlap_2017" else "longer"
        both["right"] = overlap_ratio(*spans, over=over) >= OVERLAP_2017
    best = both.groupby("row").agg(correct=("right", "max"), token_f1=("f1", "max"))
    result = left[["system", "item"]].copy()
    result["correct"] = best["correct"].to_numpy(dtype=bool)
    result["token_f1"] = best["token_f1"].to_numpy(dtype=np.float64)
    return result


def _check_mode(mode: str, threshold: float) -> None:
    if mode not in ANSWER_MODES:
        raise ScoringInputError(
            f"unknown answer mode {mode!r}; expected one of {', '.join(ANSWER_MODES)}"
        )
    if not 0 < threshold <= 1:
        raise ScoringInputError(f"the token F1 threshold must be in (0, 1], got {threshold}")


def _require_columns(frame: pd.DataFrame, columns: list[str], name: str) -> None:
    absent = [column for column in columns if column not in frame.columns]
    if absent:
        raise ScoringInputError(f"{name} is missing column(s) {', '.join(absent)}")


def _offsets(frame: pd.DataFrame, column: str, side: str) -> np.ndarray:
    values = pd.to_numeric(frame[column + side], errors="coerce")
    start = pd.to_numeric(frame["start" + side], errors="coerce")
    who = "gold answer" if side else "prediction"
    bad = values.isna() | (values < 0) | (values != np.round(values))
    if column == "end":
        bad |= values < start
    if bad.any():
        row = frame[bad].iloc[0]
        raise ScoringInputError(
            f"{who} for item {row['item']!r} has an invalid {column} offset "
            f"{row[column + side]!r}: offsets are whole numbers, 0 <= start <= end"
        )
    return values.to_numpy(dtype=np.int64)
