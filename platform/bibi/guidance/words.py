"""Where a starter original's stored words are, and what share of the edit leverage each has:
the words the ranking shades (``ranking.boundary_ranking``, ``ranking.ranking_words``).

A cell stores a system's word leverage as ``[word, score]`` (over the text of a one-text item)
or, for a sentence pair's words, ``[word, score, segment]`` with the segment fim_engine names
(``premise``, ``hypothesis``: the item's first and second text,
``fim_engine.sentence_pairs.SEGMENTS``). Each word is found in its own text of the item, in
order, ignoring case; a word stored without its segment is looked for in the texts a breaker
may edit (rows stored before words named their segment read as they did). Shares are each
system's score over its total, averaged over the systems onto the first system's words, a
system's word counted on the reference word of its text that its first character falls in.
Punctuation is left out: a bag of words can put 75–95% of its deletion leverage on ".".

Pure (no queries): the ranking reads the cells.

Example:
    >>> places = WordPlaces({"text": "A man sleeps.", "text_b": "He rests."},
    ...                     fields=("text", "text_b"), editable=("text_b",))
    >>> [(w.text, w.segment) for w in item_words(places, [[["He", 1.0, "hypothesis"]]])]
    [('He', 'text_b')]
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bibi.sharedtasks.models import Example, SharedTask
from fim_engine.sentence_pairs import SEGMENTS


@dataclass(frozen=True)
class WordLeverage:
    """A word of the original: its text, character span and aggregated edit leverage (the
    mean over systems of its share of the item's deletion leverage; None when not stored).
    ``segment`` is the ``Example`` field of the text the word is in (``text``, or a sentence
    pair's ``text_b``); ``start`` and ``end`` are offsets into that text."""

    text: str
    start: int
    end: int
    leverage: float | None
    segment: str = "text"


@dataclass(frozen=True)
class WordPlaces:
    """Where an item's stored words are found: its texts by ``Example`` field, in the order
    the model reads them (``fields``), and the fields a breaker may edit (``editable``), where
    a word stored without its segment is looked for."""

    texts: dict[str, str]
    fields: tuple[str, ...]
    editable: tuple[str, ...]

    @classmethod
    def of(cls, shared_task: SharedTask, example: Example) -> WordPlaces:
        kind = shared_task.kind
        return cls(
            texts=kind.item_fields(kind.item(example)),
            fields=kind.segment_fields,
            editable=kind.editable_fields(shared_task.editable_text),
        )


def _found(haystacks: dict[str, str], field: str, needle: str, cursor: int) -> int:
    """Where ``needle`` is in the text of ``field`` at or after ``cursor``, ignoring case (-1:
    not there)."""
    text = haystacks[field]
    # Lowercasing keeps offsets but for a few characters (e.g. "İ"); then search as written.
    if len(text.lower()) == len(text):
        return text.lower().find(needle.lower(), cursor)
    return text.find(needle, cursor)


def _located(places: WordPlaces, leverage: list[list[Any]]) -> list[tuple[str, int, int, float]]:
    """A system's leverage words as (field, start, end, score), found in order in their texts,
    ignoring case (a word a tokenizer changed beyond case is skipped): a word stored with its
    segment in that segment's text, any other in the texts a breaker may edit, from the text
    the previous one was found in. Punctuation is left out: a bag of words can put most of its
    deletion leverage on ".", which is no word to edit."""
    cursors = dict.fromkeys(places.fields, 0)
    found = []
    current = 0  # the editable text the last word without a segment was found in
    for entry in leverage:
        needle, score = str(entry[0]), float(entry[1])
        if not any(character.isalnum() for character in needle):
            continue
        if len(entry) > 2:
            index = SEGMENTS.index(entry[2]) if entry[2] in SEGMENTS else len(places.fields)
            fields = list(places.fields[index : index + 1])
        else:
            fields = list(places.editable[current:])
        for field in fields:
            start = _found(places.texts, field, needle, cursors[field])
            if start < 0:
                continue
            cursors[field] = start + len(needle)
            if len(entry) <= 2:
                current = places.editable.index(field)
            found.append((field, start, start + len(needle), score))
            break
    return found


def item_words(
    places: WordPlaces, leverages: Sequence[list[list[Any]] | None]
) -> tuple[WordLeverage, ...]:
    """The item's words (``places``) with each system's stored leverage (``leverages``, in
    system order; None where a system stored none) as its share of the item's total,
    averaged onto the words of the first system that stored any (the module docstring)."""
    located = [_located(places, leverage) for leverage in leverages if leverage]
    if not located:
        return ()
    reference = located[0]
    starts = {
        field: [(start, index) for index, (f, start, _, _) in enumerate(reference) if f == field]
        for field in places.fields
    }
    shares: list[list[float]] = [[] for _ in reference]
    for spans in located:
        total = sum(score for _, _, _, score in spans)
        if not total > 0:
            continue
        sums = [0.0] * len(reference)
        for field, start, _, score in spans:
            # A system's word goes to the reference word of its text its first character is in.
            here = starts[field]
            at = bisect.bisect_right([first for first, _ in here], start) - 1
            if at >= 0 and start < reference[here[at][1]][2]:
                sums[here[at][1]] += score
        for index, value in enumerate(sums):
            shares[index].append(value / total)
    return tuple(
        WordLeverage(
            text=places.texts[field][start:end],
            start=start,
            end=end,
            leverage=sum(share) / len(share) if share else None,
            segment=field,
        )
        for (field, start, end, _), share in zip(reference, shares, strict=True)
    )
