"""A snapshot's stored tables as rows named for one viewer: JSON rows and CSV grids.

Snapshots store teams and systems by id (``reports.report_tables``); every builder here
takes the viewer's ``Names`` (``selectors.names_for``), so a table says an anonymous team's
alias, and its systems' published names, wherever it is shown. ``exports.TABLES`` says which
builder makes each table and what its columns mean.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bibi.evaluation.models import Snapshot, SnapshotItem
from bibi.evaluation.reports import OUTCOMES
from bibi.evaluation.selectors import Names, snapshot_items
from bibi.tasktypes import LABEL, SPAN, Parts, TaskType, task_type
from bibi.tasktypes.span_extraction.answers import answers_text

Grid = tuple[list[str], list[list[Any]]]


def snapshot_kind(snapshot: Snapshot) -> TaskType:
    """The type of task ``snapshot`` scored: as it recorded it (snapshots from before types
    recorded it: a span task's said its answer mode, a label task's did not)."""
    used = snapshot.settings_used
    if "task_type" in used:
        return task_type(used["task_type"])
    return task_type("span_extraction" if "answer_mode" in used else "text_classification")


def _system_columns(snapshot: Snapshot, names: Names) -> tuple[list[int], list[str]]:
    ids = [entry["system_id"] for entry in snapshot.systems]
    return ids, [names.system(system_id) for system_id in ids]


def builders_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
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


def builders_grid(snapshot: Snapshot, names: Names) -> Grid:
    teams = snapshot.tables["matrix"]["team_ids"]
    columns = snapshot_shape(snapshot).builder_columns
    header = [*columns, *(f"broken_pct by {names.team(team)}" for team in teams)]
    rows = []
    for row in builders_json(snapshot, names):
        by_team = {cell["team_id"]: cell["broken_pct"] for cell in row["by_team"]}
        # Snapshots from before label validation lack its columns: empty cells.
        rows.append([*(row.get(c) for c in columns), *(by_team.get(t) for t in teams)])
    return header, rows


def breakers_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
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


BREAKER_VALIDATION_COLUMNS = [
    "unvalidated_score", "validated", "relabelled", "left_out", "pending", "claimed_unchecked",
]  # fmt: skip


def breakers_grid(snapshot: Snapshot, names: Names) -> Grid:
    ids, labels = _system_columns(snapshot, names)
    validation = snapshot_shape(snapshot).breaker_validation_columns
    header = [
        "rank",
        "team",
        "pairs",
        "score",
        *validation,
        *(f"broken_pct of {label}" for label in labels),
    ]
    rows = []
    for row in breakers_json(snapshot, names):
        by_system = {cell["system_id"]: cell["broken_pct"] for cell in row["by_system"]}
        rows.append(
            [
                row["rank"],
                row["team"],
                row["pairs"],
                row["score"],
                *(row.get(column) for column in validation),
                *(by_system.get(i) for i in ids),
            ]
        )
    return header, rows


def breaker_systems_grid(snapshot: Snapshot, names: Names) -> Grid:
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


def matrix_json(snapshot: Snapshot, names: Names) -> dict[str, Any]:
    matrix = snapshot.tables["matrix"]
    return {
        "teams": [{"team_id": t, "team": names.team(t)} for t in matrix["team_ids"]],
        "systems": [{"system_id": s, "system": names.system(s)} for s in matrix["system_ids"]],
        "broken_pct": matrix["broken_pct"],
    }


def matrix_grid(snapshot: Snapshot, names: Names) -> Grid:
    matrix = snapshot.tables["matrix"]
    header = ["breaker team", *(names.system(s) for s in matrix["system_ids"])]
    rows = [
        [names.team(team), *values]
        for team, values in zip(matrix["team_ids"], matrix["broken_pct"], strict=True)
    ]
    return header, rows


def rates_json(key: str) -> Callable[[Snapshot, Names], list[dict[str, Any]]]:
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


def rates_grid(key: str, first: str) -> Callable[[Snapshot, Names], Grid]:
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


# The λmax tables' kinds of pair that only a label task tells apart.
LABEL_KINDS = ("same_label", "flipped")


def named_rows(key: str) -> Callable[[Snapshot, Names], list[dict[str, Any]]]:
    """A flat table whose rows name a system and/or a team by id: the names added. On a span
    task, rows of a ``LABEL_KINDS`` kind are left out: a span pair keeps or moves an answer,
    never a label, so every pair counts as ``same_label`` (a copy of ``all``) and ``flipped``
    is empty."""

    def build(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
        rows = []
        hidden = snapshot_shape(snapshot).hidden_kinds
        for row in snapshot.tables[key]:
            if row.get("kind") in hidden:
                continue
            named = dict(row)
            if "system_id" in row:
                named["system"] = names.system(row["system_id"])
            if "team_id" in row:
                named["team"] = names.team(row["team_id"])
            rows.append(named)
        return rows

    return build


def flat_grid(key: str, columns: list[str]) -> Callable[[Snapshot, Names], Grid]:
    def build(snapshot: Snapshot, names: Names) -> Grid:
        rows = named_rows(key)(snapshot, names)
        return columns, [[row.get(column) for column in columns] for row in rows]

    return build


def item_cells(
    item: SnapshotItem, vocabulary: Sequence[str], systems: Sequence[int]
) -> dict[int, dict[str, Any]]:
    """System id → ``{original, variant, outcome}`` of one stored item (``systems`` and
    ``vocabulary`` are the snapshot's ``item_systems`` and ``vocabulary``; see
    ``reports.report_items`` for how the codes are stored)."""
    codes = item.predictions
    cells = {
        system_id: {
            "original": vocabulary[codes[3 * i]] if codes[3 * i] >= 0 else None,
            "variant": vocabulary[codes[3 * i + 1]] if codes[3 * i + 1] >= 0 else None,
            "outcome": OUTCOMES[codes[3 * i + 2]],
        }
        for i, system_id in enumerate(systems)
    }
    if item.span:
        # Span tasks: original/variant say right or wrong; the answers say what was given.
        for system_id, cell in cells.items():
            answers = item.span["answers"].get(str(system_id)) or [None, None]
            cell["original_answer"], cell["variant_answer"] = answers
    return cells


def _span_fields(item: SnapshotItem) -> dict[str, Any]:
    """A span item's question and gold answers (nothing for a label item)."""
    if not item.span:
        return {}
    return {
        "question": item.span["question"],
        "original_answers": item.span["original_answers"],
        "variant_answers": item.span["variant_answers"],
    }


