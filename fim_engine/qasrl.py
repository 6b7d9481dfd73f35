"""Readers of the two QA-SRL formats into one record type (pure Python: no torch, no Django).

* the ``.qa`` block format of He et al. (2015): a block per sentence (``SENT_ID<TAB>predicates``,
  the tokenized sentence, then per predicate ``index<TAB>verb<TAB>questions`` and that many
  lines of seven question slots, ``?`` and the answers separated by `` ### ``);
* the 2017 shared task's TSV: ``#id, prefix, predicate, suffix, question, answer``, where the
  sentence is ``prefix PREDICATE suffix`` with the predicate upper-cased; the reader gives the
  predicate back its case in the sentence (:func:`predicate_case`).

Every question becomes a :class:`QasrlRecord`; the sentence text is its tokens joined by single
spaces and every answer becomes character offsets into that text (:func:`locate_answer`). An
answer that is not a span of its sentence is kept as text in ``unmatched_answers`` and reported
as an :class:`AnswerNotFoundError` naming its line. Structural problems (a wrong field count, a
count that does not match what follows, a token index out of range, an id or question that does
not parse) are errors too; the block or row at fault yields no record. Readers collect every
error (:class:`QasrlReading`) so an import can list them all; ``reading.raise_first()`` raises.

Example:
    >>> reading = read_qa("../shared/data/qasrl/wiki1.dev.qa")
    >>> record = reading.records[0]
    >>> record.question, record.answers[0].text
    ('what might be oxygenated?', 'areas of the Baltic that have experienced eutrophication')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from fim_engine.answer_spans import locate_span, predicate_case

SLOTS = ("wh", "aux", "subj", "verb", "obj", "prep", "obj2")
EMPTY_SLOT = "_"
ANSWER_SEPARATOR = " ### "
TSV_HEADER = ("#id", "prefix", "predicate", "suffix", "question", "answer")


class QasrlFormatError(ValueError):
    """A line of a QA-SRL file that cannot be read; ``line`` is 1-based, ``source`` the file."""

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}, line {line}: {problem}")
        self.source = source
        self.line = line
        self.problem = problem


class FieldCountError(QasrlFormatError):
    """A line with the wrong number of TAB-separated fields."""


class CountMismatchError(QasrlFormatError):
    """A declared number of predicates or questions that the following lines do not match."""


class TokenIndexError(QasrlFormatError):
    """A predicate index that is not a token of its sentence, or not the predicate's token
    (compared ignoring case, as the 2017 organizers' conversion script checks)."""


class AnswerNotFoundError(QasrlFormatError):
    """An answer that is not a span of its sentence."""


class MalformedFieldError(QasrlFormatError):
    """A field that does not parse: a count, an id, a question, a header."""


@dataclass(frozen=True)
class Answer:
    """An answer span: ``text == sentence_text[start:end]`` (character offsets, end exclusive)."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class QasrlRecord:
    """One question about one predicate of one sentence, with every gold answer.

    ``record_id`` is ``SENT_ID.predicate.question`` (the ordinals in the sentence's block, as
    the 2017 TSV ids are). ``question_slots`` are the seven slots with ``""`` for an empty one;
    ``question`` is the filled slots joined by spaces, then ``?``. ``unmatched_answers`` are
    the given answers that are not spans of the sentence (each reported as an error).
    """

    record_id: str
    sentence_id: str
    tokens: tuple[str, ...]
    text: str
    predicate_index: int
    predicate: str
    question_slots: tuple[str, ...]
    question: str
    answers: tuple[Answer, ...]
    line: int
    unmatched_answers: tuple[str, ...] = ()


@dataclass
class QasrlReading:
    """What a reader found: the records in file order and every error, in line order."""

    records: list[QasrlRecord] = field(default_factory=list)
    errors: list[QasrlFormatError] = field(default_factory=list)
    # The 2017 TSV: the lines whose upper-cased predicate was given its case back.
    restored_case: list[int] = field(default_factory=list)

    def raise_first(self) -> None:
        """Raise the first error, if any."""
        if self.errors:
            raise self.errors[0]


def question_text(slots: Iterable[str]) -> str:
    """The readable question: the filled slots joined by spaces, then ``?``.

    >>> question_text(["who", "", "", "beat", "someone", "", ""])
    'who beat someone?'
    """
    return " ".join(slot for slot in slots if slot) + "?"


def token_starts(tokens: Iterable[str]) -> list[int]:
    """Character offset of each token in the tokens joined by single spaces."""
    starts, position = [], 0
    for token in tokens:
        starts.append(position)
        position += len(token) + 1
    return starts


def locate_answer(
    tokens: tuple[str, ...], answer: str, predicate_index: int
) -> tuple[int, int] | None:
    """Character offsets of ``answer`` in ``" ".join(tokens)`` (``locate_span`` anchored on
    the predicate's token), or None if it is not a span there or is ambiguous.

    >>> locate_answer(("Hezbollah", "killed", "three", "soldiers"), "three soldiers", 1)
    (17, 31)
    """
    text = " ".join(tokens)
    return locate_span(text, answer, _token_anchor(tokens, predicate_index))[0]


def _token_anchor(tokens: tuple[str, ...], index: int) -> tuple[int, int] | None:
    if not 0 <= index < len(tokens):
        return None
    start = token_starts(tokens)[index]
    return start, start + len(tokens[index])


def _answers(
    tokens: tuple[str, ...], given: str, predicate_index: int, errors: _Errors, line: int
) -> tuple[tuple[Answer, ...], tuple[str, ...]]:
    text = " ".join(tokens)
    found: list[Answer] = []
    unmatched: list[str] = []
    anchor = _token_anchor(tokens, predicate_index)
    for answer in given.split(ANSWER_SEPARATOR):
        span, why = locate_span(text, answer, anchor)
        if span is None:
            unmatched.append(answer)
            errors.add(AnswerNotFoundError, line, f"answer {answer!r} {why}")
        else:
            found.append(Answer(span[0], span[1], text[span[0] : span[1]]))
    return tuple(found), tuple(unmatched)


class _Errors:
    def __init__(self, reading: QasrlReading, source: str) -> None:
        self.reading = reading
        self.source = source

    def add(self, kind: type[QasrlFormatError], line: int, problem: str) -> None:
        self.reading.errors.append(kind(self.source, line, problem))


class _BlockError(Exception):
    """Raised inside a block to abandon it after its error was recorded."""


def _start(source: str | Path | Iterable[str]) -> tuple[list[str], QasrlReading, _Errors]:
    """The source's lines, an empty reading, and the error list that names the source."""
    if isinstance(source, str | Path):
        path = Path(source)
        name, lines = path.name, path.read_text(encoding="utf-8").splitlines()
    else:
        name, lines = "<input>", [line.rstrip("\r\n") for line in source]
    reading = QasrlReading()
    return lines, reading, _Errors(reading, name)


def _count(value: str, what: str, errors: _Errors, line: int) -> int:
    if not value.isdigit():
        errors.add(MalformedFieldError, line, f"{what} must be a whole number, got {value!r}")
        raise _BlockError
    return int(value)


def _fields(raw: str, count: int, what: str, errors: _Errors, line: int) -> list[str]:
    fields = raw.split("\t")
    if len(fields) != count:
        errors.add(
            FieldCountError,
            line,
            f"{what} needs {count} TAB-separated fields, found {len(fields)}",
        )
        raise _BlockError
    return fields


def read_qa(source: str | Path | Iterable[str]) -> QasrlReading:
    """Read the ``.qa`` block format (a path, or an iterable of lines).

    Example:
        >>> len(read_qa("../shared/data/qasrl/wiki1.dev.qa").records)
        2183
    """
    lines, reading, errors = _start(source)
    for start, block in _blocks(lines):
        try:
            reading.records.extend(_read_block(block, start, errors))
        except _BlockError:
            continue
    return reading


def _blocks(lines: list[str]) -> Iterator[tuple[int, list[str]]]:
    """Runs of non-blank lines with the 1-based number of their first line."""
    block: list[str] = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            block.append(line)
            continue
        if block:
            yield number - len(block), block
        block = []
    if block:
        yield len(lines) + 1 - len(block), block


def _read_block(block: list[str], start: int, errors: _Errors) -> list[QasrlRecord]:
    sentence_id, declared = _fields(block[0], 2, "a sentence header", errors, start)
    num_predicates = _count(declared, "the number of predicates", errors, start)
    if len(block) < 2:
        errors.add(CountMismatchError, start, f"sentence {sentence_id} has no token line")
        raise _BlockError
    tokens = tuple(block[1].split())
    records: list[QasrlRecord] = []
    row = 2
    for ordinal in range(num_predicates):
        if row >= len(block):
            errors.add(
                CountMismatchError,
                start + row,
                f"sentence {sentence_id} declares {num_predicates} predicates, found {ordinal}",
            )
            raise _BlockError
        found, asked = _read_predicate(
            block, (start, row), f"{sentence_id}.{ordinal}", tokens, errors
        )
        records.extend(found)
        row += 1 + asked
    if row < len(block):
        errors.add(
            CountMismatchError,
            start + row,
            f"sentence {sentence_id} declares {num_predicates} predicates but more lines follow",
        )
        raise _BlockError
    return records


def _read_predicate(
    block: list[str],
    where: tuple[int, int],
    prefix: str,
    tokens: tuple[str, ...],
    errors: _Errors,
) -> tuple[list[QasrlRecord], int]:
    """The records of the predicate whose line is ``block[row]`` (``where = (start, row)``),
    and the number of question lines it declares (a bad one yields no record)."""
    start, row = where
    line = start + row
    index, verb, asked = _fields(block[row], 3, "a predicate line", errors, line)
    predicate_index = _count(index, "the predicate's token index", errors, line)
    if predicate_index >= len(tokens):
        errors.add(
            TokenIndexError,
            line,
            f"predicate index {predicate_index} is out of range: the sentence has "
            f"{len(tokens)} tokens",
        )
        raise _BlockError
    if verb.casefold() != tokens[predicate_index].casefold():
        errors.add(
            TokenIndexError,
            line,
            f"token {predicate_index} is {tokens[predicate_index]!r}, not the predicate {verb!r}",
        )
        raise _BlockError
    num_questions = _count(asked, "the number of questions", errors, line)
    for number in range(num_questions):
        at = row + 1 + number
        if at >= len(block) or block[at].count("\t") == 2:
            errors.add(
                CountMismatchError,
                line,
                f"predicate {verb!r} declares {num_questions} questions, found {number}",
            )
            raise _BlockError
    records = []
    for number, raw in enumerate(block[row + 1 : row + 1 + num_questions]):
        # A bad question line loses that question only: the block's other questions (and
        # their problems) are still read, so one reading lists every problem.
        at = line + 1 + number
        fields = raw.split("\t")
        slots = tuple("" if slot == EMPTY_SLOT else slot for slot in fields[:7])
        problem = _question_problem(fields, slots)
        if problem:
            kind = FieldCountError if len(fields) != 9 else MalformedFieldError
            errors.add(kind, at, problem)
            continue
        records.append(
            _record(
                f"{prefix}.{number}", tokens, (predicate_index, verb), slots, fields[8], errors, at
            )
        )
    return records, num_questions


# The eighth field of a question line as released: ``?``, or ``_`` (an empty slot's mark,
# as some released files have it) where the seven slots still make a question.
QUESTION_MARKS = ("?", EMPTY_SLOT)


def _question_problem(fields: list[str], slots: tuple[str, ...]) -> str:
    """Why a ``.qa`` question line cannot be read ('' when it can)."""
    if len(fields) != 9:
        return f"a question line needs 9 TAB-separated fields, found {len(fields)}"
    if fields[7] not in QUESTION_MARKS:
        return f"the eighth field must be '?' (or '_'), got {fields[7]!r}"
    if not slots[0] or not slots[3]:
        return "the question has no wh-word or no verb (slots 1 and 4): it cannot be read"
    return ""


def _record(
    record_id: str,
    tokens: tuple[str, ...],
    predicate: tuple[int, str],
    slots: tuple[str, ...],
    given: str,
    errors: _Errors,
    line: int,
) -> QasrlRecord:
    answers, unmatched = _answers(tokens, given, predicate[0], errors, line)
    return QasrlRecord(
        record_id=record_id,
        sentence_id=record_id.rsplit(".", 2)[0],
        tokens=tokens,
        text=" ".join(tokens),
        predicate_index=predicate[0],
        predicate=predicate[1],
        question_slots=slots,
        question=question_text(slots),
        answers=answers,
        line=line,
        unmatched_answers=unmatched,
    )


_TSV_ID = re.compile(r"(?P<sentence>.+)\.(?P<predicate>\d+)\.(?P<question>\d+)")


def read_tsv(source: str | Path | Iterable[str]) -> QasrlReading:
    """Read the 2017 shared task's TSV format (a path, or an iterable of lines).

    The sentence is rebuilt as the prefix's tokens, the predicate as given (upper-cased in the
    2017 files), then the suffix's tokens; the question's seven slots come back from its
    space-separated form (``~`` joins the words of one slot, ``_`` is an empty slot).

    Example:
        >>> len(read_tsv("../shared/data/qasrl/wiki1.dev.tsv").records)
        1719
    """
    lines, reading, errors = _start(source)
    if not lines or tuple(lines[0].split("\t")) != TSV_HEADER:
        errors.add(MalformedFieldError, 1, f"the header must be {chr(9).join(TSV_HEADER)!r}")
        return reading
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            reading.records.append(_read_row(raw, number, errors))
        except _BlockError:
            continue
    return reading


def _read_row(raw: str, line: int, errors: _Errors) -> QasrlRecord:
    record_id, prefix, predicate, suffix, question, given = _fields(raw, 6, "a row", errors, line)
    if _TSV_ID.fullmatch(record_id) is None:
        errors.add(
            MalformedFieldError,
            line,
            f"id {record_id!r} must be SENT_ID.predicate.question (e.g. WIKI1_4.0.1)",
        )
        raise _BlockError
    if len(predicate.split()) != 1:
        errors.add(MalformedFieldError, line, f"predicate {predicate!r} must be one token")
        raise _BlockError
    words = question.split(" ")
    if len(words) != 8 or words[7] not in QUESTION_MARKS:
        errors.add(
            MalformedFieldError,
            line,
            f"question {question!r} must be seven space-separated slots and '?'",
        )
        raise _BlockError
    before = prefix.split()
    written = predicate_case(
        predicate.strip(), previous=before[-1] if before else "", answers=given
    )
    if written != predicate.strip():
        errors.reading.restored_case.append(line)
    tokens = (*before, written, *suffix.split())
    slots = tuple("" if w == EMPTY_SLOT else w.replace("~", " ") for w in words[:7])
    return _record(record_id, tokens, (len(before), written), slots, given, errors, line)


def read_qasrl(path: str | Path) -> QasrlReading:
    """Read a QA-SRL file by its suffix: ``.tsv`` as the 2017 TSV, anything else as ``.qa``."""
    return read_tsv(path) if Path(path).suffix.lower() == ".tsv" else read_qa(path)
