"""A span task's sentence with its answer spans marked, over the word diff when there is one.

Each piece of the text says whether the diff changed it (``bibi.web.diff``) and whether it
lies in an answer span; overlapping answers are marked as one. A piece says where a change
or a mark opens and closes, so that the template writes the hidden words for screen readers
("[removed: ", "[answer: ", "]") once per run, and a mark drawn across a changed word keeps
both.

    >>> [(p.text, p.mark) for p in answer_marks("UCD beat them", [{"start": 0, "end": 3}])]
    [('UCD', True), (' beat them', False)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from bibi.web.diff import Part


@dataclass(frozen=True)
class Piece:
    text: str
    change: str  # as Part.change: "", "removed" or "added"
    change_opens: bool
    change_closes: bool
    mark: bool
    mark_opens: bool
    mark_closes: bool


def _spans(answers: Iterable[Any]) -> list[tuple[int, int]]:
    """Answers (``{"start", "end"}`` dicts or ``[start, end]`` pairs) as (start, end)."""
    spans = []
    for answer in answers:
        if answer is None:
            continue
        start, end = (answer["start"], answer["end"]) if isinstance(answer, dict) else answer
        if isinstance(start, int) and isinstance(end, int) and start < end:
            spans.append((start, end))
    return spans


def marked_parts(parts: Sequence[Part], answers: Iterable[Any]) -> list[Piece]:
    """The diff's ``parts`` of one sentence cut where answer spans begin and end."""
    spans = _spans(answers)
    inside = [False] * sum(len(part.text) for part in parts)
    for start, end in spans:
        for i in range(max(start, 0), min(end, len(inside))):
            inside[i] = True
    pieces: list[tuple[str, str, bool, int]] = []  # text, change, mark, index of its part
    offset = 0
    for index, part in enumerate(parts):
        cut = offset
        for i in range(offset + 1, offset + len(part.text) + 1):
            if i == offset + len(part.text) or inside[i] != inside[i - 1]:
                pieces.append(
                    (part.text[cut - offset : i - offset], part.change, inside[cut], index)
                )
                cut = i
        offset += len(part.text)
    out = []
    for i, (text, change, mark, index) in enumerate(pieces):
        before = pieces[i - 1] if i > 0 else None
        after = pieces[i + 1] if i + 1 < len(pieces) else None
        out.append(
            Piece(
                text=text,
                change=change,
                change_opens=before is None or before[3] != index,
                change_closes=after is None or after[3] != index,
                mark=mark,
                mark_opens=mark and (before is None or not before[2]),
                mark_closes=mark and (after is None or not after[2]),
            )
        )
    return out


def answer_marks(text: str, answers: Iterable[Any]) -> list[Piece]:
    """``text`` (no diff) with ``answers`` marked."""
    return marked_parts([Part(text, "")], answers)