def _second_texts(item: SnapshotItem) -> dict[str, str]:
    """The second text of each item, where items have two (a sentence pair's hypothesis)."""
    if not (item.original_text_b or item.variant_text_b):
        return {}
    return {"original_text_b": item.original_text_b, "variant_text_b": item.variant_text_b}


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
        **_second_texts(item),
        "tags": item.tags,
        "flipped": item.flipped,
        "broken": item.broken,
        "unseen": item.unseen,
        "validation_state": item.validation_state,
        "validation": item.validation,
        **_span_fields(item),
        "predictions": [
            {"system_id": system_id, "system": names.system(system_id), **cell}
            for system_id, cell in item_cells(item, vocabulary, systems).items()
        ],
    }


ITEM_COLUMNS = [
    "pair_id", "team", "original_id", "original_text", "original_label", "variant_text",
    "variant_label", "tags", "flipped", "broken", "unseen", "validation_state", "claimed_label",
    "votes", "vote_labels", "agreement",
]  # fmt: skip


SPAN_ITEM_COLUMNS = [
    "pair_id", "team", "original_id", "question", "original_text", "original_answers",
    "variant_text", "variant_answers", "tags", "broken", "unseen",
]  # fmt: skip
# Per system: its answer to each item and whether that answer is right, and the outcome.
SPAN_CELL_KEYS = ("original_answer", "original", "variant_answer", "variant", "outcome")


def items_grid(snapshot: Snapshot, names: Names) -> Grid:
    return snapshot_shape(snapshot).items_grid(snapshot, names)


def _label_items_grid(snapshot: Snapshot, names: Names) -> Grid:
    """A labelled task's pairs: both items with their labels, the validation, and each
    system's label for each and the outcome."""
    ids, labels = _system_columns(snapshot, names)
    # Each side's texts by their type's columns: original_text, or original_premise and
    # original_hypothesis.
    segments = snapshot_kind(snapshot).segments
    texts = {side: [f"{side}_{s.column}" for s in segments] for side in ("original", "variant")}
    header = [*ITEM_COLUMNS[:3], *texts["original"], "original_label", *texts["variant"]]
    header += ITEM_COLUMNS[6:]
    for label in labels:
        header += [f"{label}: original", f"{label}: variant", f"{label}: outcome"]
    rows = []
    for item, cells in _items_with_cells(snapshot):
        row = [
            item.pair_id,
            names.team(item.team_id),
            item.original_id,
            *(item.original_text, item.original_text_b)[: len(segments)],
            item.original_label,
            *(item.variant_text, item.variant_text_b)[: len(segments)],
            item.variant_label,
            ";".join(item.tags),
            item.flipped,
            item.broken,
            item.unseen,
            item.validation_state,
            *_vote_cells(item.validation),
        ]
        for system_id in ids:
            cell = cells.get(system_id, {})
            row += [cell.get("original"), cell.get("variant"), cell.get("outcome")]
        rows.append(row)
    return header, rows


def _items_with_cells(
    snapshot: Snapshot,
) -> Iterator[tuple[SnapshotItem, dict[int, dict[str, Any]]]]:
    """Every stored item of ``snapshot`` with its cells (``item_cells``), in order."""
    vocabulary, systems = snapshot.tables["vocabulary"], snapshot.tables["item_systems"]
    for item in snapshot_items(snapshot=snapshot).iterator(chunk_size=2000):
        yield item, item_cells(item, vocabulary, systems)


