"""A snapshot's tables as a viewer may read them: JSON rows, CSV files, one zip with a README.

Each table is built from the snapshot with the viewer's ``Names`` (real team names or
aliases) and described once in ``TABLES`` (its file name, what it holds, its columns), so
the API, the zip, its README and ``manage.py export_results`` say the same thing.

CSV files are RFC 4180 (every cell that needs it quoted) in UTF-8, and a text cell that
begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is prefixed with ``'`` so
that a spreadsheet shows it instead of running it as a formula (plain numbers such as the
label ``-1`` are left as they are: they cannot be formulas): ``bibi.files.csv_out``, the one
writer of every CSV the platform writes (``neutralized`` and ``csv_text`` are re-exported here).
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from bibi.evaluation.models import Snapshot
from bibi.evaluation.selectors import Names, Viewer
from bibi.evaluation.table_rows import (
    Grid,
    breaker_systems_grid,
    breakers_grid,
    breakers_json,
    builders_grid,
    builders_json,
    failures_grid,
    failures_json,
    flat_grid,
    items_grid,
    matrix_grid,
    matrix_json,
    named_rows,
    rates_grid,
    rates_json,
    snapshot_kind,
    snapshot_shape,
    validation_grid,
    validation_json,
)
from bibi.files.csv_out import csv_text, neutralized  # noqa: F401 (re-exported)
from bibi.tasktypes import SPAN


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
    # What its README says of the columns where a kind of answer has other columns (by kind).
    columns_by_answers: dict[str, str] | None = None

    def visible_to(self, viewer: Viewer, snapshot: Snapshot) -> bool:
        """Whether ``snapshot`` has this table and ``viewer`` may read it."""
        if self.name in snapshot_shape(snapshot).absent_tables:
            return False
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

    def columns_of(self, snapshot: Snapshot) -> str:
        """What the README says of the columns of this table of ``snapshot``."""
        answers = snapshot_kind(snapshot).answers
        return (self.columns_by_answers or {}).get(answers, self.columns)


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
            "The builder leaderboard, fewest broken first (then highest F1).",
            "rank; system (team / name); team; kind (hosted, self_reported); version; f1 "
            "(macro-F1 over every sentence of every pair); accuracy; broken_pct (breaks as a "
            "% of the pairs it saw, or of their sentences under the sentences break rate); "
            "breaks; pairs (that it saw); unseen (pairs it did not see: both items the same "
            "after its truncation, or a text its model failed on); both_wrong; "
            "outside_label_set (sentences answered outside the label set); dev_accuracy "
            "(blind dev set); weight (its weight in the breaker score under dev_accuracy; "
            "breaker_systems has the weight each team's score applied); weight_source "
            "(blind_dev, or originals: its accuracy on the originals, for a system without "
            "blind-dev predictions); unvalidated_broken_pct (the same with label "
            "validation left out: empty when validation is off); broken_pct by each breaker "
            "team.",
            builders_grid,
            builders_json,
            columns_by_answers={
                SPAN: "rank; system (team / name); team; kind (hosted, self_reported); "
                "version; f1 (mean token F1 of its answers over both items of every pair it saw); "
                "accuracy (share of those answers right under the task's answer mode: "
                "settings.answer_mode in snapshot.json); broken_pct; breaks; pairs (that it saw); "
                "unseen (a text its model failed on); both_wrong; dev_accuracy (answers right on "
                "the blind dev set); weight; weight_source; broken_pct by each breaker team."
            },
        ),
        Table(
            "breakers",
            "The breaker leaderboard, best score first.",
            "rank; team; pairs; score (100 × the mean over systems of weight × break rate); "
            "unvalidated_score (the score with label validation left out: empty when "
            "validation is off); validated, relabelled (by the validators' majority), left_out "
            "(invalid, disputed, label unverified, or excluded by the organizers), pending "
            "(waiting for votes) and claimed_unchecked (scored on the label the team claimed, "
            "which no validator checked: empty in snapshots from before it was counted): "
            "counts of the team's entry pairs; broken_pct of each system.",
            breakers_grid,
            breakers_json,
            columns_by_answers={
                SPAN: "rank; team; pairs; score (100 × the mean over systems of weight × "
                "break rate); broken_pct of each system."
            },
        ),
        Table(
            "breaker_systems",
            "Each breaker team against each system: what its score is the mean of.",
            "team; system; pairs (that the system saw); breaks; broken_pct; weight; "
            "weighted_pct (weight × broken_pct).",
            breaker_systems_grid,
        ),
        Table(
            "matrix",
            "Each breaker team's break rate against each system: % of its pairs (or of their "
            "sentences under the sentences break rate).",
            "breaker team; one column per system.",
            matrix_grid,
            matrix_json,
        ),
        Table(
            "tags",
            "% broken by strategy tag (untagged pairs left out; a pair counts for each tag).",
            "tag; pairs; breaks; broken_pct (mean over systems); broken_pct of each system.",
            rates_grid("tags", "tag"),
            rates_json("tags"),
        ),
        Table(
            "flips",
            "% broken of pairs that flip the gold label and of pairs that keep it.",
            "kind (flipped, same_label); pairs; breaks; broken_pct; broken_pct of each system.",
            rates_grid("flips", "kind"),
            rates_json("flips"),
        ),
        Table(
            "both_wrong",
            "Pairs a system got wrong on both items (not breaks), per system and team.",
            "system; team; pairs; both_wrong; both_wrong_pct.",
            flat_grid("both_wrong", ["system", "team", "pairs", "both_wrong", "both_wrong_pct"]),
            named_rows("both_wrong"),
        ),
        Table(
            "outside_label_set",
            "Predictions outside the task's label set (each counted wrong).",
            "system; label; sentences.",
            flat_grid("outside_label_set", ["system", "label", "sentences"]),
            named_rows("outside_label_set"),
        ),
        Table(
            "lambda_delta",
            "Δλmax = λmax(variant) − λmax(original), per breaker team and hosted system.",
            "team; system; pairs (with λmax on both items); mean_delta; std_delta.",
            flat_grid("lambda_delta", LAMBDA_DELTA),
            named_rows("lambda_delta"),
        ),
        Table(
            "lambda_correlation",
            "The original's λmax against whether the system's prediction changed between the "
            "two items, and whether the pair broke it, for all pairs and apart for those that "
            "keep the gold label (same_label) and those that flip it (flipped).",
            "system; kind (all, same_label, flipped); outcome (changed, broken); pairs; "
            "pearson_r; pearson_p; spearman_r; spearman_p (empty when undefined: fewer than 3 "
            "pairs, or no spread).",
            flat_grid("lambda_correlation", LAMBDA_CORRELATION),
            named_rows("lambda_correlation"),
            columns_by_answers={
                SPAN: "system; kind (all: a span pair keeps or moves an answer, never a "
                "label); outcome (changed: right on one item and wrong on the other, "
                "or broken); pairs; pearson_r; pearson_p; spearman_r; spearman_p (empty when "
                "undefined)."
            },
        ),
        Table(
            "lambda_auc",
            "How well the original's λmax tells which pairs change the prediction (ROC AUC), "
            "beside the confidence baseline 1 − (largest probability on the original).",
            "system; kind; pairs; changed; lambda_auc; confidence_pairs; confidence_auc "
            "(empty when undefined: all pairs changed or none, a constant score, or no "
            "probabilities).",
            flat_grid("lambda_auc", LAMBDA_AUC),
            named_rows("lambda_auc"),
            columns_by_answers={
                SPAN: "system; kind (all: a span pair keeps or moves an answer, never a "
                "label); pairs; changed (right on one item and wrong on the other); "
                "lambda_auc; confidence_pairs; confidence_auc (empty: a span system reports no "
                "class probabilities)."
            },
        ),
        Table(
            "lambda_quartiles",
            "Pairs by the quartile of their original's λmax among the system's pairs: how often "
            "they broke it and changed its prediction.",
            "system; kind; quartile (1-4); lambda_low; lambda_high (the quartile's λmax range); "
            "pairs; breaks; broken_pct; changed_pct.",
            flat_grid("lambda_quartiles", LAMBDA_QUARTILES),
            named_rows("lambda_quartiles"),
            columns_by_answers={
                SPAN: "system; kind (all: a span pair keeps or moves an answer, never a "
                "label); quartile (1-4); lambda_low; lambda_high; pairs; breaks; "
                "broken_pct; changed_pct (right on one item and wrong on the other)."
            },
        ),
        Table(
            "items",
            "Every pair, with each system's predictions and what the pair did to it.",
            "pair_id; team; original_id; original_text; original_label; variant_text; "
            "variant_label (after adjudication); tags; flipped; broken (systems it broke); "
            "unseen (systems that did not see it); then per system its prediction on the "
            "original and on the variant and the outcome: broken, held (right on both), "
            "both_wrong, unseen (truncation made both items the same input) or failed (the "
            "model failed on one of its texts); validation_state (see validation.csv), "
            "claimed_label (the team's), votes, vote_labels, agreement (share of the votes "
            "giving the label scored).",
            items_grid,
            restricted="items",
            columns_by_answers={
                SPAN: "pair_id; team; original_id; question (the same on both items); "
                "original_text; original_answers (its gold answers, ' ### ' between them); "
                "variant_text; variant_answers; tags; broken (systems it broke); unseen (systems "
                "that did not see it); then per system its answer to the original, whether that "
                "answer is right (right, wrong), its answer to the variant, whether that is right, "
                "and the outcome: broken, held (right on both), both_wrong, unseen or failed (the "
                "model failed on one of its texts)."
            },
        ),
        Table(
            "validation",
            "Label validation: every entry pair's state, votes and agreement, scored or left out.",
            "pair_id; team; state (not_validated, pending, validated, relabelled, disputed, "
            "invalid, unverified, adjudicated, excluded); claimed_label (the team's); "
            "scored_label (empty: left out); label_unverified (a machine-made label change); "
            "votes; vote_labels; not_minimal, not_fluent, original_mislabelled, unclear (votes "
            "raising each flag); agreement (share of the labelled votes giving the label "
            "scored); invalid_reason (the flag most votes raised).",
            validation_grid,
            validation_json,
            restricted="items",
        ),
        Table(
            "broke_every_system",
            "The pairs that broke every system that saw them.",
            "pair_id; team; original_text; variant_text.",
            flat_grid("broke_every_system", ["pair_id", "team", "original_text", "variant_text"]),
            named_rows("broke_every_system"),
            restricted="items",
        ),
        Table(
            "failures",
            "Texts a system's model failed on; the pairs holding them count as unseen by it.",
            "system; text; reason.",
            failures_grid,
            failures_json,
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
        "validation": _validation_named(snapshot, names),
        "systems": [_named_entry(entry, names) for entry in snapshot.systems],
        "excluded_systems": [_named_entry(entry, names) for entry in snapshot.excluded_systems],
    }


def _validation_named(snapshot: Snapshot, names: Names) -> dict[str, Any] | None:
    """Label validation's counts and agreement (``evaluation.validated``), teams named; None
    for a snapshot from before label validation."""
    summary = snapshot.tables.get("validation_summary")
    if summary is None:
        return None
    teams = [{**team, "team": names.team(team["team_id"])} for team in summary["teams"]]
    return {**summary, "teams": teams}


def _named_entry(entry: dict[str, Any], names: Names) -> dict[str, Any]:
    """A scored or excluded system of the snapshot with its names for the viewer: the stored
    name is replaced by the published one."""
    named = {
        **entry,
        "system": names.system(entry["system_id"]),
        "team": names.team(entry["team_id"]),
    }
    if "name" in entry:
        named["name"] = names.system_name(entry["system_id"])
    return named


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
    lines += snapshot_shape(snapshot).readme(snapshot)
    for table in tables:
        lines += [
            f"## {table.name}.csv",
            "",
            table.description,
            "",
            f"Columns: {table.columns_of(snapshot)}",
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
