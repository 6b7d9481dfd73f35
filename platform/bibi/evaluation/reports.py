"""From the prediction matrix to ``scoring.score`` and back: a run's inputs and stored tables.

``scoring_inputs`` turns a ``PairMatrix`` into the library's three inputs plus ``unseen``:
systems and teams are named by their ids (names are chosen when a table is shown, so an
anonymous team stays anonymous), and a pair is unseen by a version when

- truncation made its two items the same input for the model (equal ``input_sha256`` and
  at least one of them cut): the edit lies past the model's token limit (issue 10.7), or
- the version's model failed on one of its texts (``CellFailure``).

Weights (``weight_mode`` ``dev_accuracy``): each version's dev accuracy, from its blind-dev
predictions. A version without any (a self-reported system that reported pair predictions
only, as in 2017, or a task without a blind dev set) is weighted by its **accuracy on the
distinct originals** of the pairs it saw, and the leaderboard says so (``weight_source``).

``report_tables`` and ``report_items`` store a ``scoring.ScoreReport`` as JSON-ready rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

import scoring
from bibi.evaluation.matrix import Cell, PairMatrix, ScoredVersion, pair_item_keys

WEIGHT_FROM_BLIND_DEV = scoring.WEIGHT_FROM_DEV
WEIGHT_FROM_ORIGINALS = scoring.WEIGHT_FROM_ORIGINALS

UNSEEN_TRUNCATED = "unseen"
UNSEEN_FAILED = "failed"


@dataclass
class ScoringInputs:
    pairs: pd.DataFrame
    predictions: pd.DataFrame
    weights: pd.DataFrame
    unseen: pd.DataFrame
    weight_sources: dict[str, str]  # system key -> WEIGHT_FROM_*
    unseen_reasons: dict[tuple[str, int], str]  # (system key, pair id) -> UNSEEN_*
    # Pair id -> what the item table shows of each pair in place of the names the break rule
    # saw: its texts by segment (``TaskType.pair_texts``), a span task's answers.
    shown: dict[int, dict[str, Any]] = field(default_factory=dict)
    # How the report is computed when not ``scoring.score`` over the task's labels: a span
    # task's pairs have original_item / variant_item keys and its predictions are answer
    # scores (``span_reports``: ``scoring.span_score``).
    scorer: Callable[..., scoring.ScoreReport] | None = None


def scoring_inputs(matrix: PairMatrix) -> ScoringInputs:
    """The library's inputs for every scored version of ``matrix`` (no cell may be missing)."""
    if matrix.cells_missing:
        raise ValueError("the matrix still has missing cells")
    pairs = _pairs_frame(matrix)
    predictions = _predictions_frame(matrix)
    return inputs_assemble(
        matrix,
        pairs,
        predictions,
        lambda unseen: scoring.find_breaks(pairs, predictions, unseen=unseen),
        shown={pair["pair_id"]: matrix.kind.pair_texts(pair) for pair in matrix.pairs},
    )


def inputs_assemble(
    matrix: PairMatrix,
    pairs: pd.DataFrame,
    predictions: pd.DataFrame,
    breaks_of: Callable[[pd.DataFrame], scoring.Breaks],
    shown: dict[int, dict[str, Any]],
    scorer: Callable[..., scoring.ScoreReport] | None = None,
) -> ScoringInputs:
    """The inputs around ``pairs`` and ``predictions``: what each version did not see and
    the weights (``breaks_of(unseen)`` applies the break rule when a weight needs it)."""
    reasons = unseen_reasons_of(matrix)
    unseen = pd.DataFrame(
        {"system": [key for key, _ in reasons], "pair_id": [pair_id for _, pair_id in reasons]},
        columns=["system", "pair_id"],
    )
    weights = version_weights(matrix.versions, lambda: breaks_of(unseen))
    return ScoringInputs(
        pairs=pairs,
        predictions=predictions,
        weights=weights[["system", "weight"]],
        unseen=unseen,
        weight_sources=dict(zip(weights["system"], weights["source"], strict=True)),
        unseen_reasons=reasons,
        shown=shown,
        scorer=scorer,
    )


