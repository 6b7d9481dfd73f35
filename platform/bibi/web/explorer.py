"""The item explorer's pairs as its page shows them: each pair's word diff and every shown
system's predictions, with what the task's kind of answer adds (``span_marks``: the gold
answers marked over the diff and each system's answer marked in both sentences). And the rule
for a right answer in words, which every results page of a span task states."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bibi.evaluation import table_rows
from bibi.evaluation.models import SnapshotItem
from bibi.evaluation.selectors import Names
from bibi.sharedtasks.models import SharedTask
from bibi.web.answer_marks import answer_marks, marked_parts
from bibi.web.diff import text_diffs, word_diff


def answer_rule(used: dict[str, Any]) -> str:
    """A span snapshot's rule for a right answer, in words ('' for a label task)."""
    mode = used.get("answer_mode")
    if not mode:
        return ""
    words = SharedTask.AnswerMode(mode).label if mode in SharedTask.AnswerMode.values else mode
    if mode == SharedTask.AnswerMode.TOKEN_F1 and used.get("answer_f1_threshold") is not None:
        words += f", at least {used['answer_f1_threshold']}"
    return f"{words} ({mode})"


def item_entries(
    items: Iterable[SnapshotItem],
    *,
    kind: Any,
    tables: dict[str, Any],
    names: Names,
    shown: Sequence[int],
    marks: Callable[[SnapshotItem, dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """One entry per stored item: ``item``, ``team``, ``original`` and ``variant`` (diff parts
    of the first text), ``texts`` (a ``bibi.web.diff.TextDiff`` of each text a breaker may
    edit, under the task type ``kind``: a sentence pair's premise and hypothesis) and
    ``predictions`` of the ``shown`` systems, then what ``marks`` adds to it (the task's
    ``bibi.web.kinds.PageKind.explorer_marks``)."""
    editable = [segment.field for segment in kind.segments if segment.editable is not False]
    entries = []
    for item in items:
        cells = table_rows.item_cells(item, tables["vocabulary"], tables["item_systems"])
        original, variant = word_diff(item.original_text, item.variant_text)
        entry = {
            "item": item,
            "team": names.team(item.team_id),
            "original": original,
            "variant": variant,
            "texts": text_diffs(kind, *kind.pair_items(item), editable),
            "predictions": [
                {"system_id": system_id, "system": names.system(system_id), **cells[system_id]}
                for system_id in shown
                if system_id in cells
            ],
        }
        marks(item, entry)
        entries.append(entry)
    return entries


def span_marks(item: SnapshotItem, entry: dict[str, Any]) -> None:
    """A span pair's entry with its answers marked: ``original`` and ``variant`` become
    marked pieces, and each prediction gets its answer's pieces in both sentences."""
    span = item.span
    entry["original"] = marked_parts(entry["original"], span["original_answers"])
    entry["variant"] = marked_parts(entry["variant"], span["variant_answers"])
    # Snapshots scored before the spans were stored have the answers' texts only.
    spans = span.get("spans", {})
    for prediction in entry["predictions"]:
        on_original, on_variant = spans.get(str(prediction["system_id"])) or [None, None]
        prediction["original_pieces"] = answer_marks(item.original_text, [on_original])
        prediction["variant_pieces"] = answer_marks(item.variant_text, [on_variant])
        prediction["marked"] = bool(on_original or on_variant)
