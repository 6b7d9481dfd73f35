"""A snapshot's tables as a viewer may read them: JSON rows, CSV files, one zip with a README.

Each table is built from the snapshot with the viewer's ``Names`` (real team names or
aliases) and described once in ``TABLES`` (its file name, what it holds, its columns), so
the API, the zip, its README and ``manage.py export_results`` say the same thing.

CSV files are RFC 4180 (every cell that needs it quoted) in UTF-8, and a text cell that
begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with ``'`` so
that a spreadsheet shows it instead of running it as a formula (plain numbers such as the
label ``-1`` are left as they are: they cannot be formulas).
"""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bibi.evaluation.models import Snapshot, SnapshotItem
from bibi.evaluation.reports import OUTCOMES
from bibi.evaluation.selectors import Names, Viewer, snapshot_items

Grid = tuple[list[str], list[list[Any]]]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")


def neutralized(value: Any) -> Any:
    """A cell a spreadsheet will not run: text starting like a formula gets a leading '."""
    if (
        isinstance(value, str)
        and value.startswith(_FORMULA_START)
        and not _PLAIN_NUMBER.match(value)
    ):
        return "'" + value
    return value


def csv_text(header: Sequence[Any], rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([neutralized(cell) for cell in header])
    for row in rows:
        writer.writerow(["" if cell is None else neutralized(cell) for cell in row])
    return buffer.getvalue()


# --- The tables ------------------------------------------------------------------------------


def _system_columns(snapshot: Snapshot, names: Names) -> tuple[list[int], list[str]]:
    ids = [entry["system_id"] for entry in snapshot.systems]
    return ids, [names.system(system_id) for system_id in ids]


def _builders_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
    rows = []
    for row in snapshot.tables["builders"]:
        rows.append(
            {
                **row,
                "system": names.system(row["system_id"]),
                "team": names.team(row["team_id"]),
                "by_team": [
                    {**cell, "team": names.team(cell["team_id"])} for cell in row["by_team"]
                ],
            }
        )
    return rows


BUILDER_COLUMNS = [
    "rank", "system", "team", "kind", "version", "f1", "accuracy", "broken_pct", "breaks",
    "pairs", "unseen", "both_wrong", "outside_label_set", "dev_accuracy", "weight",
    "weight_source",
]  # fmt: skip


def _builders_grid(snapshot: Snapshot, names: Names) -> Grid:
    teams = snapshot.tables["matrix"]["team_ids"]
    header = [*BUILDER_COLUMNS, *(f"broken_pct by {names.team(team)}" for team in teams)]
    rows = []
    for row in _builders_json(snapshot, names):
        by_team = {cell["team_id"]: cell["broken_pct"] for cell in row["by_team"]}
        rows.append([*(row[c] for c in BUILDER_COLUMNS), *(by_team.get(t) for t in teams)])
    return header, rows


def _breakers_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
    return [
        {
            **row,
            "team": names.team(row["team_id"]),
            "by_system": [
                {**cell, "system": names.system(cell["system_id"])} for cell in row["by_system"]
            ],
        }
        for row in snapshot.tables["breakers"]
    ]


def _breakers_grid(snapshot: Snapshot, names: Names) -> Grid:
    ids, labels = _system_columns(snapshot, names)
    header = ["rank", "team", "pairs", "score", *(f"broken_pct of {label}" for label in labels)]
    rows = []
    for row in _breakers_json(snapshot, names):
        by_system = {cell["system_id"]: cell["broken_pct"] for cell in row["by_system"]}
        rows.append(
            [row["rank"], row["team"], row["pairs"], row["score"], *(by_system.get(i) for i in ids)]
        )
    return header, rows


def _breaker_systems_grid(snapshot: Snapshot, names: Names) -> Grid:
    header = ["team", "system", "pairs", "breaks", "broken_pct", "weight", "weighted_pct"]
    rows = [
        [
            names.team(row["team_id"]),
            names.system(cell["system_id"]),
            cell["pairs"],
            cell["breaks"],
            cell["broken_pct"],
            cell["weight"],
            cell["weighted_pct"],
        ]
        for row in snapshot.tables["breakers"]
        for cell in row["by_system"]
    ]
    return header, rows


def _matrix_json(snapshot: Snapshot, names: Names) -> dict[str, Any]:
    matrix = snapshot.tables["matrix"]
    return {
        "teams": [{"team_id": t, "team": names.team(t)} for t in matrix["team_ids"]],
        "systems": [{"system_id": s, "system": names.system(s)} for s in matrix["system_ids"]],
        "broken_pct": matrix["broken_pct"],
    }


def _matrix_grid(snapshot: Snapshot, names: Names) -> Grid:
    matrix = snapshot.tables["matrix"]
    header = ["breaker team", *(names.system(s) for s in matrix["system_ids"])]
    rows = [
        [names.team(team), *values]
        for team, values in zip(matrix["team_ids"], matrix["broken_pct"], strict=True)
    ]
    return header, rows


def _rates_json(key: str) -> Callable[[Snapshot, Names], list[dict[str, Any]]]:
    def build(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
        return [
            {
                **row,
                "by_system": [
                    {**cell, "system": names.system(cell["system_id"])} for cell in row["by_system"]
                ],
            }
            for row in snapshot.tables[key]
        ]

    return build


def _rates_grid(key: str, first: str) -> Callable[[Snapshot, Names], Grid]:
    def build(snapshot: Snapshot, names: Names) -> Grid:
        ids, labels = _system_columns(snapshot, names)
        header = [
            first,
            "pairs",
            "breaks",
            "broken_pct",
            *(f"broken_pct of {label}" for label in labels),
        ]
        rows = []
        for row in snapshot.tables[key]:
            by_system = {cell["system_id"]: cell["broken_pct"] for cell in row["by_system"]}
            rows.append(
                [
                    row[first],
                    row["pairs"],
                    row["breaks"],
                    row["broken_pct"],
                    *(by_system.get(i) for i in ids),
                ]
            )
        return header, rows

    return build


def _named_rows(key: str) -> Callable[[Snapshot, Names], list[dict[str, Any]]]:
    """A flat table whose rows name a system and/or a team by id: the names added."""

    def build(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
        rows = []
        for row in snapshot.tables[key]:
            named = dict(row)
            if "system_id" in row:
                named["system"] = names.system(row["system_id"])
            if "team_id" in row:
                named["team"] = names.team(row["team_id"])
            rows.append(named)
        return rows

    return build


def _flat_grid(key: str, columns: list[str]) -> Callable[[Snapshot, Names], Grid]:
    def build(snapshot: Snapshot, names: Names) -> Grid:
        rows = _named_rows(key)(snapshot, names)
        return columns, [[row.get(column) for column in columns] for row in rows]

    return build


def item_cells(
    item: SnapshotItem, vocabulary: Sequence[str], systems: Sequence[int]
) -> dict[int, dict[str, Any]]:
    """System id → ``{original, variant, outcome}`` of one stored item (``systems`` and
    ``vocabulary`` are the snapshot's ``item_systems`` and ``vocabulary``; see
    ``reports.report_items`` for how the codes are stored)."""
    codes = item.predictions
    return {
        system_id: {
            "original": vocabulary[codes[3 * i]] if codes[3 * i] >= 0 else None,
            "variant": vocabulary[codes[3 * i + 1]] if codes[3 * i + 1] >= 0 else None,
            "outcome": OUTCOMES[codes[3 * i + 2]],
        }
        for i, system_id in enumerate(systems)
    }


def item_json(
    item: SnapshotItem, names: Names, vocabulary: Sequence[str], systems: Sequence[int]
) -> dict[str, Any]:
    return {
        "pair_id": item.pair_id,
        "team_id": item.team_id,
        "team": names.team(item.team_id),
        "original_id": item.original_id,
        "original_text": item.original_text,
        "original_label": item.original_label,
        "variant_text": item.variant_text,
        "variant_label": item.variant_label,
        "tags": item.tags,
        "flipped": item.flipped,
        "broken": item.broken,
        "unseen": item.unseen,
        "predictions": [
            {"system_id": system_id, "system": names.system(system_id), **cell}
            for system_id, cell in item_cells(item, vocabulary, systems).items()
        ],
    }


ITEM_COLUMNS = [
    "pair_id", "team", "original_id", "original_text", "original_label", "variant_text",
    "variant_label", "tags", "flipped", "broken", "unseen",
]  # fmt: skip


def _items_grid(snapshot: Snapshot, names: Names) -> Grid:
    ids, labels = _system_columns(snapshot, names)
    header = list(ITEM_COLUMNS)
    for label in labels:
        header += [f"{label}: original", f"{label}: variant", f"{label}: outcome"]
    rows = []
    vocabulary, systems = snapshot.tables["vocabulary"], snapshot.tables["item_systems"]
    for item in snapshot_items(snapshot=snapshot).iterator(chunk_size=2000):
        cells = item_cells(item, vocabulary, systems)
        row = [
            item.pair_id,
            names.team(item.team_id),
            item.original_id,
            item.original_text,
            item.original_label,
            item.variant_text,
            item.variant_label,
            ";".join(item.tags),
            item.flipped,
            item.broken,
            item.unseen,
        ]
        for system_id in ids:
            cell = cells.get(system_id, {})
            row += [cell.get("original"), cell.get("variant"), cell.get("outcome")]
        rows.append(row)
    return header, rows


def _failures_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
    return [{**row, "system": names.system(row["system_id"])} for row in snapshot.failures]


def _failures_grid(snapshot: Snapshot, names: Names) -> Grid:
    return ["system", "text", "reason"], [
        [row["system"], row["text"], row["reason"]] for row in _failures_json(snapshot, names)
    ]


@dataclass(frozen=True)
class Table:
    """One table of a snapshot: how it is built, and what its README says of it."""

    name: str
    description: str
    columns: str
    grid: Callable[[Snapshot, Names], Grid]
    json: Callable[[Snapshot, Names], Any] | None = None  # None: the grid's rows as dicts
    # Who else may read it: "items" once the item table is visible, "organizers" only them.
    restricted: str = ""

    def visible_to(self, viewer: Viewer, snapshot: Snapshot) -> bool:
        if self.restricted == "organizers":
            return viewer.is_organizer
        if self.restricted == "items":
            return viewer.can_view_items(snapshot)
        return True

    def as_json(self, snapshot: Snapshot, names: Names) -> Any:
        if self.json is not None:
            return self.json(snapshot, names)
        header, rows = self.grid(snapshot, names)
        return [dict(zip(header, row, strict=True)) for row in rows]

    def as_csv(self, snapshot: Snapshot, names: Names) -> str:
        return csv_text(*self.grid(snapshot, names))


LAMBDA_DELTA = ["team", "system", "pairs", "mean_delta", "std_delta"]
LAMBDA_CORRELATION = [
    "system", "kind", "outcome", "pairs", "pearson_r", "pearson_p", "spearman_r", "spearman_p",
]  # fmt: skip
LAMBDA_AUC = [
    "system", "kind", "pairs", "changed", "lambda_auc", "confidence_pairs", "confidence_auc",
]  # fmt: skip
LAMBDA_QUARTILES = [
    "system", "kind", "quartile", "lambda_low", "lambda_high", "pairs", "breaks", "broken_pct",
    "changed_pct",
]  # fmt: skip

TABLES = {
    table.name: table
    for table in [
        Table(
            "builders",
            "The builder leaderboard, fewest pairs broken first (then highest F1).",
            "rank; system (team / name); team; kind (hosted, self_reported); version; f1 "
            "(macro-F1 over every sentence of every pair); accuracy; broken_pct (% of the "
            "pairs it saw that broke it); breaks; pairs (that it saw); unseen (pairs it did "
            "not see: both items the same after its truncation, or a text its model failed "
            "on); both_wrong; outside_label_set (sentences answered outside the label set); "
            "dev_accuracy (blind dev set); weight (its weight in the breaker score under "
            "dev_accuracy); weight_source (blind_dev, or originals: its accuracy on the "
            "originals, for a system without blind-dev predictions); broken_pct by each "
            "breaker team.",
            _builders_grid,
            _builders_json,
        ),
        Table(
            "breakers",
            "The breaker leaderboard, best score first.",
            "rank; team; pairs; score (100 × the mean over systems of weight × break rate); "
            "broken_pct of each system.",
            _breakers_grid,
            _breakers_json,
        ),
        Table(
            "breaker_systems",
            "Each breaker team against each system: what its score is the mean of.",
            "team; system; pairs (that the system saw); breaks; broken_pct; weight; "
            "weighted_pct (weight × broken_pct).",
            _breaker_systems_grid,
        ),
        Table(
            "matrix",
            "% of each breaker team's pairs that broke each system.",
            "breaker team; one column per system.",
            _matrix_grid,
            _matrix_json,
        ),
        Table(
            "tags",
            "% broken by strategy tag (untagged pairs left out; a pair counts for each tag).",
            "tag; pairs; breaks; broken_pct (mean over systems); broken_pct of each system.",
            _rates_grid("tags", "tag"),
            _rates_json("tags"),
        ),
        Table(
            "flips",
            "% broken of pairs that flip the gold label and of pairs that keep it.",
            "kind (flipped, same_label); pairs; breaks; broken_pct; broken_pct of each system.",
            _rates_grid("flips", "kind"),
            _rates_json("flips"),
        ),
        Table(
            "both_wrong",
            "Pairs a system got wrong on both items (not breaks), per system and team.",
            "system; team; pairs; both_wrong; both_wrong_pct.",
            _flat_grid("both_wrong", ["system", "team", "pairs", "both_wrong", "both_wrong_pct"]),
            _named_rows("both_wrong"),
        ),
        Table(
            "outside_label_set",
            "Predictions outside the task's label set (each counted wrong).",
            "system; label; sentences.",
            _flat_grid("outside_label_set", ["system", "label", "sentences"]),
            _named_rows("outside_label_set"),
        ),
        Table(
            "lambda_delta",
            "Δλmax = λmax(variant) − λmax(original), per breaker team and hosted system.",
            "team; system; pairs (with λmax on both items); mean_delta; std_delta.",
            _flat_grid("lambda_delta", LAMBDA_DELTA),
            _named_rows("lambda_delta"),
        ),
        Table(
            "lambda_correlation",
            "The original's λmax against whether the system's prediction changed between the "
            "two items, and whether the pair broke it, for all pairs and apart for those that "
            "keep the gold label (same_label) and those that flip it (flipped).",
            "system; kind (all, same_label, flipped); outcome (changed, broken); pairs; "
            "pearson_r; pearson_p; spearman_r; spearman_p (empty when undefined: fewer than 3 "
            "pairs, or no spread).",
            _flat_grid("lambda_correlation", LAMBDA_CORRELATION),
            _named_rows("lambda_correlation"),
        ),
        Table(
            "lambda_auc",
            "How well the original's λmax tells which pairs change the prediction (ROC AUC), "
            "beside the confidence baseline 1 − (largest probability on the original).",
            "system; kind; pairs; changed; lambda_auc; confidence_pairs; confidence_auc "
            "(empty when undefined: all pairs changed or none, a constant score, or no "
            "probabilities).",
            _flat_grid("lambda_auc", LAMBDA_AUC),
            _named_rows("lambda_auc"),
        ),
        Table(
            "lambda_quartiles",
            "Pairs by the quartile of their original's λmax among the system's pairs: how often "
            "they broke it and changed its prediction.",
            "system; kind; quartile (1-4); lambda_low; lambda_high (the quartile's λmax range); "
            "pairs; breaks; broken_pct; changed_pct.",
            _flat_grid("lambda_quartiles", LAMBDA_QUARTILES),
            _named_rows("lambda_quartiles"),
        ),
        Table(
            "items",
            "Every pair, with each system's predictions and what the pair did to it.",
            "pair_id; team; original_id; original_text; original_label; variant_text; "
            "variant_label (after adjudication); tags; flipped; broken (systems it broke); "
            "unseen (systems that did not see it); then per system its prediction on the "
            "original and on the variant and the outcome: broken, held (right on both), "
            "both_wrong, unseen (truncation made both items the same input) or failed (the "
            "model failed on one of its texts).",
            _items_grid,
            restricted="items",
        ),
        Table(
            "broke_every_system",
            "The pairs that broke every system that saw them.",
            "pair_id; team; original_text; variant_text.",
            _flat_grid("broke_every_system", ["pair_id", "team", "original_text", "variant_text"]),
            _named_rows("broke_every_system"),
            restricted="items",
        ),
        Table(
            "failures",
            "Texts a system's model failed on; the pairs holding them count as unseen by it.",
            "system; text; reason.",
            _failures_grid,
            _failures_json,
            restricted="organizers",
        ),
    ]
}


def snapshot_summary(snapshot: Snapshot, names: Names) -> dict[str, Any]:
    """What was scored, with what, when."""
    return {
        "id": snapshot.id,
        "run": snapshot.run_id,
        "created_at": snapshot.created_at.isoformat(),
        "published_at": snapshot.published_at.isoformat() if snapshot.published_at else None,
        "code_version": snapshot.code_version,
        "settings": snapshot.settings_used,
        "pair_set_ids": snapshot.pair_set_ids,
        "counts": snapshot.counts,
        "systems": [
            {
                **entry,
                "system": names.system(entry["system_id"]),
                "team": names.team(entry["team_id"]),
            }
            for entry in snapshot.systems
        ],
        "excluded_systems": [
            {
                **entry,
                "system": names.system(entry["system_id"]),
                "team": names.team(entry["team_id"]),
            }
            for entry in snapshot.excluded_systems
        ],
    }


def readme(tables: Sequence[Table], snapshot: Snapshot) -> str:
    lines = [
        f"# Results of {snapshot.shared_task.name} (snapshot {snapshot.id})",
        "",
        "Produced by bibi. `snapshot.json` says what was scored: the settings, the pair sets,",
        "the system versions and their weights, the code version and the times. Percentages",
        f"are 0-100; break rates are per {snapshot.settings_used['break_rate_mode']} and the",
        f"breaker weight is {snapshot.settings_used['weight_mode']}. Empty cells are undefined",
        "values. Text cells that began with =, +, -, @ carry a leading ' (spreadsheet safety).",
        "",
    ]
    for table in tables:
        lines += [
            f"## {table.name}.csv",
            "",
            table.description,
            "",
            f"Columns: {table.columns}",
            "",
        ]
    return "\n".join(lines)


def snapshot_files(snapshot: Snapshot, viewer: Viewer, names: Names) -> dict[str, str]:
    """File name → text: every table ``viewer`` may read as CSV, ``snapshot.json``, README.md."""
    tables = [table for table in TABLES.values() if table.visible_to(viewer, snapshot)]
    files = {
        "README.md": readme(tables, snapshot),
        "snapshot.json": json.dumps(
            snapshot_summary(snapshot, names), indent=2, ensure_ascii=False
        ),
    }
    for table in tables:
        files[f"{table.name}.csv"] = table.as_csv(snapshot, names)
    return files


def snapshot_zip(snapshot: Snapshot, viewer: Viewer, names: Names) -> bytes:
    """``snapshot_files`` in one zip."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in snapshot_files(snapshot, viewer, names).items():
            archive.writestr(name, text)
    return buffer.getvalue()
