"""An original's texts with their words shaded by edit leverage (the guidance's ranking and the
pair editor): each text a breaker may edit, as pieces, a word shaded in ``SHADES`` steps of its
share of the item's largest leverage, the text between words as it is.

    >>> [(p.text, p.shade) for p in shaded_texts(kind, example, words)[0].pieces]
    [('the film is ', None), ('good', 4)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bibi.guidance.ranking import RankedOriginal
from bibi.guidance.words import WordLeverage

# Words are shaded in this many steps of their share of the item's largest leverage.
SHADES = 4


@dataclass(frozen=True)
class Piece:
    """A piece of a text: a word with its shade (1..SHADES, 0 for none) and its leverage, or
    the text between words (shade None)."""

    text: str
    shade: int | None
    leverage: float | None = None


@dataclass(frozen=True)
class ShadedText:
    """One text of an item (``field``, its ``title``) as shaded ``pieces``."""

    field: str
    title: str
    text: str
    pieces: list[Piece]


def shaded_texts(kind: Any, example: Any, words: Sequence[WordLeverage]) -> list[ShadedText]:
    """Each text of ``example`` (of the task type ``kind``) a breaker may edit under some
    setting (a fixed text, a span item's question, is the type's fragments' to show), in
    segment order, with the ``words`` of that text shaded; without words, the text whole."""
    top = max((word.leverage or 0.0 for word in words), default=0.0)
    texts = []
    for segment, text in zip(kind.segments, kind.item(example), strict=True):
        if segment.editable is False:
            continue
        pieces, cursor = [], 0
        for word in (word for word in words if word.segment == segment.field):
            if word.start > cursor:
                pieces.append(Piece(text[cursor : word.start], None))
            shade = round(SHADES * (word.leverage or 0.0) / top) if top > 0 else 0
            pieces.append(Piece(word.text, shade, word.leverage))
            cursor = word.end
        if cursor < len(text):
            pieces.append(Piece(text[cursor:], None))
        texts.append(ShadedText(segment.field, segment.title, text, pieces))
    return texts


def top_words(original: RankedOriginal, count: int = 3) -> list[WordLeverage]:
    """The words with the most leverage (the shading's text alternative)."""
    words = [word for word in original.words if word.leverage]
    return sorted(words, key=lambda word: -(word.leverage or 0.0))[:count]
