"""Gold answer spans as files give them: read, located in their sentence, checked.

An answer is stored as ``{"start": s, "end": e, "text": t}`` with ``t == sentence[s:e]``
(character offsets, end exclusive): on ``Example.answers`` and on a pair's
``original_answers`` / ``variant_answers``. Files give answers in one field, ``answers``:

* a JSON list (JSON Lines files, or a CSV cell that holds one): each element either the
  answer's text, or an object with ``start`` and ``end`` (and optionally ``text``, which must
  then be the sentence's characters there);
* otherwise texts separated by `` ### `` (as the QA-SRL files write several answers).

An answer given as text is located in its sentence by whole words (``answer_locate``, the
one rule of every path: imports, pairs, predictions, the form), nearest the predicate where
the item names one, and refused when it is not a run of whole words there ("Augustu" of
"Augustus") or is ambiguous (two occurrences, none nearer the predicate). A sentence without
answers is refused too.

    >>> answers_read("UCD ### the final", "UCD beat them in the final .")
    ([{'start': 0, 'end': 3, 'text': 'UCD'}, {'start': 17, 'end': 26, 'text': 'the final'}], [])
    >>> answers_read('[{"start": 0, "end": 3}]', "UCD won .")
    ([{'start': 0, 'end': 3, 'text': 'UCD'}], [])
    >>> answers_read("Dublin", "UCD won .")[1]
    ["the answer 'Dublin' is not a span of the sentence"]
    >>> answers_read("Augustu", "Augustus won .")[1]
    ["the answer 'Augustu' is not a span of the sentence: it is only part of a word there"]
"""

from __future__ import annotations

import json
from typing import Any

from fim_engine.answer_spans import NOT_A_SPAN, locate_span, token_spans

ANSWER_SEPARATOR = " ### "


def predicate_anchor(sentence: str, predicate_index: int | None) -> tuple[int, int] | None:
    """The character span of the predicate's token (tokens split on whitespace), the anchor
    a QA-SRL answer is placed nearest to; None without a (valid) index."""
    spans = token_spans(sentence)
    if predicate_index is None or not 0 <= predicate_index < len(spans):
        return None
    return spans[predicate_index]


def answer_locate(
    sentence: str, text: str, *, anchor: tuple[int, int] | None = None
) -> tuple[dict[str, Any] | None, str]:
    """The span of the answer ``text`` in ``sentence``, or None and why.

    The one rule for every answer given as text (an examples file's, a pair's variant
    answers, a self-reported prediction, the form): ``fim_engine.qasrl.locate_span``, which
    the QA-SRL readers use too. Whole words only (whitespace between them free), with their
    case, ignoring case only where the words are nowhere with it; of several occurrences the
    one nearest ``anchor`` (the predicate), and without one, or with two equally near, the
    answer is ambiguous and refused.

        >>> answer_locate("Then he FOUNDED it", "he")
        ({'start': 5, 'end': 7, 'text': 'he'}, '')
        >>> answer_locate("he said he would", "he")[1]
        "the answer 'he' occurs 2 times in the sentence: give its offsets"
    """
    span, why = locate_span(sentence, text, anchor)
    if span is None:
        return None, f"the answer {text.strip()!r} {why}"
    start, end = span
    return {"start": start, "end": end, "text": sentence[start:end]}, ""


def answer_locate_once(sentence: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """``answer_locate`` for a breaker who types the variant's answer instead of selecting
    it: the answer must name one span of the variant, not the first of several.

        >>> answer_locate_once("he said he would", "he")[1]
        "the answer 'he' occurs 2 times in the variant sentence: select the one you mean"
    """
    if not text.strip():
        return None, "there is no answer"
    answer, problem = answer_locate(sentence, text)
    problem = problem.replace(NOT_A_SPAN, "is not in the variant sentence", 1)
    problem = problem.replace("in the sentence", "in the variant sentence", 1)
    return answer, problem.replace("give its offsets", "select the one you mean")


def _answer_from_offsets(value: dict[str, Any], sentence: str) -> tuple[dict[str, Any] | None, str]:
    start, end = value.get("start"), value.get("end")
    if not isinstance(start, int) or not isinstance(end, int) or isinstance(start, bool):
        return None, f"the answer {value!r} needs whole-number 'start' and 'end' offsets"
    if not 0 <= start < end <= len(sentence):
        return None, (
            f"the answer offsets {start}-{end} are not a span of the sentence "
            f"(0 <= start < end <= {len(sentence)})"
        )
    text = sentence[start:end]
    given = value.get("text")
    if given is not None and str(given) != text:
        return (
            None,
            f"the answer text {given!r} is not the sentence's text {text!r} at {start}-{end}",
        )
    return {"start": start, "end": end, "text": text}, ""


def _answer_values(raw: str) -> list[Any] | str:
    """The answers the field gives, or why they cannot be read."""
    stripped = raw.strip()
    if stripped.startswith("["):
        try:
            values = json.loads(stripped)
        except json.JSONDecodeError as error:
            return f"the answers are not a readable JSON list ({error.msg})"
        if not isinstance(values, list):
            return "the answers are not a JSON list"
        return values
    return [part for part in stripped.split(ANSWER_SEPARATOR.strip()) if part.strip()]


def answers_read(
    raw: str | None,
    sentence: str,
    *,
    max_answers: int | None = None,
    anchor: tuple[int, int] | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """The answers of one field located in ``sentence``, and every problem found.

    Returns ``(answers, problems)``; the answers are meaningful only without problems.
    Repeated spans are kept once. More than ``max_answers`` given (repeats counted) is one
    problem, found before any is located.
    """
    if raw is None or not raw.strip():
        return [], ["there is no answer: a span item needs at least one"]
    values = _answer_values(raw)
    if isinstance(values, str):
        return [], [values]
    if max_answers is not None and len(values) > max_answers:
        return [], [f"{len(values)} answers are given; a span item takes at most {max_answers}"]
    answers: list[dict[str, Any]] = []
    problems: list[str] = []
    for value in values:
        if isinstance(value, dict):
            answer, problem = _answer_from_offsets(value, sentence)
        elif isinstance(value, str):
            answer, problem = answer_locate(sentence, value, anchor=anchor)
        else:
            answer, problem = None, f"the answer {value!r} is neither a text nor an object"
        if answer is None:
            problems.append(problem)
        elif answer not in answers:
            answers.append(answer)
    if not answers and not problems:
        problems.append("there is no answer: a span item needs at least one")
    return answers, problems


def answers_text(answers: list[dict[str, Any]]) -> str:
    """The answers as one field of a file: their texts joined by `` ### ``."""
    return ANSWER_SEPARATOR.join(str(answer["text"]) for answer in answers)
