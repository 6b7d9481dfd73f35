"""Name swaps: a person's name in a text for another name (meant to keep the label).

Only a capitalised word is a name, and only where its sentence makes it one
(:func:`name_positions`): never a verb, an adjective, an adverb or a function word, nor a
sentence's first word unless it can be nothing but a name, nor a company, a film, a place or an
eponym. This module does not import torch.
"""

from __future__ import annotations

from collections.abc import Sequence

from edits.claims import NAME
from edits.edited import (
    FUNCTION_WORDS,
    Perturbation,
    Replacement,
    match_case,
    substitution,
    word_set,
)
from edits.fluency import readings
from edits.wordnet import WordNet, load_wordnet
from edits.words import split_words

# Surnames from several languages that carry no sentiment of their own.
NAMES = ("garcia", "nakamura", "okafor", "kowalski", "lindqvist", "haddad", "moreau", "novak")


def name_swaps(
    text: str,
    *,
    wordnet: WordNet | None = None,
    names: Sequence[str] = NAMES,
    per_name: int = 2,
) -> list[Perturbation]:
    """Swap each person's name in ``text`` for up to ``per_name`` names of ``names``.

    Only a capitalised word can be a name (:func:`name_positions`: a lowercase text, as
    SST-2's, gets no name swaps), and only where its context makes it one: the last word of a
    run of capitalised words (*Steven Spielberg*, *Herb Brooks*: the surname is swapped), that
    WordNet knows as a particular person or that stands after a person's first name or a title
    (*Rabbi*, *Queen*), a common word as a surname only after a first name (*Stephen King*, not
    *Picture Rocks*), a word that is also a place only with a first name or a title (not *the
    County of Kent*), never part of a joined word (*Britten-Norman*); never a word that can be a verb, an adjective, an adverb or a function
    word (*Tell*, *More*, *What*), nor a common word at the start of a sentence (*Mark
    composed*), nor a run after *the* or before *film*, *studio*, ... (a company or a film:
    *the Disney Channel*, *Disney pictures*), nor one beside a capitalised common word (a
    title: *Walt Disney Pictures*, *King of the Gypsies*).
    """
    wordnet = wordnet or load_wordnet()
    pool = [name.lower() for name in names]
    perturbations = []
    for (word, start, end), why in name_positions(text, wordnet, pool):
        lowered = word.lower()
        for name in [name for name in pool if name != lowered][:per_name]:
            replacement = Replacement(
                match_case(word, name),
                NAME,
                True,
                f"name swap: {why}; a name carries no sentiment, so the label should stay",
            )
            perturbations.append(substitution(text, start, end, replacement))
    return perturbations


# Titles before a name: "Rabbi Tzvi Hirsh Braude", "Queen Sophia".
_HONORIFICS = word_set(
    "mr mrs ms dr miss sir lady lord queen king prince princess president senator general "
    "captain saint st father sister brother professor rabbi judge governor bishop pope emperor "
    "duke duchess count countess uncle aunt coach director actor actress"
)
# Nouns after a name that make it a company's, a film's or a thing's: "Disney pictures".
_NOT_A_PERSON_AFTER = word_set(
    "film films movie movies studio studios company pictures production productions "
    "animation channel records entertainment corporation inc brand network franchise series "
    "show"
)
# Where a sentence starts again: its first word is capitalised whatever it is.
_OPENERS = frozenset(".!?:;\"`'(")


