"""Sentence pairs (premise, hypothesis) as inputs, and which of their segments a breaker edits.

An item a :class:`fim_engine.System` scores is a text (``str``) or a :class:`SentencePair`; a
plain ``(premise, hypothesis)`` tuple of two strings is taken as one. ``editable`` says whose
tokens count for λmax, hints, leverage and attributions:

* ``None`` (the default): every token of the item (both segments of a pair), as for texts;
* ``"premise"`` or ``"hypothesis"``: that segment's tokens only; the other segment is fixed
  context (it still feeds the model, but its embeddings are not coordinates of G);
* ``"both"``: both segments, the same as ``None`` for pairs.

A single text has one segment: ``"premise"`` and ``"hypothesis"`` are refused for it.

Words of a pair are numbered premise first, then hypothesis; a result lists the words of the
editable segment(s) only, in that order, and says the segment of each (``word_segments``);
their character spans are offsets into their own segment's string.

Pure Python: the web process can use it without torch.

Example:
    >>> pair = SentencePair("A man plays a guitar.", "Nobody plays music.")
    >>> editable_segments(pair, "hypothesis")
    frozenset({1})
    >>> longest_first(30, 8, 20)
    (12, 8)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

SEGMENTS = ("premise", "hypothesis")
EDITABLE_CHOICES = ("premise", "hypothesis", "both")


class SentencePair(NamedTuple):
    """Two texts classified together, e.g. an NLI premise and hypothesis."""

    premise: str
    hypothesis: str


TextItem = str | SentencePair


def as_item(value: Any) -> TextItem:
    """``value`` as an item: a string stays a text; a pair of two strings becomes a
    :class:`SentencePair`. Anything else raises ``TypeError`` saying what was given."""
    if isinstance(value, str | SentencePair):
        return value
    if (
        isinstance(value, tuple | list)
        and len(value) == 2
        and all(isinstance(part, str) for part in value)
    ):
        return SentencePair(value[0], value[1])
    raise TypeError(
        f"an item is a text (str) or a sentence pair (premise, hypothesis), got {value!r:.80}"
    )


def as_items(values: Iterable[Any]) -> list[TextItem]:
    """:func:`as_item` of every value, in order."""
    return [as_item(value) for value in values]


def check_editable(editable: str | None) -> str | None:
    """``editable`` itself when it is ``None`` or one of :data:`EDITABLE_CHOICES`."""
    if editable is not None and editable not in EDITABLE_CHOICES:
        raise ValueError(
            f"editable must be one of {', '.join(EDITABLE_CHOICES)} (or None: every token), "
            f"got {editable!r}"
        )
    return editable


def editable_segments(item: TextItem, editable: str | None) -> frozenset[int] | None:
    """The segments (0 premise, 1 hypothesis) whose tokens count for ``item``; ``None``: all.

    Raises ``ValueError`` for a single text with ``"premise"`` or ``"hypothesis"``: it has no
    such segment, and silently counting all of it would measure something else.
    """
    check_editable(editable)
    if editable in (None, "both"):
        return None
    if not isinstance(item, SentencePair):
        raise ValueError(
            f"editable={editable!r} names a segment of a sentence pair, but the item is a single "
            f"text ({item!r:.60}); use editable=None for texts"
        )
    return frozenset({SEGMENTS.index(str(editable))})


def segment_names(segments: Sequence[int] | None) -> list[str] | None:
    """Segment numbers (0, 1) by name (``"premise"``, ``"hypothesis"``); ``None`` stays."""
    return None if segments is None else [SEGMENTS[segment] for segment in segments]


def segment_text(item: TextItem, segment: str | None) -> str:
    """The text of ``item``'s segment named ``segment`` (``"premise"``, ``"hypothesis"``); a
    text's own text for ``None``."""
    if segment is None:
        if isinstance(item, SentencePair):
            raise ValueError("name the segment of a sentence pair: premise or hypothesis")
        return item
    if not isinstance(item, SentencePair) or segment not in SEGMENTS:
        raise ValueError(f"{segment!r} is not a segment of {item!r:.60}")
    return item[SEGMENTS.index(segment)]


def with_segment(item: TextItem, segment: str | None, text: str) -> TextItem:
    """``item`` with the text of its segment ``segment`` replaced by ``text`` (the other
    segment unchanged); ``text`` itself for a text (``segment`` None).

    >>> with_segment(SentencePair("A man sleeps.", "He rests."), "hypothesis", "He runs.")
    SentencePair(premise='A man sleeps.', hypothesis='He runs.')
    """
    segment_text(item, segment)  # refuses a segment the item does not have
    if segment is None:
        return text
    assert isinstance(item, SentencePair)
    return item._replace(**{segment: text})


def check_inputs(items: Sequence[TextItem], accepted: Sequence[str], architecture: str) -> None:
    """Refuse items of a kind the model cannot read (``accepted``: ``"text"``, ``"pair"``)."""
    for item in items:
        kind = "pair" if isinstance(item, SentencePair) else "text"
        if kind not in accepted:
            wanted = (
                "sentence pairs (premise, hypothesis)" if "pair" in accepted else "single texts"
            )
            given = "a sentence pair" if kind == "pair" else "a single text"
            raise ValueError(f"{architecture} reads {wanted}; it was given {given}")


def longest_first(first: int, second: int, limit: int) -> tuple[int, int]:
    """How many tokens of each segment to keep within ``limit``: the longer one is cut first,
    one token at a time, until both fit (transformers' ``truncation="longest_first"``), so a
    short hypothesis is never cut to make room for a long premise. Equal lengths lose alike
    (the premise keeps the odd token)."""
    if limit < 0:
        raise ValueError("limit must not be negative")
    if first + second <= limit:
        return first, second
    shorter = min(first, second)
    if 2 * shorter <= limit:
        keep_short, keep_long = shorter, limit - shorter
        return (keep_long, keep_short) if first > second else (keep_short, keep_long)
    half = limit // 2
    return limit - half, half
