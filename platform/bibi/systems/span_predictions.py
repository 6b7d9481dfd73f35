"""Self-reported predictions of a span task: an answer per item, checked, then stored.

Rows (CSV, TSV or JSON Lines, read by ``bibi.files``):

* blind dev set: ``id`` (the example's id) and the answer;
* pair items: ``text`` (or ``sentence``) and ``question``, and the answer.

The answer is ``answer`` (its text), or ``start`` and ``end`` (character offsets into the
sentence, end exclusive), or all three (the text must then be the sentence's characters
there). A text without offsets is placed in the sentence by the rule gold answers are
(``span_answers.answer_offsets``: whole words, the occurrence nearest the item's predicate
on the blind dev set); one that occurs twice with none nearer the predicate (or, on a pair
item, which names no predicate, twice at all) is refused: give its offsets. One that is not
a whole-word span is kept as text (right or wrong by its text, and wrong under the overlap
rules, which compare offsets). Every item must be
answered exactly once; otherwise every problem is listed and nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from bibi.files import Row, RowErrors
from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.systems.reported import (
    PredictionsFile,
    predictions_recorded,
    row_file,
    row_place,
    sentence_as_text,
    version_to_write,
)
from bibi.systems.selectors import dataset_examples, span_dev_scores
from bibi.systems.span_answers import SpanAnswer, answer_offsets
from bibi.tasktypes.items import item_key
from bibi.tasktypes.span_extraction.answers import predicate_anchor
from bibi.uploads import upload_digest


@dataclass(frozen=True)
class SpanCell:
    """One answered item: its example (blind dev) or None (a pair item)."""

    example: Example | None
    text: str
    question: str
    answer: SpanAnswer


def span_answer_read(
    fields: dict[str, str], sentence: str, *, anchor: tuple[int, int] | None = None
) -> tuple[SpanAnswer | None, str]:
    """The row's answer to ``sentence``, or why it cannot be taken. ``anchor``: the
    predicate's span (blind dev items name their predicate), which a text answer is placed
    nearest to (``answer_offsets``)."""
    text = fields.get("answer")
    raw_start, raw_end = (fields.get("start") or "").strip(), (fields.get("end") or "").strip()
    if not raw_start and not raw_end:
        if text is None or not text.strip():
            return None, "there is no answer: give 'answer', or 'start' and 'end'"
        found, ambiguous = answer_offsets(sentence, text, anchor=anchor)
        if ambiguous:
            return None, ambiguous.replace("give its offsets", "give 'start' and 'end'")
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
) -> tuple[list[SpanCell], int]:
    """Every expected item answered, and the number of repeats; or ``rejected`` with every
    problem. An item answered again with the same span is a repeat, counted once; with another
    span it is refused, both lines named.

    expected: row key → (example, sentence, question); ``key_of`` reads a row's key (None:
    the row does not say which item it answers); ``named`` says what a key is, in messages.
    """
    errors = RowErrors()
    seen: dict[str, tuple[str, SpanAnswer]] = {}  # key -> (where first answered, the answer)
    cells: list[SpanCell] = []
    repeats = 0
    for row in rows:
        place = row_place(row)
        key = None if row.error else key_of(row.fields)
        if row.error or key is None or key not in expected:
            errors.add(row.line, place + _unnamed(row, key, named))
            continue
        example, sentence, question = expected[key]
        anchor = predicate_anchor(sentence, example.predicate_index) if example else None
        answer, problem = span_answer_read(row.fields, sentence, anchor=anchor)
        if answer is None:
            errors.add(row.line, place + problem)
            continue
        if key in seen:
            first, first_answer = seen[key]
            if answer != first_answer:
                errors.add(
                    row.line,
                    f"{place}{key[:80]!r} is answered {answer.text!r} here but "
                    f"{first_answer.text!r} on {first}",
                )
            else:
                repeats += 1
            continue
        seen[key] = (f"line {row.line}" + (f" of {row_file(row)}" if place else ""), answer)
        cells.append(SpanCell(example, sentence, question, answer))
    for key in expected:
        if key not in seen:
            errors.add(0, f"no prediction for {key[:80]!r}")
    if errors:
        raise rejected(errors)
    return cells, repeats


def _unnamed(row: Row, key: str | None, named: str) -> str:
    """Why ``row`` (naming ``key``) answers no item to predict."""
    if row.error:
        return row.error
    if key is None:
        return f"the row does not say which item it answers ({named})"
    return f"{key[:80]!r} is not one of the items to predict"


def span_prediction_rows(
    version: SystemVersion, source: str, cells: list[SpanCell]
) -> list[Prediction]:
    """The predictions to store, one per cell key (items that share a sentence and question,
    two predicates of one verb, share a cell: the first answer is kept)."""
    rows: dict[str, Prediction] = {}
    for cell in cells:
        digest = item_key((cell.text, cell.question))
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


def _span_cells(
    file: PredictionsFile, *, shared_task: SharedTask, source: str
) -> tuple[list[SpanCell], int]:
    """Every item of ``source`` with its answer and the number of repeated rows, or
    ``PredictionsRejected``."""
    if source == Prediction.Source.BLIND_DEV:
        examples = dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
        return span_predicted_cells(
            file.rows(),
            expected={e.external_id: (e, e.text, e.question) for e in examples},
            key_of=lambda fields: (fields.get("id") or "").strip() or None,
            named="id",
            rejected=file.rejected,
        )
    rows = sentence_as_text(file.rows, rejected=file.rejected)
    items = pair_selectors.pair_items(shared_task=shared_task)
    return span_predicted_cells(
        rows(),
        expected={_item_key(text, question): (None, text, question) for text, question in items},
        key_of=lambda fields: (
            _item_key(fields["text"], fields["question"])
            if "text" in fields and "question" in fields
            else None
        ),
        named="text and question",
        rejected=file.rejected,
    )


def _item_key(text: str, question: str) -> str:
    return json.dumps([text, question], ensure_ascii=False)


@transaction.atomic
def _span_predictions_write(
    *,
    system: System,
    actor: AbstractBaseUser,
    filename: str,
    source: str,
    cells: list[SpanCell],
    digest: str,
) -> SystemVersion:
    """``_predictions_write`` for a span task's answers."""
    version = version_to_write(
        system=system, actor=actor, filename=filename, source=source, digest=digest
    )
    rows = span_prediction_rows(version, source, cells)
    Prediction.objects.bulk_create(rows, batch_size=2000)
    if source == Prediction.Source.BLIND_DEV:
        # One function with the hosted versions' dev scores (spanworker's, from the cells).
        span_dev_scores(shared_task=system.shared_task, cells=rows).set_on(version)
    return predictions_recorded(version, source=source, digest=digest)


def span_predictions_upload(
    *,
    system: System,
    actor: AbstractBaseUser,
    file: PredictionsFile,
    data: bytes,
    source: str,
    label_map: dict[str, str] | None = None,
) -> SystemVersion:
    """Check and store a span task's answers (``system_predictions_upload``): its dev scores
    are answer accuracy under the task's answer mode and mean token F1."""
    cells, repeats = _span_cells(file, shared_task=system.shared_task, source=source)
    digest = upload_digest(data, source=source, label_map=None)
    version = _span_predictions_write(
        system=system,
        actor=actor,
        filename=file.filename,
        source=source,
        cells=cells,
        digest=digest,
    )
    version.repeated_predictions = repeats
    return version