def _pairs_frame(matrix: PairMatrix) -> pd.DataFrame:
    """The pairs as the library reads them; teams named by their ids."""
    texts = matrix.texts
    return pd.DataFrame(
        {
            "pair_id": [pair["pair_id"] for pair in matrix.pairs],
            "team": [str(pair["team_id"]) for pair in matrix.pairs],
            "original_id": [pair["original_external_id"] for pair in matrix.pairs],
            # An item as one line, as the predictions name it (``PairMatrix.texts``).
            "original_text": [texts[pair["original_key"]] for pair in matrix.pairs],
            "original_label": [pair["original_label"] for pair in matrix.pairs],
            "variant_text": [texts[pair["variant_key"]] for pair in matrix.pairs],
            "variant_label": [pair["variant_label"] for pair in matrix.pairs],
            "tags": [";".join(pair["tags"]) for pair in matrix.pairs],
        }
    )


def _predictions_frame(matrix: PairMatrix) -> pd.DataFrame:
    """Every cell of every scored version, the version named by its key."""
    texts = matrix.texts
    rows = [
        (version.key, texts[digest], cell)
        for version in matrix.versions
        for digest, cell in matrix.cells[version.version_id].items()
    ]
    return pd.DataFrame(
        {
            "system": [key for key, _, _ in rows],
            "text": [text for _, text, _ in rows],
            "label": [cell.label for _, _, cell in rows],
            "lambda_max": [
                np.nan if cell.lambda_max is None else cell.lambda_max for _, _, cell in rows
            ],
            "probabilities": [cell.probabilities for _, _, cell in rows],
        }
    )


def unseen_reasons_of(matrix: PairMatrix) -> dict[tuple[str, int], str]:
    """(version key, pair id) → why the version did not see the pair (``UNSEEN_*``)."""
    reasons: dict[tuple[str, int], str] = {}
    for version in matrix.versions:
        cells = matrix.cells[version.version_id]
        failed = matrix.failures.get(version.version_id, {})
        # Most versions cut nothing and failed on nothing: no pair to look at then.
        if not failed and not any(cell.truncated for cell in cells.values()):
            continue
        for pair in matrix.pairs:
            original, variant = pair_item_keys(pair)
            if original in failed or variant in failed:
                reasons[(version.key, pair["pair_id"])] = UNSEEN_FAILED
            elif _cut_alike(cells[original], cells[variant]):
                reasons[(version.key, pair["pair_id"])] = UNSEEN_TRUNCATED
    return reasons


def _cut_alike(original: Cell, variant: Cell) -> bool:
    """Truncation made the two items one input: same token ids, and at least one was cut."""
    same = bool(original.input_sha256) and original.input_sha256 == variant.input_sha256
    return same and (original.truncated or variant.truncated)


def version_weights(
    versions: list[ScoredVersion], breaks_of: Callable[[], scoring.Breaks]
) -> pd.DataFrame:
    """system, weight, source: ``scoring.dev_or_original_weights`` over the versions' dev
    accuracy (None when a version has no blind-dev prediction); ``breaks_of`` applies the
    break rule, asked only when some version lacks a dev accuracy."""
    dev = {
        version.key: float(version.dev_accuracy)
        if version.dev_accuracy is not None and version.dev_count
        else None
        for version in versions
    }
    keys = [version.key for version in versions]
    if all(value is not None for value in dev.values()):
        # Every version has a dev accuracy: no need to apply the break rule here.
        return pd.DataFrame(
            {"system": keys, "weight": [dev[key] for key in keys], "source": WEIGHT_FROM_BLIND_DEV}
        )
    weights = scoring.dev_or_original_weights(breaks_of(), dev).set_index("system").reindex(keys)
    # A version with no cell at all (its model failed on every text) saw no original.
    weights = weights.fillna({"weight": 0.0, "source": WEIGHT_FROM_ORIGINALS})
    return weights.rename_axis("system").reset_index()


