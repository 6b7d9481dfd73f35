"""Scores on validated pairs: what label validation adds to a run's snapshot.

A run scores the pairs with their validated labels (``bibi.pairs.validation.pairs_scored``:
relabelled pairs under the majority's label, invalid, disputed and unverified pairs left
out). When validation is on, the same cells are scored a second time on the pairs as if
validation were off (the *unvalidated* score), for comparison; labels are never in cells,
so neither score asks the ``gpu`` queue for anything a text did not already need.

The snapshot then carries:

- ``settings_used["validation"]``: the task's validation settings;
- in ``counts``: ``pairs_validated``, ``pairs_relabelled``, ``pairs_left_out``,
  ``pairs_pending`` and ``pairs_claimed_unchecked`` (scored on the label their team
  claimed, which no validator checked: waiting for votes under the task's
  ``validation_pending`` 'claimed', or outside the validated sample) over every entry pair;
- ``tables["validation_summary"]``: ``bibi.pairs.validation.validation_summary`` less its
  settings (counts by state in all and per team, Krippendorff's alpha per task and per
  team); ``snapshot.json`` and the snapshot API carry it as ``validation``, teams named;
- in ``tables["breakers"]``, per team: ``validated``, ``relabelled``, ``left_out``,
  ``pending``, ``claimed_unchecked`` (pair counts) and ``unvalidated_score``; in ``tables["builders"]``, per
  system: ``unvalidated_broken_pct`` (None when validation is off);
- ``tables["validation"]``: every entry pair's validation row (scored or left out);
- on each item, ``validation_state`` and ``validation`` (the pair's row).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import scoring
from bibi.evaluation.matrix import PairMatrix
from bibi.evaluation.reports import score_inputs, scoring_inputs
from bibi.pairs.validation import validation_settings, validation_summary
from bibi.sharedtasks.models import SharedTask

TEAM_COUNTS = ("validated", "relabelled", "left_out", "pending", "claimed_unchecked")


@dataclass(frozen=True)
class Unvalidated:
    """The scores as if validation were off: breaker score by team id, builder % broken by
    system id."""

    breakers: dict[int, float | None]
    builders: dict[int, float | None]


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN is undefined


def unvalidated_scores(matrix: PairMatrix, shared_task: SharedTask) -> Unvalidated | None:
    """Score ``matrix``'s cells on the unvalidated pairs; None when validation is off, or
    when those pairs cannot be scored (none are left)."""
    if matrix.validation is None or not matrix.validation.validation_on or not matrix.unvalidated:
        return None
    unvalidated = dataclasses.replace(matrix, pairs=matrix.unvalidated)
    try:
        report = score_inputs(
            scoring_inputs(unvalidated),
            weight_mode=shared_task.weight_mode,
            break_rate_mode=shared_task.break_rate_mode,
            labels=list(shared_task.labels),
        )
    except scoring.ScoringInputError:
        return None
    return Unvalidated(
        breakers={
            int(team): _number(score)
            for team, score in zip(report.breakers["team"], report.breakers["score"], strict=True)
        },
        builders={
            int(system): _number(pct)
            for system, pct in zip(
                report.builders["system"], report.builders["broken_pct"], strict=True
            )
        },
    )


def validation_tables_add(
    tables: dict[str, Any], matrix: PairMatrix, unvalidated: Unvalidated | None
) -> None:
    """Add the per-team counts, the unvalidated scores and the ``validation`` table."""
    counts = matrix.validation.counts if matrix.validation else {}
    for row in tables["breakers"]:
        team = counts.get(row["team_id"], {})
        for key in TEAM_COUNTS:
            row[key] = team.get(key, 0)
        row["unvalidated_score"] = (
            unvalidated.breakers.get(row["team_id"]) if unvalidated is not None else None
        )
    for row in tables["builders"]:
        row["unvalidated_broken_pct"] = (
            unvalidated.builders.get(row["system_id"]) if unvalidated is not None else None
        )
    states = matrix.validation.states if matrix.validation else {}
    tables["validation"] = [state.as_row() for state in states.values()]


def validation_record(shared_task: SharedTask, matrix: PairMatrix) -> tuple[dict, dict]:
    """(settings, summary) for ``settings_used["validation"]`` and
    ``tables["validation_summary"]``."""
    states = matrix.validation.states if matrix.validation else {}
    summary = validation_summary(shared_task=shared_task, states=states)
    summary.pop("settings")
    return validation_settings(shared_task), summary


def item_validation(item: dict[str, Any], matrix: PairMatrix) -> dict[str, Any]:
    """The fields a stored item gets from its pair's validation."""
    states = matrix.validation.states if matrix.validation else {}
    state = states.get(item["pair_id"])
    if state is None:
        return {"validation_state": "", "validation": {}}
    row = state.as_row()
    return {"validation_state": row["state"], "validation": row}


def no_pairs_reason(matrix: PairMatrix) -> str:
    """Why a run has no pair to score."""
    if matrix.validation is not None and matrix.validation.states:
        return "label validation left every entry pair out"
    return "no breaker team has an entry"


def validation_counts(matrix: PairMatrix) -> dict[str, int]:
    """The snapshot's counts of entry pairs validated, relabelled, left out and pending."""
    teams = matrix.validation.counts.values() if matrix.validation else []
    return {f"pairs_{key}": sum(team[key] for team in teams) for key in TEAM_COUNTS}
