"""Which words carry an opinion: the gate of label-changing edits in a sentiment task.

A WordNet antonym changes a sentiment label only when the word it replaces carries an opinion
and the antonym the opposite one (*good* → *bad*); most antonyms of adjectives carry none
(*young* → *old*, *small* → *large*, *thin* → *thick*) and leave the label where it was.
Likewise ``not`` put into a clause flips its sentiment only when the clause holds an opinion
word ("The kids will not love it"; not "The plot is not set in Paris").

The opinions are those of the VADER lexicon (Hutto and Gilbert, 2014; the ``vadersentiment``
package, MIT licence): about 7,500 English words and emoticons, each with the mean of ten
people's ratings from −4 (most negative) to +4 (most positive). Its entries are word forms,
inflections included (*weaker*, *enjoyed*), so a form is looked up as it is, lowercased. Only
the lexicon file is read (``importlib.resources``); VADER's analyser is not imported.

A word **carries an opinion** when its mean rating is at least ``OPINION_MIN`` (1.0) in
absolute value: *good* 1.9, *bad* −2.5, *weak* −1.9, *boring* −1.3; not *top* (0.8), *warm*
(0.9), *hard* (−0.4), nor any word the lexicon lacks (*young*, *old*, *small*, *thin*). Two
words are **opposite opinions** when both carry one and their signs differ.

This module does not import torch.

Example:
    >>> opposite_opinions("good", "bad"), opposite_opinions("young", "old")
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from importlib import resources

from edits.errors import OpinionLexiconError

# Ratings run from -4 to +4; 1.0 is a quarter of the way to the strongest opinion.
OPINION_MIN = 1.0
# How far apart two ratings may be for a synonym to keep the word's opinion (a quarter scale).
STRENGTH_GAP = 1.0
LEXICON_PACKAGE = "vaderSentiment"
LEXICON_FILE = "vader_lexicon.txt"


def valence(word: str) -> float | None:
    """The lexicon's mean rating of the form ``word`` (lowercased), or None when it lacks it."""
    return _lexicon().get(word.lower())


def carries_opinion(word: str) -> bool:
    """Whether ``word``'s rating is at least ``OPINION_MIN`` in absolute value."""
    rating = valence(word)
    return rating is not None and abs(rating) >= OPINION_MIN


def opposite_opinions(word: str, replacement: str) -> bool:
    """Whether both words carry an opinion and their ratings have opposite signs."""
    if not (carries_opinion(word) and carries_opinion(replacement)):
        return False
    return (valence(word) or 0.0) * (valence(replacement) or 0.0) < 0


def same_opinion(word: str, replacement: str) -> bool:
    """Whether a synonym keeps the word's opinion: both carry one (``OPINION_MIN``) of the same
    sign and a strength at most ``STRENGTH_GAP`` apart (*fantastic* +2.6 → *grotesque*, unrated,
    refused; *funny* +1.9 → *comic*, unrated, refused), or neither carries one and their ratings,
    where the lexicon has them, do not point opposite ways by ``STRENGTH_GAP`` or more."""
    rated, other = valence(word), valence(replacement)
    if carries_opinion(word) or carries_opinion(replacement):
        if not (carries_opinion(word) and carries_opinion(replacement)):
            return False
        return (rated or 0.0) * (other or 0.0) > 0 and abs((rated or 0.0) - (other or 0.0)) <= (
            STRENGTH_GAP
        )
    return abs((rated or 0.0) - (other or 0.0)) < STRENGTH_GAP


def opinion_words(words: Iterable[str]) -> list[str]:
    """The words of ``words`` that carry an opinion, in order."""
    return [word for word in words if carries_opinion(word)]


def opinion_signs(words: Iterable[str]) -> set[int]:
    """The signs (+1, -1) of the ratings of the opinion words of ``words``:
    ``opinion_signs(["a", "dull", "grim", "film"]) == {-1}``."""
    return {1 if (valence(word) or 0.0) > 0 else -1 for word in opinion_words(words)}


def opinions_note(word: str, replacement: str) -> str:
    """How the lexicon rates ``word`` and ``replacement`` and whether that is opposite, for a
    rationale: "opposite opinions in the VADER lexicon (good +1.9, bad -2.5; ...)"."""

    def rated(form: str) -> str:
        rating = valence(form)
        return f"{form.lower()} {'unrated' if rating is None else f'{rating:+.1f}'}"

    verdict = "opposite" if opposite_opinions(word, replacement) else "not opposite"
    return (
        f"{verdict} opinions in the VADER lexicon ({rated(word)}, {rated(replacement)}; "
        f"|rating| >= {OPINION_MIN:g} of opposite signs needed)"
    )


@lru_cache(maxsize=1)
def _lexicon() -> dict[str, float]:
    try:
        text = resources.files(LEXICON_PACKAGE).joinpath(LEXICON_FILE).read_text("utf-8")
    except (ModuleNotFoundError, FileNotFoundError) as error:
        raise OpinionLexiconError(
            f"The VADER sentiment lexicon ({LEXICON_PACKAGE}/{LEXICON_FILE}) is not installed "
            f"({error}): install the vadersentiment package (pip install vadersentiment, which "
            "`make install` does through pyproject.toml)"
        ) from None
    ratings: dict[str, float] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        try:
            ratings[fields[0].lower()] = float(fields[1])
        except (IndexError, ValueError):
            raise OpinionLexiconError(
                f"{LEXICON_FILE} line {number} is not 'word<TAB>mean rating<TAB>...': {line[:60]!r}"
            ) from None
    return ratings