def score_inputs(
    inputs: ScoringInputs, *, weight_mode: str, break_rate_mode: str, labels: list[str]
) -> scoring.ScoreReport:
    """``scoring.score`` on a run's inputs, with the task's modes and label set (or the
    inputs' own ``scorer``: a span task's, with no label set)."""
    if inputs.scorer is not None:
        return inputs.scorer(
            inputs.pairs,
            inputs.predictions,
            weights=inputs.weights if weight_mode == "dev_accuracy" else None,
            weight=weight_mode,
            break_rate=break_rate_mode,
            unseen=inputs.unseen,
        )
    return scoring.score(
        inputs.pairs,
        inputs.predictions,
        weights=inputs.weights if weight_mode == "dev_accuracy" else None,
        weight=weight_mode,
        break_rate=break_rate_mode,
        labels=labels,
        unseen=inputs.unseen,
    )


# --- Storing a report -------------------------------------------------------------------


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    return value


def _rows(frame: pd.DataFrame, renames: dict[str, str] | None = None) -> list[dict[str, Any]]:
    renames = renames or {}
    columns = [renames.get(column, column) for column in frame.columns]
    return [
        {column: _id_or_plain(column, value) for column, value in zip(columns, row, strict=True)}
        for row in frame.itertuples(index=False, name=None)
    ]


def _id_or_plain(column: str, value: Any) -> Any:
    if column in ("system_id", "team_id") and value is not None:
        return int(value)
    return _plain(value)


IDS = {"system": "system_id", "team": "team_id"}


def _by(
    frame: pd.DataFrame, key: str, inner: str, columns: list[str]
) -> dict[Any, list[dict[str, Any]]]:
    """Rows of a long frame grouped under their ``key`` value, keyed by ``inner`` as an id."""
    grouped: dict[Any, list[dict[str, Any]]] = {}
    for row in _rows(frame[[key, inner, *columns]], IDS):
        grouped.setdefault(row.pop(IDS.get(key, key)), []).append(row)
    return grouped


def report_tables(
    report: scoring.ScoreReport, inputs: ScoringInputs, versions: list[ScoredVersion]
) -> dict[str, Any]:
    """Every table of ``report`` but the items, as JSON-ready rows keyed by system and team id."""
    by_version = {version.key: version for version in versions}
    weights = inputs.weights.set_index("system")["weight"]
    builders = _rows(scoring.rank_leaderboard(report.builders, "broken_pct", ascending=True), IDS)
    per_team = _by(
        report.builders_by_team,
        "system",
        "team",
        ["pairs", "unseen", "f1", "accuracy", "breaks", "broken_pct"],
    )
    for row in builders:
        version = by_version[str(row["system_id"])]
        row["team_id"] = version.team_id
        row["kind"] = version.kind
        row["version"] = version.version_number
        row["dev_accuracy"] = version.dev_accuracy
        if version.dev_answer_mode:
            row["dev_answer_mode"] = version.dev_answer_mode
        row["weight"] = float(weights[version.key])
        row["weight_source"] = inputs.weight_sources[version.key]
        row["by_team"] = per_team[row["system_id"]]
    breakers = _rows(scoring.rank_leaderboard(report.breakers, "score", ascending=False), IDS)
    per_system = _by(
        report.breaker_systems,
        "team",
        "system",
        ["pairs", "breaks", "broken_pct", "weight", "weighted_pct"],
    )
    for row in breakers:
        row["by_system"] = per_system[row["team_id"]]
    tables: dict[str, Any] = {
        "vocabulary": list(report.breaks.vocabulary),
        "item_systems": [int(system) for system in report.breaks.systems],
        "builders": builders,
        "breakers": breakers,
        "matrix": {
            "team_ids": [int(team) for team in report.matrix.index],
            "system_ids": [int(system) for system in report.matrix.columns],
            "broken_pct": [
                [_plain(value) for value in row] for row in report.matrix.to_numpy().tolist()
            ],
        },
        "tags": _grouped_rates(report.tags, report.tags_by_system, "tag"),
        "flips": _grouped_rates(report.flips, report.flips_by_system, "kind"),
        "both_wrong": _rows(report.both_wrong, IDS),
        "outside_label_set": _rows(report.outside_label_set, IDS),
        "broke_every_system": _rows(
            report.broke_every_system[["pair_id", "team", "original_text", "variant_text"]], IDS
        ),
    }
    _shown_texts(tables["broke_every_system"], inputs)
    analysis = report.lambda_analysis
    tables["lambda_delta"] = _rows(analysis.delta, IDS) if analysis else []
    tables["lambda_correlation"] = _rows(analysis.correlation, IDS) if analysis else []
    tables["lambda_auc"] = _rows(analysis.auc, IDS) if analysis else []
    tables["lambda_quartiles"] = _rows(analysis.quartiles, IDS) if analysis else []
    return tables


