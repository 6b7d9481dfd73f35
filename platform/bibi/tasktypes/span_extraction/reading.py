"""Reading and checking the examples of a span task (QA-SRL: sentence + question -> spans).

``SpanExtraction.examples_read`` and ``examples_check`` read and check a span task's file
(``sharedtasks.importing`` writes what passes, all or nothing, as for labels). Formats (``SPAN_FORMATS``):

* ``qa``: the QA-SRL block format of He et al. (2015), read by ``fim_engine.qasrl.read_qa``;
* ``qasrl_tsv``: the 2017 shared task's TSV (header ``#id prefix predicate suffix question
  answer``), read by ``fim_engine.qasrl.read_tsv``; a ``.tsv`` file with that header is read
  this way without being asked. The TSV writes the predicate in capitals to mark it; the
  reader gives it the sentence's case back (``fim_engine.answer_spans.predicate_case``: lower case,
  capitalised at the start of the sentence or a quotation, or as an answer holding it writes
  it), so that no original, and so no variant, shows the marker; the import reports how many;
* ``csv``, ``tsv``, ``jsonl``: one item per row with the fields ``id``, ``text`` (the
  sentence), ``question``, ``answers`` (``bibi.tasktypes.span_extraction.answers``) and optionally
  ``predicate_index`` (the predicate's token index, tokens split on whitespace) and
  ``predicate`` (the verb).

Every answer of a QA-SRL item is kept, placed by whole words nearest the predicate
(``answers.answer_locate``'s rule, shared with ``fim_engine.qasrl``: ``fim_engine.answer_spans``). A question line whose
eighth field is ``_`` rather than ``?`` (as a released file has some) is read; a line that
cannot be read is refused on its own, the block's other questions still read, so one import
names every problem. An answer that is not a span of its sentence refuses
the file with its line, like every other problem, unless the import is asked to drop such
answers (``drop_unmatched``; the shared QA-SRL data has a few answers written with curly
quotes where the sentence has straight ones): they are then left out and reported, and so
is an item left with no answer. The 2017 TSV repeats some rows: a row equal to an
earlier one (same id, sentence, question and answers) is skipped and reported; the same id
with anything else is refused. The same sentence and question under two ids (two predicates
with one verb) are two examples that share one cell of the prediction matrix
(``bibi.tasktypes.items.item_key``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from bibi.files import (
    FORMAT_BY_EXTENSION,
    FileFormatError,
    RowError,
    RowErrors,
    decode_upload,
    iter_rows,
)
from bibi.tasktypes.examples import EXTERNAL_ID_MAX_LENGTH, ExamplesChecked, ExistingExamples
from bibi.tasktypes.span_extraction.answers import answers_read, predicate_anchor
from bibi.texts import text_problems
from fim_engine.qasrl import TSV_HEADER, AnswerNotFoundError, QasrlReading, read_qa, read_tsv

SPAN_FORMATS = ("qa", "qasrl_tsv", "csv", "tsv", "jsonl")
# ``Example.predicate``'s length (its model reads it from here).
PREDICATE_MAX_LENGTH = 100


@dataclass(frozen=True)
class SpanRow:
    """One item as the file gives it, before the checks against the dataset."""

    line: int
    external_id: str
    text: str
    question: str
    predicate_index: int | None
    predicate: str
    answers: list[dict[str, Any]]


@dataclass
class SpanReading:
    """What a span file holds: its items, the answers dropped (line, answer), the items
    dropped for want of an answer (lines), the rows skipped as repeats (line, line repeated)
    and every problem."""

    rows: list[SpanRow] = field(default_factory=list)
    dropped: list[tuple[int, str]] = field(default_factory=list)
    dropped_items: list[int] = field(default_factory=list)
    repeated: list[tuple[int, int]] = field(default_factory=list)
    errors: RowErrors = field(default_factory=RowErrors)
    # The 2017 TSV's lines whose upper-cased predicate got the sentence's case back.
    restored_case: list[int] = field(default_factory=list)
    # The decoded file (a partial import quotes its refused lines from it).
    text: str = ""


def span_format(filename: str, requested: str | None, text: str) -> str:
    """The format to read a span file in: ``requested``, else from the name (and header)."""
    if requested:
        wanted = requested.strip().lower()
        if wanted not in SPAN_FORMATS:
            raise FileFormatError(
                f"'{requested}' is not a span file format: use one of {', '.join(SPAN_FORMATS)}"
            )
        return wanted
    suffix = PurePath(filename).suffix.lower()
    if suffix == ".qa":
        return "qa"
    if suffix in (".tsv", ".tab") and tuple(text.split("\n", 1)[0].rstrip("\r").split("\t")) == (
        TSV_HEADER
    ):
        return "qasrl_tsv"
    if FORMAT_BY_EXTENSION.get(suffix) in SPAN_FORMATS:
        return FORMAT_BY_EXTENSION[suffix]
    raise FileFormatError(
        f"cannot tell the format of '{filename}' from its name: name it .qa, .tsv, .csv or "
        f".jsonl, or say which of {', '.join(SPAN_FORMATS)} it is in"
    )


def span_file_read(
    *, data: bytes, filename: str, file_format: str | None, drop_unmatched: bool
) -> tuple[SpanReading, str, str]:
    """Decode and read a span file: (the reading, its encoding, its format).

    Raises ``FileFormatError`` for a file that cannot be decoded or whose format is unknown.
    """
    decoded = decode_upload(data)
    chosen = span_format(filename, file_format, decoded.text)
    if chosen in ("qa", "qasrl_tsv"):
        reader = read_qa if chosen == "qa" else read_tsv
        lines = decoded.text.replace("\r\n", "\n").split("\n")
        reading = _from_qasrl(reader(lines), drop_unmatched=drop_unmatched)
    else:
        reading = _from_rows(iter_rows(decoded.text, file_format=chosen))
    if not reading.rows and not reading.errors:
        reading.errors.add(0, "the file has no examples")
    reading.text = decoded.text
    return reading, decoded.encoding, chosen


def _from_qasrl(qasrl: QasrlReading, *, drop_unmatched: bool) -> SpanReading:
    reading = SpanReading(restored_case=list(qasrl.restored_case))
    for error in qasrl.errors:
        if not (drop_unmatched and isinstance(error, AnswerNotFoundError)):
            reading.errors.add(error.line, error.problem)
    for record in qasrl.records:
        if record.unmatched_answers and not drop_unmatched:
            continue
        reading.dropped += [(record.line, answer) for answer in record.unmatched_answers]
        answers: list[dict[str, Any]] = []
        for answer in record.answers:
            span = {"start": answer.start, "end": answer.end, "text": answer.text}
            if span not in answers:
                answers.append(span)
        if not answers:
            # Only reached when dropping: the item has nothing left to score against.
            reading.dropped_items.append(record.line)
            continue
        reading.rows.append(
            SpanRow(
                record.line,
                record.record_id,
                record.text,
                record.question,
                record.predicate_index,
                record.predicate,
                answers,
            )
        )
    return reading


def _from_rows(rows: Iterator[Any]) -> SpanReading:
    reading = SpanReading()
    for row in rows:
        if row.error is not None:
            reading.errors.add(row.line, row.error)
            continue
        fields = row.fields
        problems = [
            f"has no '{name}' field"
            for name in ("id", "text", "question", "answers")
            if name not in fields
        ]
        text = (fields.get("text") or "").strip()
        index, index_problem = _predicate_index(fields.get("predicate_index"), text)
        answers, answer_problems = answers_read(
            fields.get("answers"), text, anchor=predicate_anchor(text, index)
        )
        if "answers" in fields:
            problems += answer_problems
        if index_problem:
            problems.append(index_problem)
        if problems:
            reading.errors.extend(RowError(row.line, problem) for problem in problems)
            continue
        reading.rows.append(
            SpanRow(
                row.line,
                fields["id"].strip(),
                text,
                fields["question"].strip(),
                index,
                (fields.get("predicate") or "").strip(),
                answers,
            )
        )
    return reading


def _predicate_index(raw: str | None, text: str) -> tuple[int | None, str]:
    if raw is None or not raw.strip():
        return None, ""
    value = raw.strip()
    tokens = text.split()
    if not value.isdigit() or int(value) >= len(tokens):
        return None, (
            f"the predicate index {value!r} is not a token of the sentence "
            f"(0 to {len(tokens) - 1}, tokens split on spaces)"
        )
    return int(value), ""


def span_examples(reading: SpanReading, *, existing: ExistingExamples) -> ExamplesChecked:
    """The items of ``reading`` checked against each other and the dataset's ids, as
    ``Example`` fields; every problem is in ``errors`` (the examples are then not written)."""
    checked = ExamplesChecked(
        errors=reading.errors,
        dropped_answers=reading.dropped,
        dropped_items=reading.dropped_items,
        repeated_rows=reading.repeated,
        restored_case=reading.restored_case,
    )
    first: dict[str, SpanRow] = {}
    for row in reading.rows:
        problems = _row_problems(row, existing.ids)
        earlier = first.get(row.external_id)
        if earlier is not None:
            if _same_item(earlier, row):
                checked.repeated_rows.append((row.line, earlier.line))
            else:
                checked.errors.add(
                    row.line,
                    f"the id '{row.external_id}' is used twice (first on line {earlier.line})",
                )
            continue
        first[row.external_id] = row
        if problems:
            checked.errors.extend(RowError(row.line, problem) for problem in problems)
            continue
        checked.examples.append(
            {
                "external_id": row.external_id,
                "text": row.text,
                "label": "",
                "question": row.question,
                "predicate_index": row.predicate_index,
                "predicate": row.predicate,
                "answers": row.answers,
            }
        )
    return checked


def _same_item(one: SpanRow, other: SpanRow) -> bool:
    return (one.text, one.question, one.answers) == (other.text, other.question, other.answers)


def _row_problems(row: SpanRow, existing: set[str]) -> list[str]:
    problems: list[str] = []
    if not row.external_id:
        problems.append("the id is empty")
    elif len(row.external_id) > EXTERNAL_ID_MAX_LENGTH:
        problems.append(f"the id is longer than {EXTERNAL_ID_MAX_LENGTH} characters")
    elif row.external_id in existing:
        problems.append(f"the id '{row.external_id}' is already in the dataset")
    for what, value in (("text", row.text), ("question", row.question)):
        if not value:
            problems.append(f"the {what} is empty")
        problems += [f"the {what} {problem}" for problem in text_problems(value)]
    if len(row.predicate) > PREDICATE_MAX_LENGTH:
        problems.append(f"the predicate is longer than {PREDICATE_MAX_LENGTH} characters")
    return problems
