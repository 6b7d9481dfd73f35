"""Self-reported predictions of a span task: an answer per item, checked, then stored.

Rows (CSV, TSV or JSON Lines, read by ``bibi.files``):

* blind dev set: ``id`` (the example's id) and the answer;
* pair items: ``text`` (or ``sentence``) and ``question``, and the answer.

The answer is ``answer`` (its text), or ``start`` and ``end`` (character offsets into the
sentence, end exclusive), or all three (the text must then be the sentence's characters
there). A text without offsets is located in the sentence (its first occurrence,
``span_answers.answer_offsets``); one that is not in it is kept as text (right or wrong by
its text, and wrong under the 2017 overlap rule, which compares offsets). Every item must be
answered exactly once; otherwise every problem is listed and nothing is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from bibi.files import Row, RowErrors
from bibi.sharedtasks.models import Example
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction, SystemVersion, item_digest
from bibi.systems.span_answers import SpanAnswer, answer_offsets


@dataclass(frozen=True)
class SpanCell:
    """One answered item: its example (blind dev) or None (a pair item)."""

    example: Example | None
    text: str
    question: str
    answer: SpanAnswer


def span_answer_read(fields: dict[str, str], sentence: str) -> tuple[SpanAnswer | None, str]:
    """The row's answer to ``sentence``, or why it cannot be taken."""
    text = fields.get("answer")
    raw_start, raw_end = (fields.get("start") or "").strip(), (fields.get("end") or "").strip()
    if not raw_start and not raw_end:
        if text is None or not text.strip():
            return None, "there is no answer: give 'answer', or 'start' and 'end'"
        found = answer_offsets(sentence, text)
        return SpanAnswer(text.strip(), *(found or (None, None))), ""
    if not raw_start.isdigit() or not raw_end.isdigit():
        return None, "'start' and 'end' must both be whole numbers"
    start, end = int(raw_start), int(raw_end)
    if not start <= end <= len(sentence):
        return None, (
            f"the offsets {start}-{end} are not a span of the sentence "
            f"(0 <= start <= end <= {len(sentence)})"
        )
    if text is not None and text.strip() and text.strip() != sentence[start:end].strip():
        return None, (
            f"the answer {text.strip()!r} is not the sentence's text "
            f"{sentence[start:end]!r} at {start}-{end}"
        )
    return SpanAnswer(sentence[start:end], start, end), ""


def span_predicted_cells(
    rows: Iterable[Row],
    *,
    expected: dict[str, tuple[Example | None, str, str]],
    key_of: Callable[[dict[str, str]], str | None],
    named: str,
    rejected: Callable[[RowErrors], PredictionsRejected],
) -> list[SpanCell]:
    """Every expected item answered exactly once, or ``rejected`` with every problem.

    expected: row key → (example, sentence, question); ``key_of`` reads a row's key (None:
    the row does not say which item it answers); ``named`` says what a key is, in messages.
    """
    errors = RowErrors()
    seen: dict[str, int] = {}
    cells: list[SpanCell] = []
    for row in rows:
        if row.error:
            errors.add(row.line, row.error)
            continue
        key = key_of(row.fields)
        if key is None:
            errors.add(row.line, f"the row does not say which item it answers ({named})")
            continue
        if key not in expected:
            errors.add(row.line, f"{key[:80]!r} is not one of the items to predict")
            continue
        if key in seen:
            errors.add(row.line, f"{key[:80]!r} is predicted twice (first on line {seen[key]})")
            continue
        seen[key] = row.line
        example, sentence, question = expected[key]
        answer, problem = span_answer_read(row.fields, sentence)
        if answer is None:
            errors.add(row.line, problem)
            continue
        cells.append(SpanCell(example, sentence, question, answer))
    for key in expected:
        if key not in seen:
            errors.add(0, f"no prediction for {key[:80]!r}")
    if errors:
        raise rejected(errors)
    return cells


def span_prediction_rows(
    version: SystemVersion, source: str, cells: list[SpanCell]
) -> list[Prediction]:
    """The predictions to store, one per cell key (items that share a sentence and question,
    two predicates of one verb, share a cell: the first answer is kept)."""
    rows: dict[str, Prediction] = {}
    for cell in cells:
        digest = item_digest(cell.text, cell.question)
        rows.setdefault(
            digest,
            Prediction(
                system_version=version,
                source=source,
                example=cell.example,
                text=cell.text,
                question=cell.question,
                text_sha256=digest,
                label="",
                answer_start=cell.answer.start,
                answer_end=cell.answer.end,
                answer_text=cell.answer.text,
            ),
        )
    return list(rows.values())