def _shown_texts(rows: list[dict[str, Any]], inputs: ScoringInputs) -> None:
    """The break rule saw item names (or items as one line); people read the texts."""
    for row in rows:
        shown = inputs.shown[row["pair_id"]]
        row.update(original_text=shown["original_text"], variant_text=shown["variant_text"])


def _grouped_rates(
    summary: pd.DataFrame, by_system: pd.DataFrame, key: str
) -> list[dict[str, Any]]:
    rows = _rows(summary)
    matrix = by_system.to_numpy().tolist()
    systems = [int(system) for system in by_system.columns]
    for row, values in zip(rows, matrix, strict=True):
        row["by_system"] = [
            {"system_id": system, "broken_pct": _plain(value)}
            for system, value in zip(systems, values, strict=True)
        ]
    return rows


OUTCOMES = ("held", "broken", "both_wrong", "unseen", "failed")
_UNSEEN, _FAILED = OUTCOMES.index("unseen"), OUTCOMES.index("failed")


def _outcomes(breaks: scoring.Breaks, unseen_reasons: dict[tuple[str, int], str]) -> np.ndarray:
    """(systems, pairs) indexes into ``OUTCOMES``: a failed cell's pairs apart from unseen."""
    systems = [int(system) for system in breaks.systems]
    outcome = np.select(
        [~breaks.seen, breaks.broken, breaks.both_wrong], [_UNSEEN, 1, 2], default=0
    )
    for (system, pair_id), reason in unseen_reasons.items():
        if reason == UNSEEN_FAILED:
            column = breaks.pairs.index[breaks.pairs["pair_id"] == pair_id][0]
            outcome[systems.index(int(system)), column] = _FAILED
    return outcome


def report_items(report: scoring.ScoreReport, inputs: ScoringInputs) -> list[dict[str, Any]]:
    """One dict per pair in canonical order: its fields, and its ``predictions``.

    ``predictions`` is a flat list of numbers, three per system in the order of
    ``tables["item_systems"]``: the original's label, the variant's label (indexes into
    ``tables["vocabulary"]``, -1 for no prediction) and the outcome (an index into
    ``OUTCOMES``). Numbers keep the stored rows small and quick to write (10,000 pairs ×
    20 systems); ``table_rows.item_cells`` reads them back.
    """
    breaks = report.breaks
    outcome = _outcomes(breaks, inputs.unseen_reasons)
    # (pairs, systems × 3) in one call: original, variant, outcome side by side per system.
    codes = np.stack([breaks.predicted_original, breaks.predicted_variant, outcome], axis=-1)
    flat = codes.transpose(1, 0, 2).reshape(len(breaks.pairs), -1).tolist()
    broken = breaks.broken.sum(axis=0).tolist()
    unseen = (~breaks.seen).sum(axis=0).tolist()
    frame = breaks.pairs
    columns = zip(
        frame["pair_id"].tolist(),
        frame["team"].tolist(),
        frame["original_id"].tolist(),
        frame["original_text"].tolist(),
        frame["original_label"].tolist(),
        frame["variant_text"].tolist(),
        frame["variant_label"].tolist(),
        frame["tags"].tolist(),
        frame["flipped"].tolist(),
        strict=True,
    )
    items = [
        {
            "position": index,
            "pair_id": int(pair_id),
            "team_id": int(team),
            "original_id": str(original_id),
            "original_text": original,
            "original_label": original_label,
            "variant_text": variant,
            "variant_label": variant_label,
            "tags": [tag for tag in tags.split(";") if tag],
            "flipped": bool(flipped),
            "broken": broken[index],
            "unseen": unseen[index],
            "predictions": flat[index],
        }
        for index, (
            pair_id,
            team,
            original_id,
            original,
            original_label,
            variant,
            variant_label,
            tags,
            flipped,
        ) in enumerate(columns)
    ]
    for item in items:
        item.update(inputs.shown[item["pair_id"]])
    return items
