"""The fluency gate of one-word substitutions: how a word reads in its sentence, and what may replace it.

A substitution is offered only when the new word reads as naturally in the sentence as the old
one did. Without a part-of-speech tagger, each word's *reading* (part of speech and Penn tag) is
taken from ``lemminflect``'s lemma tables and WordNet, narrowed by the word before it; a word
whose reading stays ambiguous (*steals*: a plural noun or a verb?) gets no substitution. The gate
(:func:`inflected_replacement`) then asks of a WordNet lemma that would replace it:

1. it is one plain word (no ``_``, ``-`` or digits);
2. it is the same part of speech, re-inflected to the word's tag with ``lemminflect`` (*stole*
   → *took*, *films* → *movies*); when the word's form has several tags of that part of speech
   (*loved*: past tense or participle) every tag must give the same form;
3. the inflected form is common: Zipf frequency ≥ ``ZIPF_FLOOR`` (3.0, about once per million
   words) in ``wordfreq``'s English list (*awheel* is 0, *purloins* 1.6), and at most
   ``ZIPF_DROP_MAX`` (1.5) below the word it replaces (*wonderful* → *howling*, *worth* →
   *deserving* refused);
4. the sense that relates the two words is the replacement's own most frequent sense of that
   part of speech (``SUBSTITUTE_SENSES`` = 1): *film* → *movie* (both first senses), not *film*
   → *picture* (a picture is first an image), not *story* → *narration*;
5. the word is not part of a WordNet compound with the next word (*special effects*), nor a
   verb before a particle (*lets up*), nor a quantifier or negation (*nothing* → *zero*).

Proper names get no synonyms (:func:`is_proper_name`): a word capitalised inside a sentence, or
a noun WordNet knows as a particular person (*john* is a toilet to WordNet, *can* another).

The closed word classes here (``DETERMINERS``, ``SUBJECTS``, ``DEGREE``) are also what the clause
rules of :mod:`edits.clauses` read. This module does not import torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import lemminflect
from wordfreq import zipf_frequency

# Zipf scale: 3 is a word seen about once per million words of running English.
ZIPF_FLOOR = 3.0
# A replacement at most this much rarer than the word it replaces (1.5 on the Zipf scale:
# about 30 times rarer): *wonderful* (4.9) → *howling* (3.3) or *story* (5.5) → *narration*
# (3.3) read oddly even where WordNet calls them synonyms.
ZIPF_DROP_MAX = 1.5
# The related sense must be among this many most frequent senses of the replacement.
SUBSTITUTE_SENSES = 1
WORDNET_POS = {"NOUN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
BASE_TAG = {"NOUN": "NN", "VERB": "VB", "ADJ": "JJ", "ADV": "RB"}


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


DETERMINERS = _set(
    "a an the this that these those my your his her its our their some any every each no "
    "another such"
)
SUBJECTS = _set("i you he she it we they who")
# Not "to": "from start to finish" is no infinitive.
_MODALS = _set("can could will would shall should may might must do does did")
DEGREE = _set("very so too quite rather really more most less least pretty")
COPULAS = _set("is are was were am be been being 's 're 'm seems seem seemed")
SENTENCE_ENDS = frozenset(".!?")
# Particles that make a phrasal verb of the verb before them ("lets up", "comes off").
PARTICLES = _set("up down out off in on over away back around through along")
# Words whose swap changes what is claimed (quantifiers) or is no fluent substitution.
NO_SUBSTITUTE = _set(
    "nothing everything something anything nobody everybody somebody anybody none all some "
    "every any always never sometimes often rarely seldom zero one two three four five six "
    "seven eight nine ten hundred thousand million first second third last much many more "
    "most little few less least"
)


@dataclass(frozen=True)
class Reading:
    """How a word reads in its sentence: its part of speech (``NOUN``, ``VERB``, ``ADJ``,
    ``ADV``), its lemma and the Penn tags its form has there."""

    pos: str
    lemma: str
    tags: tuple[str, ...]

    @property
    def wordnet_pos(self) -> str:
        return WORDNET_POS[self.pos]


def readings(word: str) -> list[Reading]:
    """Every part of speech the form ``word`` can have, with lemma and tags, in a fixed order."""
    return list(_readings(word.lower()))


@lru_cache(maxsize=20000)
def _readings(form: str) -> tuple[Reading, ...]:
    found: list[Reading] = []
    for pos, lemmas in sorted(lemminflect.getAllLemmas(form).items()):
        if pos not in WORDNET_POS:
            continue
        for lemma in sorted(lemmas):
            tags = _tags_of(form, lemma, pos)
            if tags:
                found.append(Reading(pos, lemma, tags))
    return tuple(found)


def _tags_of(form: str, lemma: str, pos: str) -> tuple[str, ...]:
    tags = {BASE_TAG[pos]} if form == lemma else set()
    for tag, forms in lemminflect.getAllInflections(lemma, upos=pos).items():
        if form in forms:
            tags.add(tag)
    if pos == "VERB" and "VB" in tags:
        tags.add("VBP")
    return tuple(sorted(tags))


def reading_in_context(
    word: str, before: str, after: str = "", adjective: bool = False
) -> Reading | None:
    """The one reading of ``word`` between the words ``before`` and ``after`` ("" at either end
    of the text), or None when it stays ambiguous. ``adjective`` says WordNet knows the form as
    an adjective itself (*charming*, *moving*), which ``lemminflect`` lists only as a verb form.
    After a determiner, a word that could be an adjective or a noun is an adjective before a
    word that can be a noun (*a good film*), else a noun."""
    options = readings(word)
    if adjective and not any(r.pos == "ADJ" for r in options):
        options.append(Reading("ADJ", word.lower(), ("JJ",)))
    previous = before.lower()
    if previous in DETERMINERS:
        options = [r for r in options if r.pos in ("NOUN", "ADJ")]
        if len({r.pos for r in options}) > 1:
            noun_next = any(r.pos == "NOUN" for r in readings(after)) if after.isalpha() else False
            options = [r for r in options if r.pos == ("ADJ" if noun_next else "NOUN")]
    elif previous in SUBJECTS:
        options = [r for r in options if r.pos in ("VERB", "ADV")]
    elif previous in _MODALS:
        options = [r for r in options if r.pos in ("VERB", "ADV") and "VB" in r.tags]
    elif previous in DEGREE or previous in COPULAS:
        options = [r for r in options if r.pos in ("ADJ", "ADV")]
        if len(options) > 1 and previous in COPULAS:
            options = [r for r in options if r.pos == "ADJ"]
    if len({r.pos for r in options}) > 1 and adjective:
        # A form WordNet lists as an adjective, after a word that leaves it open, is left alone.
        return None
    if len(options) != 1:
        return None
    return options[0]


def inflected_replacement(
    lemma: str, reading: Reading, before: str = "", replacing: str = ""
) -> str | None:
    """``lemma`` (a WordNet lemma name) in the tags of ``reading``, or None when the gate
    (module docstring, points 1–3) refuses it, or when it would not fit the article ``before``
    it (*a* before a vowel, *an* before a consonant). ``replacing``: the word it replaces,
    for the relative frequency floor."""
    if not lemma.isalpha() or not lemma.isascii():
        return None
    forms = set()
    for tag in reading.tags:
        if tag in BASE_TAG.values():
            forms.add(lemma)
            continue
        inflected = lemminflect.getInflection(lemma, tag=tag, inflect_oov=False)
        if not inflected:
            return None
        forms.add(inflected[0])
    if len(forms) != 1:
        return None
    (form,) = forms
    article = before.lower()
    if article in ("a", "an") and (article == "an") != (form[:1].lower() in "aeiou"):
        return None
    frequency = zipf_frequency(form, "en")
    if frequency < ZIPF_FLOOR:
        return None
    if replacing and frequency < zipf_frequency(replacing, "en") - ZIPF_DROP_MAX:
        return None
    if not any(r.pos == reading.pos for r in readings(form)):
        return None  # "iii" for "three": no word of that part of speech to lemminflect
    return form


def common(word: str) -> bool:
    """Whether ``word`` passes the frequency floor (``ZIPF_FLOOR``)."""
    return zipf_frequency(word, "en") >= ZIPF_FLOOR


def is_proper_name(word: str, before: str, *, person: bool) -> bool:
    """Whether ``word`` is a name: capitalised after another word of its sentence, or
    ``person`` (WordNet knows the noun as a particular person)."""
    capitalised_inside = (
        word[:1].isupper() and not word.isupper() and bool(before) and before not in SENTENCE_ENDS
    )
    return capitalised_inside or person
