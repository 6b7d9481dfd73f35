"""Placing an answer given as text in its sentence, and the 2017 TSV predicate's case (pure
Python: no torch, no Django).

``locate_span`` is the one rule every answer text is placed by: the QA-SRL readers
(``fim_engine.qasrl``) and, through ``bibi.tasktypes.span_extraction.answers``, the platform's
imports, pairs, predictions and forms. ``predicate_case`` gives the 2017 TSV's upper-cased
predicate the sentence's case back.
"""

from __future__ import annotations

import re

# Why an answer text was not placed (``locate_span``): absent, only inside words, or at two
# places that are equally likely.
NOT_A_SPAN = "is not a span of the sentence"
PART_OF_A_WORD = "is not a span of the sentence: it is only part of a word there"


def token_spans(text: str) -> list[tuple[int, int]]:
    """Character offsets (end exclusive) of ``text``'s whitespace-separated tokens."""
    return [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]


def _whole_words(pieces: list[str]) -> str:
    """A pattern for ``pieces`` as whole words: any whitespace between them, and no word
    character running on from a word character at either end (so 'Augustu' is not found in
    'Augustus', nor 'he' in 'Then')."""
    body = r"\s+".join(re.escape(piece) for piece in pieces)
    before = r"(?<!\w)" if re.match(r"\w", pieces[0]) else ""
    after = r"(?!\w)" if re.search(r"\w$", pieces[-1]) else ""
    return before + body + after


def locate_span(
    text: str, answer: str, anchor: tuple[int, int] | None = None
) -> tuple[tuple[int, int] | None, str]:
    """Where the answer text is in ``text``: ``((start, end), "")``, or ``(None, why)``.

    The one rule every answer given as text is placed by (the QA-SRL readers, an examples
    file's answers, a pair's variant answers, a self-reported prediction). The answer must be
    a run of whole words of the text (whitespace between them free): matched with its case
    first, ignoring case only where it is nowhere with its case (a capitalised first word).
    Where it occurs more than once, ``anchor`` (the predicate's character span: QA-SRL answers
    are arguments of their predicate) picks the occurrence nearest it; two equally near, or
    several without an anchor, are ambiguous and refused: the caller must give offsets.
    Returns ``why`` as a phrase that follows "the answer 'x' ".

    >>> locate_span("Then he FOUNDED it", "he")
    ((5, 7), '')
    >>> locate_span("ADB Mouse II", "ADB Mouse I")
    (None, 'is not a span of the sentence: it is only part of a word there')
    >>> locate_span("he said he left", "he", anchor=(3, 7))
    (None, 'occurs 2 times in the sentence, equally near the predicate: give its offsets')
    >>> locate_span("he said he left", "he", anchor=(11, 15))
    ((8, 10), '')
    """
    pieces = answer.split()
    if not pieces:
        return None, "is empty"
    pattern = _whole_words(pieces)
    found: list[tuple[int, int]] = []
    for flags in (0, re.IGNORECASE):
        # Overlapping occurrences too ("he he" in "he he he"): a look-ahead that captures.
        found = [m.span(1) for m in re.finditer(f"(?=({pattern}))", text, flags)]
        if found:
            break
    if not found:
        loose = r"\s+".join(re.escape(piece) for piece in pieces)
        inside = re.search(loose, text, re.IGNORECASE) is not None
        return None, PART_OF_A_WORD if inside else NOT_A_SPAN
    if len(found) == 1:
        return found[0], ""
    if anchor is None:
        return None, f"occurs {len(found)} times in the sentence: give its offsets"

    def distance(span: tuple[int, int]) -> int:
        return max(anchor[0] - span[1], span[0] - anchor[1], 0)

    nearest = min(distance(span) for span in found)
    best = [span for span in found if distance(span) == nearest]
    if len(best) > 1:
        return None, (
            f"occurs {len(found)} times in the sentence, equally near the predicate: "
            "give its offsets"
        )
    return best[0], ""


# Tokens after which a word starts a sentence (a quotation): the QA-SRL files write `` and ''.
OPENING_QUOTES = ("``", '"', "\u201c")


def predicate_case(predicate: str, *, previous: str, answers: str = "") -> str:
    """The 2017 TSV's upper-cased predicate as the sentence wrote it (the TSV marks the
    predicate in capitals: "Her parents had FOUNDED Brauweiler"). ``previous`` is the token
    before it ('' at the start of the sentence); ``answers`` the row's answer field.

    A predicate that is not all capitals (or has one letter) is kept as given. Otherwise, the
    first rule that applies: an answer that holds the word gives its case (answers are copied
    from the sentence, in its case); a predicate that starts the sentence or a quotation
    (after ``````, ``"`` or ``\u201c``) is capitalised ("Following"); any other is lower-cased,
    since a QA-SRL predicate is a verb and a verb inside an English sentence is written in
    lower case. The same word elsewhere in the sentence is no evidence (it may start the
    sentence, or a name), nor are capitalised neighbours (a name before a verb is common).
    Measured against the wiki1 ``.qa`` files, which keep the case: 28 of their 3,569
    predicates come out in another case, all verbs inside titles ("`` I Pity the Fool ''",
    "Ten Lost Tribes") or a lower-cased sentence start.

    >>> predicate_case("FOUNDED", previous="had")
    'founded'
    >>> predicate_case("FOLLOWING", previous="")
    'Following'
    >>> predicate_case("LEAVE", previous="``")
    'Leave'
    >>> predicate_case("LOST", previous="Ten", answers="the Ten Lost Tribes")
    'Lost'
    """
    if len(predicate) < 2 or not predicate.isupper():
        return predicate
    folded = predicate.casefold()
    for word in answers.split():
        if word.casefold() == folded and not word.isupper():
            return word
    if not previous or previous in OPENING_QUOTES:
        return predicate[0] + predicate[1:].lower()
    return predicate.lower()
