"""`score()`: every table of a scoring run in one ScoreReport, as JSON-ready dicts or Markdown."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import compress
from typing import Any

import numpy as np
import pandas as pd

from scoring._markdown import markdown_table
from scoring.breakers import breaker_scores, check_weight_mode
from scoring.breaks import Breaks, check_break_rate, find_breaks
from scoring.builders import builder_metrics
from scoring.lambda_analysis import LambdaAnalysis, lambda_analysis
from scoring.ranking import rank_leaderboard
from scoring.tables import (
    PAIR_FIELDS,
    both_wrong_table,
    break_matrix,
    flip_table,
    item_table,
    outside_label_table,
    tag_table,
)


@dataclass(frozen=True, eq=False)
class ScoreReport:
    """Every result of one scoring run; percentages are 0-100, rates follow `break_rate`.

    Frames (see the function that builds each for its columns): builders and
    builders_by_team (`builder_metrics`), breakers and breaker_systems (`breaker_scores`),
    matrix (`break_matrix`), items (`item_table`), tags and tags_by_system (`tag_table`),
    flips and flips_by_system (`flip_table`), both_wrong (`both_wrong_table`),
    outside_label_set (`outside_label_table`), lambda_analysis (`lambda_analysis`, None
    without λmax). `breaks` keeps the per-pair, per-system matrices behind them all.
    """

    weight: str
    break_rate: str
    breaks: Breaks
    builders: pd.DataFrame
    builders_by_team: pd.DataFrame
    breakers: pd.DataFrame
    breaker_systems: pd.DataFrame
    matrix: pd.DataFrame
    items: pd.DataFrame
    tags: pd.DataFrame
    tags_by_system: pd.DataFrame
    flips: pd.DataFrame
    flips_by_system: pd.DataFrame
    both_wrong: pd.DataFrame
    outside_label_set: pd.DataFrame
    lambda_analysis: LambdaAnalysis | None

    @property
    def systems(self) -> list[str]:
        return self.breaks.systems

    @property
    def teams(self) -> list[str]:
        return self.breaks.teams

    @property
    def labels(self) -> list[str]:
        return self.breaks.labels

    @property
    def broke_every_system(self) -> pd.DataFrame:
        """The items that broke every system."""
        return self.items[self.items["broke_every_system"]].reset_index(drop=True)

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready Python values (NaN becomes None).

        Keys: settings, systems, teams, labels, pairs, builders, breakers, matrix, items,
        tags, flips, both_wrong, broke_every_system, outside_label_set, and lambda when the
        predictions carried λmax. Builders carry by_team (team → % broken), f1_by_team and
        accuracy_by_team; breakers carry by_system (system → % broken) and weights; each
        item carries predictions (system → [original, variant], None for a prediction a
        system did not give), broken, both_wrong and unseen (lists of systems).
        """
        result: dict[str, Any] = {
            "settings": {"weight": self.weight, "break_rate": self.break_rate},
            "systems": list(self.systems),
            "teams": list(self.teams),
            "labels": list(self.labels),
            "pairs": len(self.items),
            "builders": self._builder_records(),
            "breakers": self._breaker_records(),
            "matrix": {
                "teams": list(self.matrix.index),
                "systems": list(self.matrix.columns),
                "broken_pct": _nested(self.matrix.to_numpy()),
            },
            "items": self._item_records(),
            "tags": _with_by_system(self.tags, self.tags_by_system, "tag"),
            "flips": _with_by_system(self.flips, self.flips_by_system, "kind"),
            "both_wrong": self._both_wrong_records(),
            "broke_every_system": _records(
                self.broke_every_system[["pair_id", "team", "original_text", "variant_text"]]
            ),
            "outside_label_set": _records(self.outside_label_set),
        }
        if self.lambda_analysis is not None:
            result["lambda"] = {
                "delta": _records(self.lambda_analysis.delta),
                "correlation": _records(self.lambda_analysis.correlation),
                "auc": _records(self.lambda_analysis.auc),
                "quartiles": _records(self.lambda_analysis.quartiles),
            }
        return result

    def _builder_records(self) -> list[dict[str, Any]]:
        builders = _records(self.builders)
        for key, column in (
            ("by_team", "broken_pct"),
            ("f1_by_team", "f1"),
            ("accuracy_by_team", "accuracy"),
        ):
            mapping = _nested_mapping(self.builders_by_team, "system", "team", column)
            _attach(builders, "system", key, mapping)
        return builders

    def _breaker_records(self) -> list[dict[str, Any]]:
        breakers = _records(self.breakers)
        for key, column in (("by_system", "broken_pct"), ("weights", "weight")):
            mapping = _nested_mapping(self.breaker_systems, "team", "system", column)
            _attach(breakers, "team", key, mapping)
        return breakers

    def _both_wrong_records(self) -> list[dict[str, Any]]:
        both_wrong = self.both_wrong.groupby("system", sort=True)[["both_wrong", "pairs"]].sum()
        both_wrong["both_wrong_pct"] = 100.0 * both_wrong["both_wrong"] / both_wrong["pairs"]
        rows = _records(both_wrong.reset_index())
        mapping = _nested_mapping(self.both_wrong, "system", "team", "both_wrong")
        _attach(rows, "system", "by_team", mapping)
        return rows

    def to_json(self) -> str:
        """`to_dict()` as compact JSON (UTF-8 text kept as is; no NaN, which JSON lacks).

        Compact because indenting makes `json` fall back to its pure-Python encoder,
        several times slower on large tasks; `python -m json.tool` pretty-prints.
        """
        return json.dumps(self.to_dict(), ensure_ascii=False, allow_nan=False)

    def _item_records(self) -> list[dict[str, Any]]:
        with _collector_paused():
            return self._build_item_records()

    def _build_item_records(self) -> list[dict[str, Any]]:
        breaks = self.breaks
        # The code -1 (no prediction, for a pair a system did not see) reads the last entry.
        vocabulary = np.asarray([*breaks.vocabulary, None], dtype=object)
        systems = breaks.systems
        records = _records(self.items[PAIR_FIELDS])
        # Building one JSON object per pair is the serializer's job and is per pair by
        # nature; the arrays it reads were computed for all pairs at once.
        # (pairs, systems, 2) nested lists come out of numpy in one call.
        predictions = np.stack(
            [vocabulary[breaks.predicted_original.T], vocabulary[breaks.predicted_variant.T]],
            axis=-1,
        ).tolist()
        broken = breaks.broken.T.tolist()
        both_wrong = breaks.both_wrong.T.tolist()
        unseen = (~breaks.seen).T.tolist()
        for record, predicted, broke, wrong, missed in zip(
            records, predictions, broken, both_wrong, unseen, strict=True
        ):
            record["predictions"] = dict(zip(systems, predicted, strict=True))
            record["broken"] = list(compress(systems, broke))
            record["both_wrong"] = list(compress(systems, wrong))
            record["unseen"] = list(compress(systems, missed))
        return records

    def to_markdown(self, max_items: int = 50) -> str:
        """The leaderboards and tables as Markdown; the item table only when there are at
        most `max_items` pairs (it has one row per pair).
        """
        sections = [
            "# Scoring report",
            f"{len(self.items)} pairs from {len(self.teams)} breaker team(s), "
            f"{len(self.systems)} system(s), labels {', '.join(self.labels)}. "
            f"Breaker weight: `{self.weight}`; break rate per `{self.break_rate}`.",
            *self._leaderboard_sections(),
            *self._table_sections(),
            *self._lambda_sections(),
        ]
        if len(self.items) <= max_items:
            sections += [
                "## Items",
                "Predictions as original / variant; * marks a break; unseen: the system did "
                "not see the pair.",
                markdown_table(self._item_grid()),
            ]
        else:
            sections += [f"## Items\n\n{len(self.items)} pairs: see the JSON output."]
        return "\n\n".join(sections) + "\n"

    def _leaderboard_sections(self) -> list[str]:
        builders = rank_leaderboard(
            self.builders.drop(columns="pairs"), "broken_pct", ascending=True
        )
        return [
            "## Builders",
            "Lower % broken is better; F1 is macro-F1 over all sentences.",
            markdown_table(_headed(builders)),
            "## Breakers",
            "Score: mean over systems of weight × % broken.",
            markdown_table(_headed(rank_leaderboard(self.breakers, "score", ascending=False))),
            "## % broken: breaker team × system",
            markdown_table(self.matrix.reset_index()),
        ]

    def _table_sections(self) -> list[str]:
        sections = []
        if not self.tags.empty:
            sections += [
                "## % broken by strategy tag",
                markdown_table(_headed(self.tags)),
                markdown_table(self.tags_by_system.reset_index()),
            ]
        every = self.broke_every_system[["pair_id", "team", "original_text", "variant_text"]]
        return sections + [
            "## Flipped-label vs same-label pairs (% broken)",
            markdown_table(_headed(self.flips)),
            markdown_table(self.flips_by_system.reset_index()),
            "## Pairs wrong on both items (not breaks)",
            markdown_table(
                self.both_wrong.pivot(index="team", columns="system", values="both_wrong")
                .reset_index()
                .rename_axis(columns=None)
            ),
            "## Pairs that broke every system",
            markdown_table(_headed(every)) if len(every) else "None.",
            "## Predictions outside the label set (counted wrong)",
            markdown_table(_headed(self.outside_label_set))
            if len(self.outside_label_set)
            else "None.",
        ]

    def _lambda_sections(self) -> list[str]:
        analysis = self.lambda_analysis
        if analysis is None:
            return []
        return [
            "## λmax: does the original's λmax predict what the edit did?",
            "Kinds of pair: `same_label` keeps the gold label (a break is a prediction "
            "that changes), `flipped` changes it (a break is one that does not, on a "
            "binary task); `all` pools both.",
            markdown_table(_headed(analysis.correlation), digits=3),
            "## λmax: ROC AUC for a changed prediction, beside confidence",
            "Confidence baseline: 1 − the largest probability on the original.",
            markdown_table(_headed(analysis.auc), digits=3),
            "## λmax: breaks and changed predictions by quartile of the original's λmax",
            markdown_table(_headed(analysis.quartiles), digits=3),
            "## λmax: Δλmax = λmax(variant) − λmax(original)",
            markdown_table(_headed(analysis.delta), digits=3),
        ]

    def _item_grid(self) -> pd.DataFrame:
        breaks = self.breaks
        vocabulary = np.asarray([*breaks.vocabulary, "-"], dtype=object)
        grid = self.items[["pair_id", "team", "original_label", "variant_label"]].copy()
        grid.columns = ["pair_id", "team", "gold original", "gold variant"]
        cells = np.where(
            breaks.seen,
            vocabulary[breaks.predicted_original].astype(str)
            + " / "
            + vocabulary[breaks.predicted_variant].astype(str)
            + np.where(breaks.broken, " *", ""),
            "unseen",
        )
        for system, column in zip(breaks.systems, cells, strict=True):
            grid[system] = column
        return grid