def _span_items_grid(snapshot: Snapshot, names: Names) -> Grid:
    """A span task's pairs: the question, both sentences with their gold answers, and each
    system's answer to each and whether it is right (no labels, no label validation)."""
    ids, labels = _system_columns(snapshot, names)
    header = list(SPAN_ITEM_COLUMNS)
    for label in labels:
        header += [
            f"{label}: answer to original",
            f"{label}: original",
            f"{label}: answer to variant",
            f"{label}: variant",
            f"{label}: outcome",
        ]
    rows = []
    for item, cells in _items_with_cells(snapshot):
        fields = _span_fields(item)
        row = [
            item.pair_id,
            names.team(item.team_id),
            item.original_id,
            fields.get("question", ""),
            item.original_text,
            answers_text(fields.get("original_answers", [])),
            item.variant_text,
            answers_text(fields.get("variant_answers", [])),
            ";".join(item.tags),
            item.broken,
            item.unseen,
        ]
        for system_id in ids:
            cell = cells.get(system_id, {})
            row += [cell.get(key) for key in SPAN_CELL_KEYS]
        rows.append(row)
    return header, rows


@dataclass(frozen=True)
class ResultShape:
    """What a snapshot's tables hold for one kind of answer: the builders' and breakers'
    columns, the λmax rows it leaves out, its item grid and what the README says of it."""

    builder_columns: list[str]
    breaker_validation_columns: list[str]
    items_grid: Callable[[Snapshot, Names], Grid]
    # Tables it does not have (their rows would be empty or say nothing).
    absent_tables: frozenset[str] = frozenset()
    # λmax rows of these kinds of pair are left out (``named_rows``).
    hidden_kinds: tuple[str, ...] = ()
    readme: Callable[[Snapshot], list[str]] = lambda snapshot: []


def _span_readme(snapshot: Snapshot) -> list[str]:
    used = snapshot.settings_used
    return [
        "A span task (QA-SRL): systems answer a question with a span of the sentence. An",
        f"answer is right under the answer mode {used['answer_mode']} (token F1 threshold",
        f"{used.get('answer_f1_threshold')}); a pair breaks a system that is right on one",
        "of its two items and wrong on the other. Label tables (flips, outside_label_set,",
        "validation) are not made: a span task has no labels.",
        "",
    ]


RESULT_SHAPES: Parts[ResultShape] = Parts("result tables")
RESULT_SHAPES.register(
    LABEL,
    ResultShape(
        builder_columns=BUILDER_COLUMNS,
        breaker_validation_columns=BREAKER_VALIDATION_COLUMNS,
        items_grid=_label_items_grid,
    ),
)
RESULT_SHAPES.register(
    SPAN,
    ResultShape(
        # A span system answers with a span, never with a label outside the set.
        builder_columns=[c for c in BUILDER_COLUMNS if c != "outside_label_set"],
        # A span task has no label validation: its columns would be empty or zero.
        breaker_validation_columns=[],
        items_grid=_span_items_grid,
        absent_tables=frozenset({"flips", "outside_label_set", "validation"}),
        hidden_kinds=LABEL_KINDS,
        readme=_span_readme,
    ),
)


def snapshot_shape(snapshot: Snapshot) -> ResultShape:
    """The tables of ``snapshot``, as its task's answers have them."""
    return RESULT_SHAPES.of(snapshot_kind(snapshot))


def failures_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
    return [{**row, "system": names.system(row["system_id"])} for row in snapshot.failures]


def failures_grid(snapshot: Snapshot, names: Names) -> Grid:
    return ["system", "text", "reason"], [
        [row["system"], row["text"], row["reason"]] for row in failures_json(snapshot, names)
    ]


def _vote_cells(row: dict[str, Any]) -> list[Any]:
    """claimed_label, votes, vote_labels, agreement of a pair's validation row."""
    if not row:
        return [None, None, None, None]
    return [row["claimed_label"], row["votes"], ";".join(row["vote_labels"]), row["agreement"]]


VALIDATION_COLUMNS = [
    "pair_id", "team", "state", "claimed_label", "scored_label", "label_unverified", "votes",
    "vote_labels", "not_minimal", "not_fluent", "original_mislabelled", "unclear", "agreement",
    "invalid_reason",
]  # fmt: skip


def validation_json(snapshot: Snapshot, names: Names) -> list[dict[str, Any]]:
    # Snapshots from before label validation have no such table.
    return [
        {**row, "team": names.team(row["team_id"])} for row in snapshot.tables.get("validation", [])
    ]


def validation_grid(snapshot: Snapshot, names: Names) -> Grid:
    rows = []
    for row in validation_json(snapshot, names):
        flat = {**row, **row["flags"], "vote_labels": ";".join(row["vote_labels"])}
        rows.append([flat[column] for column in VALIDATION_COLUMNS])
    return list(VALIDATION_COLUMNS), rows
