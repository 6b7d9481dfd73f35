"""Minimal edits of a text, each with the reason it was made and what it should do to the label.

Every generator returns :class:`Perturbation` objects: the edited ``text``, the :class:`Edit`
(character span of the original and its replacement), the ``source`` that made it, whether it
``keeps_label`` by construction, and a ``rationale`` sentence saying how it was made. Label
intent by source (the sources and their intents are :mod:`edits.claims`'):

| source | edit | keeps the label |
|---|---|---|
| ``synonym`` | a word → a WordNet synonym or similar word | yes |
| ``antonym`` | a word → a WordNet antonym | no |
| ``neighbour`` | a word → a nearest neighbour in a system's input-embedding space (:mod:`fim_engine.suggestions`) | yes |
| ``name`` | a person's name → another name | yes |
| ``typo`` | one keyboard slip inside a word | yes |
| ``negation`` | ``not`` inserted after the copula or auxiliary heading a one-clause text, or its one negation removed | no |

"By construction" is the intent, not a guarantee. WordNet substitutions pass the fluency gate of
:mod:`edits.fluency` (one reading in context, same part of speech re-inflected with
``lemminflect``, zipf >= 3 in ``wordfreq``, first senses, no proper names); antonyms are direct
ones of the word's first sense and, like negation, only in a text of one clause with nothing
set off from it (:mod:`edits.clauses`). Both need an opinion (:mod:`edits.opinion`,
VADER's lexicon): an antonym is label-changing only when it and the word carry opposite opinions
(*good* → *bad*; not *young* → *old*, which :func:`antonym_replacements` leaves out, or gives as
a ``probe`` claiming no label), and ``not`` goes into a clause only when it holds an opinion
word and no opinion ahead of the ``not`` agrees with one after it. A label-changing edit's new
label is still a guess: its pairs are marked *label unverified* where they are stored,
and reach the scores only through validation. What each edit claims (its label, *label
unverified*, or nothing for a probe) is :attr:`Perturbation.kind`, by the one rule of
:mod:`edits.claims`.

Words are those of :func:`edits.words.split_words`; a replacement takes the case of the
word it replaces (*Good* → *Superb*). Multiword WordNet lemmas (``not_bad``) are skipped: every
substitution here replaces one word by one word. This module does not import torch.

Example:
    >>> [p.text for p in antonym_swaps("a good film")]
    ['a bad film']
    >>> negation_edits("it is funny")[0].text
    'it is not funny'

"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from edits.claims import ANTONYM, KEEPS_LABEL, SYNONYM, TYPO
from edits.clauses import single_clause
from edits.edited import (
    FUNCTION_WORDS,
    LISTING,
    NEGATION_WORDS,
    Edit,
    Perturbation,
    Replacement,
    match_case,
    substitution,
    word_set,
)
from edits.fluency import (
    NO_SUBSTITUTE,
    PARTICLES,
    ZIPF_FLOOR,
    inflected_replacement,
    is_proper_name,
    reading_in_context,
    readings,
)
from edits.names import NAMES, name_positions, name_swaps
from edits.negation import negation_edits, negation_refusal
from edits.opinion import opinions_note, opposite_opinions, same_opinion
from edits.wordnet import WordNet, load_wordnet
from edits.words import split_words

# Re-exported: the generators and what they return are this module's names too.
__all__ = [
    "NAMES",
    "Edit",
    "Perturbation",
    "Replacement",
    "antonym_replacements",
    "antonym_swaps",
    "is_content_word",
    "keyboard_typos",
    "label_change_allowed",
    "match_case",
    "name_positions",
    "name_swaps",
    "negation_edits",
    "negation_refusal",
    "neighbours_of",
    "substitution",
    "synonym_replacements",
    "synonym_swaps",
]

_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def synonym_replacements(
    word: str, *, wordnet: WordNet | None = None, senses: int = 1, before: str = "", after: str = ""
) -> list[Replacement]:
    """WordNet synonyms of ``word`` (between the words ``before`` and ``after``) that pass the fluency gate of
    :mod:`edits.fluency`: its ``senses`` most frequent senses in its one reading, the same
    part of speech re-inflected, common words, not an odd sense of the replacement. None for a
    function word (``FUNCTION_WORDS``), a word whose reading is ambiguous, or a proper name."""
    return _wordnet_replacements(word, SYNONYM, wordnet, senses, (before, after))


def antonym_replacements(
    word: str,
    *,
    wordnet: WordNet | None = None,
    senses: int = 1,
    before: str = "",
    after: str = "",
    probes: bool = False,
) -> list[Replacement]:
    """Direct WordNet antonyms of an adjective's first sense (``senses``) through the same gate
    as :func:`synonym_replacements` (*weak* → *strong*; no verbs or nouns: *work* → *idle*),
    offered as label-changing only where the word and its antonym carry opposite opinions
    (:func:`edits.opinion.opposite_opinions`: *good* → *bad*; not *young* → *old*). The
    others are left out, or with ``probes`` given as probes that claim no label. Whether the
    text allows a label-changing edit at all is :func:`label_change_allowed`'s question, asked
    by the callers that have the text."""
    return _wordnet_replacements(word, ANTONYM, wordnet, senses, (before, after), probes=probes)


def _wordnet_replacements(
    word: str,
    source: str,
    wordnet: WordNet | None,
    senses: int,
    around: tuple[str, str],
    *,
    probes: bool = False,
) -> list[Replacement]:
    if not is_content_word(word):
        return []
    wordnet = wordnet or load_wordnet()
    before, after = around
    if word.lower() in NO_SUBSTITUTE:
        return []
    reading = reading_in_context(word, before, after, adjective=wordnet.is_adjective(word))
    if reading is None or (reading.pos == "VERB" and after.lower() in PARTICLES):
        return []
    if after.isalpha() and wordnet.is_compound(word, after):
        return []
    person = reading.pos == "NOUN" and wordnet.is_person(word)
    if is_proper_name(word, before, person=person):
        return []
    if source == ANTONYM and reading.pos != "ADJ":
        # Opposite verbs and nouns rarely reverse an opinion (*work* → *idle*).
        return []
    if reading.pos == "ADV" and after.lower() in _COMPLEX_PREPOSITION_ENDS:
        return []  # "instead of", "rather than": no "alternatively of"
    frames = _FRAMES_AFTER.get(after.lower()) if reading.pos == "VERB" else None
    intent = "keep" if KEEPS_LABEL[source] else "change"
    found: dict[str, Replacement] = {}
    related = wordnet.related(
        reading.lemma, reading.wordnet_pos, source, senses=senses, frames=frames
    )
    for lexical in related:
        form = inflected_replacement(lexical.word, reading, before, replacing=word)
        if form is None or form.lower() == word.lower() or form.lower() in found:
            continue
        if source == SYNONYM and not same_opinion(word, form):
            continue  # "fantastic" → "grotesque", "funny" → "comic"
        if reading.pos == "ADV" and _reads_as_adjective(form) and not _reads_as_adjective(word):
            continue  # "scarcely worth" → "scarce worth"
        made = (
            f"WordNet {source} of {word!r} ({lexical.note}), as a {reading.pos.lower()} "
            f"({'/'.join(reading.tags)}), a common word (zipf >= {ZIPF_FLOOR:g})"
        )
        probe = source == ANTONYM and not opposite_opinions(word, form)
        if probe and not probes:
            continue
        if source == ANTONYM:
            made += f"; {opinions_note(word, form)}"
        why = (
            ": a probe of the model that claims no label"
            if probe
            else f"; meant to {intent} the label"
        )
        found[form.lower()] = Replacement(
            match_case(word, form), source, KEEPS_LABEL[source], made + why, probe=probe
        )
    return list(found.values())


# Words after an adverb that make one preposition with it: "instead of", "rather than".
_COMPLEX_PREPOSITION_ENDS = word_set("of than to as from")
# WordNet verb frames the word after a verb asks for (WordNet 3.0's frame numbers): a person
# as object ("tells us": 9 "Somebody ----s somebody", 14 "... somebody something", ...), or a
# clause ("says that": 26 "Somebody ----s that CLAUSE", 34 "It ----s that CLAUSE").
_PERSON_OBJECT_FRAMES = frozenset({9, 10, 14, 17, 18, 20, 24, 25, 30})
# A verb before a comma or the end has no object: 1 "Something ----s", 2 "Somebody ----s",
# 3 "It is ----ing", 23 "Somebody's (body part) ----s" ("looks , sounds" → not "faces").
_NO_OBJECT_FRAMES = frozenset({1, 2, 3, 23})
_FRAMES_AFTER = {
    **dict.fromkeys(("me", "us", "him", "them"), _PERSON_OBJECT_FRAMES),
    **dict.fromkeys((",", ".", "!", "?", ";", ":", ""), _NO_OBJECT_FRAMES),
    "that": frozenset({26, 34}),
}


def _reads_as_adjective(word: str) -> bool:
    return any(r.pos == "ADJ" for r in readings(word))


def neighbours_of(words: Sequence[tuple[str, int, int]], index: int) -> dict[str, str]:
    """The words ``before`` and ``after`` word ``index`` of ``split_words`` output ("" at the
    ends): the context the fluency gate reads a word in."""
    return {
        "before": words[index - 1][0] if index > 0 else "",
        "after": words[index + 1][0] if index + 1 < len(words) else "",
    }


def label_change_allowed(text: str) -> bool:
    """Whether a one-word label-changing edit (an antonym) is believable in ``text``: one
    clause (:func:`edits.clauses.single_clause`), no negation and no list (a comma, *and*,
    *or*: "a weak, boring film" → "a strong, boring film" says two things)."""
    words = [w for w, _, _ in split_words(text)]
    return single_clause(words) and not any(w in NEGATION_WORDS or w in LISTING for w in words)


def synonym_swaps(
    text: str, *, wordnet: WordNet | None = None, senses: int = 1
) -> list[Perturbation]:
    """One perturbation per word of ``text`` and WordNet synonym of it, in text order."""
    return _swaps(text, synonym_replacements, wordnet or load_wordnet(), senses)


def antonym_swaps(
    text: str, *, wordnet: WordNet | None = None, senses: int = 1
) -> list[Perturbation]:
    """One perturbation per word of ``text`` and WordNet antonym of it, in text order; none
    unless :func:`label_change_allowed`."""
    if not label_change_allowed(text):
        return []
    return _swaps(text, antonym_replacements, wordnet or load_wordnet(), senses)


def _swaps(
    text: str, replacements: Callable[..., list[Replacement]], wordnet: WordNet, senses: int
) -> list[Perturbation]:
    words = split_words(text, lowercase=False)
    return [
        substitution(text, start, end, replacement)
        for index, (word, start, end) in enumerate(words)
        if word.isalpha()
        for replacement in replacements(
            word, wordnet=wordnet, senses=senses, **neighbours_of(words, index)
        )
    ]


def keyboard_typos(text: str, *, per_word: int = 2, seed: int = 0) -> list[Perturbation]:
    """Up to ``per_word`` one-slip typos in each word of three letters or more.

    A slip is a neighbouring key on a QWERTY keyboard in place of a letter, two adjacent letters
    swapped, a letter dropped or a letter doubled; the first and last letters stay (people read
    past such typos). Which slips come out is decided by ``seed`` and the text, so reruns agree.
    """
    rng = random.Random(f"{seed}\x00{text}")
    perturbations = []
    for word, start, end in _alphabetic_words(text):
        if len(word) < 3:
            continue
        typos: dict[str, str] = {}
        for _ in range(8 * per_word):
            if len(typos) == per_word:
                break
            typo, how = _slip(word, rng)
            if typo != word:
                typos.setdefault(typo, how)
        for typo, how in typos.items():
            replacement = Replacement(
                typo,
                TYPO,
                True,
                f"keyboard typo in {word!r}: {how}; readers see past it, so the label should stay",
            )
            perturbations.append(substitution(text, start, end, replacement))
    return perturbations


def _slip(word: str, rng: random.Random) -> tuple[str, str]:
    """One random typo strictly inside ``word`` and a description of it."""
    i = rng.randrange(1, len(word) - 1)
    kind = rng.choice(("neighbour", "swap", "drop", "double"))
    letter = word[i]
    if kind == "neighbour":
        near = _keyboard_neighbours(letter)
        if near:
            key = rng.choice(near)
            key = key.upper() if letter.isupper() else key
            return word[:i] + key + word[i + 1 :], f"{letter!r} → {key!r}, a neighbouring key"
    if kind == "swap" and i + 1 < len(word) - 1:
        return (
            word[:i] + word[i + 1] + letter + word[i + 2 :],
            f"{letter!r} and {word[i + 1]!r} swapped",
        )
    if kind == "drop":
        return word[:i] + word[i + 1 :], f"{letter!r} dropped"
    return word[:i] + letter + word[i:], f"{letter!r} doubled"


def _keyboard_neighbours(letter: str) -> str:
    lowered = letter.lower()
    for row_index, row in enumerate(_KEYBOARD_ROWS):
        column = row.find(lowered)
        if column < 0:
            continue
        near = row[max(0, column - 1) : column] + row[column + 1 : column + 2]
        for other in (row_index - 1, row_index + 1):
            if 0 <= other < len(_KEYBOARD_ROWS):
                near += _KEYBOARD_ROWS[other][max(0, column - 1) : column + 1]
        return near
    return ""


def _alphabetic_words(text: str) -> list[tuple[str, int, int]]:
    return [(w, s, e) for w, s, e in split_words(text, lowercase=False) if w.isalpha()]


def is_content_word(word: str) -> bool:
    """Whether ``word`` is alphabetic, longer than one letter and no function word."""
    return word.isalpha() and len(word) > 1 and word.lower() not in FUNCTION_WORDS
