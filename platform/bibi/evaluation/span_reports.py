"""A span task's run inputs: from the prediction matrix to ``scoring.span_score``.

Each pair's two items are scored against their own gold answers (the pair's
``original_answers`` and ``variant_answers``) under the task's answer mode
(``bibi.systems.span_answers.span_scores``). Items are named per pair (``p<id>o``,
``p<id>v``): two breakers may write the same variant sentence with different answers, and the
break rule asks about each pair's own gold; cells are still shared by key
(``item_key``), so a system answers a sentence and question once.

``span_scoring_inputs`` returns ``reports.ScoringInputs`` with ``shown`` set: what the
item table shows of each pair (its sentences, question, gold answers and each system's
answer to each item), so ``reports.report_items`` stores sentences, not item names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

import scoring
from bibi.evaluation.matrix import Cell, PairMatrix, pair_item_keys
from bibi.evaluation.reports import ScoringInputs, inputs_assemble
from bibi.sharedtasks.models import SharedTask
from bibi.systems.span_answers import SpanAnswer, span_scores


def _item_names(pair_id: int) -> tuple[str, str]:
    return f"p{pair_id}o", f"p{pair_id}v"


def span_scoring_inputs(matrix: PairMatrix, *, shared_task: SharedTask) -> ScoringInputs:
    """The library's inputs for a span task's matrix (no cell may be missing)."""
    if matrix.cells_missing:
        raise ValueError("the matrix still has missing cells")
    pairs = pd.DataFrame(
        {
            "pair_id": [pair["pair_id"] for pair in matrix.pairs],
            "team": [str(pair["team_id"]) for pair in matrix.pairs],
            "original_id": [pair["original_external_id"] for pair in matrix.pairs],
            "original_item": [_item_names(pair["pair_id"])[0] for pair in matrix.pairs],
            "variant_item": [_item_names(pair["pair_id"])[1] for pair in matrix.pairs],
            "tags": [";".join(pair["tags"]) for pair in matrix.pairs],
        }
    )
    scores = _answer_scores(matrix, shared_task)
    return inputs_assemble(
        matrix,
        pairs,
        scores,
        lambda unseen: scoring.span_breaks(pairs, scores, unseen=unseen),
        shown=_shown(matrix),
        scorer=scoring.span_score,
    )


def _answer_scores(matrix: PairMatrix, shared_task: SharedTask) -> pd.DataFrame:
    """system, item, correct, token_f1, lambda_max: every scored version on every pair item
    it has a cell for (a failed cell's pairs are unseen and need none)."""
    gold: dict[str, list[dict[str, Any]]] = {}
    asked: list[tuple[str, str, SpanAnswer]] = []
    lambdas: list[float] = []
    for pair in matrix.pairs:
        names = _item_names(pair["pair_id"])
        gold[names[0]] = pair["original_answers"]
        gold[names[1]] = pair["variant_answers"]
        for version in matrix.versions:
            cells = matrix.cells[version.version_id]
            for name, key in zip(names, pair_item_keys(pair), strict=True):
                cell = cells.get(key)
                if cell is None:
                    continue
                answer = SpanAnswer(cell.answer_text, cell.answer_start, cell.answer_end)
                asked.append((version.key, name, answer))
                lambdas.append(np.nan if cell.lambda_max is None else cell.lambda_max)
    scores = span_scores(shared_task=shared_task, predictions=asked, gold=gold)
    scores["lambda_max"] = np.asarray(lambdas, dtype=float)
    return scores


def _offsets(cell: Cell | None) -> list[int] | None:
    if cell is None or cell.answer_start is None or cell.answer_end is None:
        return None
    return [cell.answer_start, cell.answer_end]


def _shown(matrix: PairMatrix) -> dict[int, dict[str, Any]]:
    """Per pair: the fields the item table stores in place of the break rule's names."""
    shown: dict[int, dict[str, Any]] = {}
    for pair in matrix.pairs:
        keys = pair_item_keys(pair)
        answers, spans = {}, {}
        for version in matrix.versions:
            cells = matrix.cells[version.version_id]
            answers[version.key] = [
                cells[key].answer_text if key in cells else None for key in keys
            ]
            # Where each answer lies, so that pages mark it in its sentence (None: no span).
            spans[version.key] = [_offsets(cells.get(key)) for key in keys]
        shown[pair["pair_id"]] = {
            "original_text": pair["original_text"],
            "variant_text": pair["variant_text"],
            "original_label": "",
            "variant_label": "",
            "span": {
                "question": pair["question"],
                "original_answers": pair["original_answers"],
                "variant_answers": pair["variant_answers"],
                "answers": answers,
                "spans": spans,
            },
        }
    return shown