def score(
    pairs: pd.DataFrame,
    predictions: pd.DataFrame,
    *,
    weights: pd.DataFrame | None = None,
    weight: str = "dev_accuracy",
    break_rate: str = "pairs",
    labels: Sequence[object] | None = None,
    unseen: pd.DataFrame | None = None,
) -> ScoreReport:
    """Score a shared task's pairs against every system's predictions.

    pairs: pair_id, team, original_id, original_text, original_label, variant_text,
    variant_label[, tags] (`;`-separated). predictions: system, text, label[, probabilities,
    lambda_max], one per system and distinct pair text. weights: system, weight (in [0, 1];
    needed, and used, only with weight="dev_accuracy"). weight: dev_accuracy |
    original_accuracy | original_f1 | none. break_rate: pairs | sentences. labels: the
    task's label set (default: the gold labels seen). unseen: system, pair_id: pairs a
    system did not see (e.g. both items identical after its truncation), left out of every
    count of that system. Raises ScoringInputError on bad input.

    >>> pairs = pd.DataFrame({"pair_id": [1], "team": ["T"], "original_id": ["o1"],
    ...     "original_text": ["good"], "original_label": [1],
    ...     "variant_text": ["not good"], "variant_label": [-1]})
    >>> predictions = pd.DataFrame({"system": ["S", "S"], "text": ["good", "not good"],
    ...     "label": [1, 1]})
    >>> score(pairs, predictions, weight="none").to_dict()["breakers"][0]["score"]
    100.0
    """
    check_weight_mode(weight)
    check_break_rate(break_rate)
    breaks = find_breaks(pairs, predictions, labels, unseen)
    return report_of_breaks(breaks, weights=weights, weight=weight, break_rate=break_rate)


