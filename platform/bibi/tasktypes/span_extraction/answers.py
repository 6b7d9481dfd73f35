"""Gold answer spans as files give them: read, located in their sentence, checked.

An answer is stored as ``{"start": s, "end": e, "text": t}`` with ``t == sentence[s:e]``
(character offsets, end exclusive): on ``Example.answers`` and on a pair's
``original_answers`` / ``variant_answers``. Files give answers in one field, ``answers``:

* a JSON list (JSON Lines files, or a CSV cell that holds one): each element either the
  answer's text, or an object with ``start`` and ``end`` (and optionally ``text``, which must
  then be the sentence's characters there);
* otherwise texts separated by `` ### `` (as the QA-SRL files write several answers).

An answer given as text is located in its sentence: its first occurrence, or failing that
its first occurrence ignoring case (the 2017 TSV upper-cases the predicate). An answer that
is not a span of the sentence is refused with the reason; so is a sentence without answers.

    >>> answers_read("UCD ### the final", "UCD beat them in the final .")
    ([{'start': 0, 'end': 3, 'text': 'UCD'}, {'start': 17, 'end': 26, 'text': 'the final'}], [])
    >>> answers_read('[{"start": 0, "end": 3}]', "UCD won .")
    ([{'start': 0, 'end': 3, 'text': 'UCD'}], [])
    >>> answers_read("Dublin", "UCD won .")[1]
    ["the answer 'Dublin' is not a span of the sentence"]
"""

from __future__ import annotations

import json
from typing import Any

ANSWER_SEPARATOR = " ### "


def answer_locate(sentence: str, text: str) -> dict[str, Any] | None:
    """The span of ``text`` (stripped) in ``sentence``: first exact, then case-folded match."""
    wanted = text.strip()
    if not wanted:
        return None
    start = sentence.find(wanted)
    if start < 0:
        start = sentence.casefold().find(wanted.casefold())
        # Case folding can change lengths (ß -> ss): trust only a same-length match.
        if start < 0 or len(sentence.casefold()) != len(sentence):
            return None
    end = start + len(wanted)
    return {"start": start, "end": end, "text": sentence[start:end]}


def answer_locate_once(sentence: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """The span of ``text`` (stripped) in ``sentence`` when it occurs there exactly once
    (case kept), else None and why: a breaker who types the answer instead of selecting it
    must name one span, not the first of several.

        >>> answer_locate_once("he said he would", "he")[1]
        "the answer 'he' occurs 2 times in the variant sentence: select the one you mean"
    """
    wanted = text.strip()
    if not wanted:
        return None, "there is no answer"
    count = sentence.count(wanted)
    if count == 0:
        return None, f"the answer {wanted!r} is not in the variant sentence"
    if count > 1:
        return None, (
            f"the answer {wanted!r} occurs {count} times in the variant sentence: "
            "select the one you mean"
        )
    start = sentence.find(wanted)
    return {"start": start, "end": start + len(wanted), "text": wanted}, ""


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
    raw: str | None, sentence: str, *, max_answers: int | None = None
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
            answer = answer_locate(sentence, value)
            problem = f"the answer {value.strip()!r} is not a span of the sentence"
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
