"""A pair shown as a word-level diff: which words of the original the variant removed, and
which it added.

Words are runs of non-space characters (so ``"terrific"`` against ``terrific`` is one word
changed); the spaces between them are kept as they were written.

    >>> original, variant = word_diff("I love this movie!", "I'm mad for this movie!")
    >>> [(part.text, part.change) for part in variant]
    [("I'm mad for", 'added'), (' this movie!', '')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

_WORDS = re.compile(r"\S+|\s+")


@dataclass(frozen=True)
class Part:
    text: str
    change: str  # "" (in both), "removed" (original only) or "added" (variant only)


def _parts(tokens: list[str], start: int, end: int, change: str) -> list[Part]:
    if start == end:
        return []
    return [Part("".join(tokens[start:end]), change)]


def _side(tokens: list[str], spans: list[tuple[int, int, bool]], change: str) -> list[Part]:
    """Spans of word indexes (changed or not) back into text, spaces included."""
    words = [i for i, token in enumerate(tokens) if not token.isspace()]
    parts: list[Part] = []
    previous_end = 0
    for start, end, changed in spans:
        if start == end:
            continue
        first, last = words[start], words[end - 1] + 1
        parts += _parts(tokens, previous_end, first, "")
        parts += _parts(tokens, first, last, change if changed else "")
        previous_end = last
    parts += _parts(tokens, previous_end, len(tokens), "")
    # Neighbours of the same kind read as one run.
    merged: list[Part] = []
    for part in parts:
        if merged and merged[-1].change == part.change:
            merged[-1] = Part(merged[-1].text + part.text, part.change)
        else:
            merged.append(part)
    return merged


def word_diff(original: str, variant: str) -> tuple[list[Part], list[Part]]:
    """The original's parts (words it loses marked "removed") and the variant's (words it
    gains marked "added")."""
    a_tokens, b_tokens = _WORDS.findall(original), _WORDS.findall(variant)
    a_words = [token for token in a_tokens if not token.isspace()]
    b_words = [token for token in b_tokens if not token.isspace()]
    a_spans: list[tuple[int, int, bool]] = []
    b_spans: list[tuple[int, int, bool]] = []
    matcher = SequenceMatcher(a=a_words, b=b_words, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        a_spans.append((i1, i2, tag != "equal"))
        b_spans.append((j1, j2, tag != "equal"))
    return _side(a_tokens, a_spans, "removed"), _side(b_tokens, b_spans, "added")


@dataclass(frozen=True)
class TextDiff:
    """One text of a pair's items as a word diff: ``field`` names it (the ``Example`` field:
    ``text``, a sentence pair's ``text_b``), ``title`` is how pages call it ("Hypothesis"),
    ``text`` is the original's, ``original`` and ``variant`` are the two sides' parts."""

    field: str
    title: str
    text: str
    original: list[Part]
    variant: list[Part]


def text_diffs(
    kind: Any, original: Sequence[str], variant: Sequence[str], fields: Sequence[str]
) -> list[TextDiff]:
    """A word diff of each text of the items ``original`` and ``variant`` (of the task type
    ``kind``, one text per segment in order) whose field is in ``fields``, in segment order."""
    diffs = []
    for segment, before, after in zip(kind.segments, original, variant, strict=True):
        if segment.field in fields:
            removed, added = word_diff(before, after)
            diffs.append(TextDiff(segment.field, segment.title, before, removed, added))
    return diffs