def report_of_breaks(
    breaks: Breaks,
    *,
    weights: pd.DataFrame | None,
    weight: str,
    break_rate: str,
    builders: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> ScoreReport:
    """Every table of a report from the break rule's result (``score`` for labels,
    ``scoring.span_breaks.span_score`` for spans, which brings its own ``builders`` frames:
    overall and by team, as ``builder_metrics`` returns them)."""
    overall, by_team = builders or builder_metrics(breaks, break_rate)
    breakers, breaker_systems = breaker_scores(breaks, weight, weights, break_rate)
    tags, tags_by_system = tag_table(breaks, break_rate)
    flips, flips_by_system = flip_table(breaks, break_rate)
    return ScoreReport(
        weight=weight,
        break_rate=break_rate,
        breaks=breaks,
        builders=overall,
        builders_by_team=by_team,
        breakers=breakers,
        breaker_systems=breaker_systems,
        matrix=break_matrix(breaks, break_rate),
        items=item_table(breaks),
        tags=tags,
        tags_by_system=tags_by_system,
        flips=flips,
        flips_by_system=flips_by_system,
        both_wrong=both_wrong_table(breaks),
        outside_label_set=outside_label_table(breaks),
        lambda_analysis=lambda_analysis(breaks, break_rate),
    )


# Column names as people read them in the Markdown report.
_HEADINGS = {
    "f1": "F1",
    "broken_pct": "% broken",
    "both_wrong": "both wrong",
    "outside_label_set": "outside label set",
    "pair_id": "pair",
    "original_text": "original",
    "variant_text": "variant",
    "mean_delta": "mean Δλmax",
    "std_delta": "std Δλmax",
    "pearson_r": "Pearson r",
    "pearson_p": "Pearson p",
    "spearman_r": "Spearman ρ",
    "spearman_p": "Spearman p",
    "lambda_auc": "λmax AUC",
    "confidence_pairs": "pairs with probabilities",
    "confidence_auc": "confidence AUC",
    "lambda_low": "λmax above",
    "lambda_high": "λmax up to",
    "changed_pct": "% changed",
}


def _headed(frame: pd.DataFrame) -> pd.DataFrame:
    """Readable headings for a table of fixed columns (not one with a column per system,
    where a system could be named like a heading)."""
    return frame.rename(columns=_HEADINGS)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while building millions of small containers.

    Each few hundred new lists or dicts trigger a collection, and the older generations'
    collections walk the whole heap: with 50 systems × 50,000 pairs that tripled the time
    of to_dict(). Plain lists and dicts of strings cannot form cycles, so nothing is lost.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values, NaN as None."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _plain(value: object) -> object:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def _nested_mapping(
    frame: pd.DataFrame, outer: str, inner: str, values: str
) -> dict[str, dict[str, Any]]:
    """{outer value: {inner value: value}} from a long frame, values as plain Python."""
    table = frame.pivot(index=outer, columns=inner, values=values)
    return {
        str(key): {
            str(column): _plain(value) for column, value in zip(table.columns, row, strict=True)
        }
        for key, row in zip(table.index, table.to_numpy().tolist(), strict=True)
    }


def _attach(records: list[dict[str, Any]], key: str, name: str, mapping: dict[str, Any]) -> None:
    for record in records:
        record[name] = mapping[str(record[key])]


def _nested(matrix: np.ndarray) -> list[list[Any]]:
    return [[_plain(value) for value in row] for row in matrix.tolist()]


def _with_by_system(
    summary: pd.DataFrame, by_system: pd.DataFrame, key: str
) -> list[dict[str, Any]]:
    records = _records(summary)
    _attach(
        records,
        key,
        "by_system",
        _nested_mapping(
            by_system.reset_index().melt(id_vars=key, var_name="system", value_name="pct"),
            key,
            "system",
            "pct",
        ),
    )
    return records