def name_positions(
    text: str, wordnet: WordNet, pool: Sequence[str] = NAMES
) -> list[tuple[tuple[str, int, int], str]]:
    """The words of ``text`` that are people's names in context (:func:`name_swaps`), each
    with the reason, in text order."""
    words = split_words(text, lowercase=False)
    found = []
    index = 0
    while index < len(words):
        if not _capitalised(words[index][0]):
            index += 1
            continue
        stop = index
        while stop < len(words) and _capitalised(words[stop][0]):
            stop += 1
        run = list(range(index, stop))
        index = stop
        opener = run[0] == 0 or words[run[0] - 1][0] in _OPENERS
        if opener and not _name_word(words[run[0]][0], wordnet):
            run = run[1:]  # "Tell", "What", "Mark composed": a sentence's first word
        if not run:
            continue
        before = words[run[0] - 1][0].lower() if run[0] > 0 else ""
        after = words[run[-1] + 1][0].lower() if run[-1] + 1 < len(words) else ""
        if before == "the" or after in _NOT_A_PERSON_AFTER or _modified_noun(after):
            continue  # "the Disney Channel", "a Fresnel lens", "the Anthony family"
        if run[-1] + 1 < len(words) and words[run[-1] + 1][0].isupper():
            continue  # "George VI": a numeral or an acronym goes with the name
        owner = words[run[-1] + 2][0].lower() if run[-1] + 2 < len(words) else ""
        if after in ("'s", "'") and owner in _NOT_A_PERSON_AFTER:
            continue
        titled = before in _HONORIFICS
        tokens = [words[i][0] for i in run]
        if titled is False and tokens[0].lower() in _HONORIFICS:
            titled, tokens, run = True, tokens[1:], run[1:]
            if not run:
                continue
        _, last_start, last_end = words[run[-1]]
        following = text[last_end : last_end + 3]
        clitic = following[:2] == "'s" and not following[2:].isalpha()
        joined = following[:1] == "-" or (following[:1] == "'" and following[1:2].isalpha())
        if (joined and not clitic) or text[last_start - 1 : last_start] in ("-", "'"):
            continue  # part of a joined word: "Britten-Norman", "Terre'Blanche"
        why = _name_reason(tokens, before if titled else "", wordnet, pool)
        if why is None:
            continue
        found.append((words[run[-1]], why))
    return found


def _name_reason(
    tokens: Sequence[str], title: str, wordnet: WordNet, pool: Sequence[str]
) -> str | None:
    """Why the last of ``tokens`` (a run of capitalised words, after ``title`` if any) is a
    person's name, or None when nothing says so."""
    last = tokens[-1]
    if len(tokens) == 1 and not title and wordnet.is_place(last):
        return None  # a person or a place: "the County of Kent"
    if _name_word(last, wordnet):
        if last.lower() in pool:
            return f"{last!r} is one of the replacement names"
        if any(wordnet.is_person(t) for t in tokens):
            return f"{' '.join(tokens)!r} is a capitalised name, and WordNet knows a person of it"
        if title:
            return f"{last!r} is a capitalised name after the title {title!r}"
        return None
    first_name = len(tokens) > 1 and (
        _name_word(tokens[-2], wordnet) or tokens[-2].lower() in _HONORIFICS
    )
    if first_name and _surname_word(last, wordnet):
        return (
            f"{' '.join(tokens)!r} is a capitalised name whose last word WordNet knows as a person"
        )
    return None


def _modified_noun(word: str) -> bool:
    """A lowercase word that can be a noun, after a name that may then modify it (*lens* in
    "a Fresnel lens", *family* in "the Anthony family"): the name is an eponym, a brand or a
    family there, not a person. Words that can only be something else (*played*) are not."""
    return word.isalpha() and word.islower() and any(r.pos == "NOUN" for r in readings(word))


def _capitalised(word: str) -> bool:
    """A word written with a capital and then lowercase letters (*Spielberg*; not *USA*)."""
    return word.isalpha() and word[:1].isupper() and (len(word) == 1 or not word[1:].isupper())


def _name_word(word: str, wordnet: WordNet) -> bool:
    """A word that can be nothing but a name: no reading as a common word in ``lemminflect``'s
    tables, no function word, and no WordNet sense that is not a particular thing."""
    lowered = word.lower()
    if lowered in FUNCTION_WORDS or len(word) < 2 or readings(lowered):
        return False
    return not wordnet.has_common_sense(lowered)


def _surname_word(word: str, wordnet: WordNet) -> bool:
    """A common word that is also a person's surname in WordNet (*King*, *Brooks*), after a
    first name: never one that can be an adjective or an adverb, nor a function word."""
    lowered = word.lower()
    if lowered in FUNCTION_WORDS or not wordnet.is_person(lowered):
        return False
    return not any(r.pos in ("ADJ", "ADV") for r in readings(lowered))
