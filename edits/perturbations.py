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
from dataclasses import dataclass

import lemminflect

from edits.claims import ANTONYM, KEEPS_LABEL, NAME, NEGATION, SYNONYM, TYPO, edit_kind
from edits.clauses import AUXILIARY_FORMS, BE, DO, SENTENCE_ADVERBS, clause_head, single_clause
from edits.fluency import (
    DEGREE,
    DETERMINERS,
    NO_SUBSTITUTE,
    PARTICLES,
    SENTENCE_ENDS,
    SUBJECTS,
    ZIPF_FLOOR,
    inflected_replacement,
    is_proper_name,
    reading_in_context,
    readings,
)
from edits.opinion import (
    OPINION_MIN,
    opinion_signs,
    opinion_words,
    opinions_note,
    opposite_opinions,
    same_opinion,
)
from edits.wordnet import WordNet, load_wordnet
from edits.words import split_words

# Surnames from several languages that carry no sentiment of their own.
NAMES = ("garcia", "nakamura", "okafor", "kowalski", "lindqvist", "haddad", "moreau", "novak")


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


AUXILIARIES = _word_set(
    "is are was were am be been being do does did has have had will would can could shall "
    "should may might must"
)
NEGATIONS = frozenset({"not", "n't", "never", "no"})
# Every word that negates: a text with two has a double negative whose label nobody can set by
# construction, and antonyms are not made in a text with one.
NEGATION_WORDS = NEGATIONS | {
    "neither", "nor", "nothing", "nobody", "none", "cannot", "nowhere", "without"
}  # fmt: skip
# The negations that ``negation_edits`` removes ("no" rarely leaves a sentence behind).
_REMOVABLE = frozenset({"not", "n't", "never"})
_LISTING = frozenset({",", "and", "or", "&"})
# Closed-class words: WordNet knows "a" as a unit of length and "i" as iodine, which is no
# substitution a breaker means. Synonym and antonym lookups skip these.
FUNCTION_WORDS = (
    AUXILIARIES
    | NEGATIONS
    | _word_set(
        "a an the this that these those some any each every all both either neither such what "
        "which who whom whose i me my mine we us our ours you your yours he him his she her hers it "
        "its they them their theirs one ones myself itself themselves yourself and or but nor so "
        "yet if then than because as while though although when where whether of in on at by for "
        "with without to from into onto about over under up down out off through during before "
        "after above below between against among around there here how why not very too also just "
        "only s ca wo sha"
    )
)
# Words that need a negation before them: a removal would leave "can act a lick" behind.
_POLARITY_ITEMS = _word_set(
    "any anything anyone anybody anywhere ever either lick ounce yet whatsoever anymore"
)
# Hosts whose "n't" form is irregular: "ca n't" → "can", "wo n't" → "will".
_NEGATED_HOSTS = {"ca": "can", "wo": "will", "sha": "shall"}
_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (``original``) by ``replacement``; ``start == end`` inserts."""

    start: int
    end: int
    original: str
    replacement: str

    def apply(self, text: str) -> str:
        return text[: self.start] + self.replacement + text[self.end :]


@dataclass(frozen=True)
class Replacement:
    """A candidate word for one word of a text, before it is put into the text. A ``probe``
    claims no label at all (``keeps_label`` is then only its source's intent)."""

    word: str
    source: str
    keeps_label: bool
    rationale: str
    probe: bool = False


@dataclass(frozen=True)
class Perturbation:
    """An edited text; see the module docstring for ``source``, ``keeps_label`` and ``probe``."""

    text: str
    edit: Edit
    source: str
    keeps_label: bool
    rationale: str
    probe: bool = False

    @property
    def kind(self) -> str:
        """``keeps``, ``changes`` or ``probe``: what the edit claims (:mod:`edits.claims`)."""
        return edit_kind(source=self.source, keeps_label=self.keeps_label, probe=self.probe)


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
_COMPLEX_PREPOSITION_ENDS = _word_set("of than to as from")
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
    return single_clause(words) and not any(w in NEGATION_WORDS or w in _LISTING for w in words)


def substitution(text: str, start: int, end: int, replacement: Replacement) -> Perturbation:
    """``text`` with ``text[start:end]`` replaced by ``replacement.word``."""
    edit = Edit(start, end, text[start:end], replacement.word)
    return Perturbation(
        edit.apply(text),
        edit,
        replacement.source,
        replacement.keeps_label,
        replacement.rationale,
        replacement.probe,
    )


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
_HONORIFICS = _word_set(
    "mr mrs ms dr miss sir lady lord queen king prince princess president senator general "
    "captain saint st father sister brother professor rabbi judge governor bishop pope emperor "
    "duke duchess count countess uncle aunt coach director actor actress"
)
# Nouns after a name that make it a company's, a film's or a thing's: "Disney pictures".
_NOT_A_PERSON_AFTER = _word_set(
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
        last = tokens[-1]
        _, last_start, last_end = words[run[-1]]
        following = text[last_end : last_end + 3]
        clitic = following[:2] == "'s" and not following[2:].isalpha()
        joined = following[:1] == "-" or (following[:1] == "'" and following[1:2].isalpha())
        if (joined and not clitic) or text[last_start - 1 : last_start] in ("-", "'"):
            continue  # part of a joined word: "Britten-Norman", "Terre'Blanche"
        if len(tokens) == 1 and not titled and wordnet.is_place(last):
            continue  # a person or a place: "the County of Kent"
        if last.lower() in pool and _name_word(last, wordnet):
            why = f"{last!r} is one of the replacement names"
        elif _name_word(last, wordnet) and any(wordnet.is_person(t) for t in tokens):
            why = f"{' '.join(tokens)!r} is a capitalised name, and WordNet knows a person of it"
        elif _name_word(last, wordnet) and titled:
            why = f"{last!r} is a capitalised name after the title {before!r}"
        elif (
            len(tokens) > 1
            and _surname_word(last, wordnet)
            and (_name_word(tokens[-2], wordnet) or tokens[-2].lower() in _HONORIFICS)
        ):
            why = (
                f"{' '.join(tokens)!r} is a capitalised name whose last word WordNet knows as a "
                "person"
            )
        else:
            continue
        found.append((words[run[-1]], why))
    return found


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


def negation_edits(text: str, *, probes: bool = False) -> list[Perturbation]:
    """Negate or affirm a text of one clause; both are meant to change the label.

    Into a text without any negation (``NEGATION_WORDS``), ``not`` goes after the copula or
    auxiliary that heads its only clause (:func:`edits.clauses.clause_head`: *is*, *can*,
    *has* before a participle, *did* before a verb; never after a main verb: not "It has not its
    flaws"), with a subject before it (not "So concerned is not the film", not a text that
    starts with its verb). From a text with exactly one negation, a ``not``, ``n't`` or
    ``never`` is removed (*did n't find* → *found*: no emphatic *did* left). A text of several
    clauses or with a phrase set off (:func:`edits.clauses.single_clause`), a double negative,
    or a removal that leaves a word needing the negation (``_POLARITY_ITEMS``: *at all*, *any*,
    *much*, *in years*) or a disjunction (*funny or original*) behind gets nothing.

    The edit claims the other label only where the clause shows that it reverses the opinion
    (:func:`negation_refusal`): the opinion words in the predicate, none of them ahead of the
    verb ("this gorgeous epic is not ..." still says gorgeous), of one sign ("somewhere between
    stylish and stupid"), inside the verb's own phrase (not in a phrase after *to*, *at*,
    *with*, ...), no list after the verb but one inside a noun phrase, and no degree or
    sentence adverb after the negation ("not uniformly superb" is mixed, not negative), no
    comparative ("has never looked better") or idiom ("can not deny") after a removed one.
    Otherwise, with ``probes``, the edit is given as a probe (``probe=True``: it claims no
    label, and its rationale says why); without, it is left out.
    """
    words = split_words(text, lowercase=False)
    tokens = [w for w, _, _ in words]
    lowered = [w.lower() for w in tokens]
    if not single_clause(lowered):
        return []
    negations = [i for i, w in enumerate(lowered) if w in NEGATION_WORDS]
    if not negations:
        made = _negation_insertion(lowered, words)
    elif len(negations) == 1 and lowered[negations[0]] in _REMOVABLE:
        made = _negation_removal_edit(text, lowered, words, negations[0])
    else:
        return []
    if made is None:
        return []
    edit, rationale, refusal = made
    if refusal is not None:
        if not probes:
            return []
        rationale = f"{rationale}: a probe of the model that claims no label ({refusal})"
    else:
        rationale += "; meant to change the label"
    return [
        Perturbation(
            edit.apply(text),
            edit,
            NEGATION,
            KEEPS_LABEL[NEGATION],
            rationale,
            probe=refusal is not None,
        )
    ]


# Words that end the verb's own phrase: an opinion after them is in a phrase of its own
# ("should not have a stirring time at this beautifully drawn movie").
_PHRASE_ENDS = _word_set(
    "at in on with for to that about by from than like as into during while after before "
    "without despite since until"
)
# Fronted words that invert the clause: "So concerned is not the film with ...".
_FRONTED = _word_set("so such only never rarely seldom little hardly scarcely nor neither not")
# Idioms whose negation is their meaning: "can not deny", "ca n't help", "ca n't wait".
_NEGATED_IDIOMS = _word_set("deny help resist wait overstate beat fail miss")
# Phrases after a negation that read as its degree: "not a bit like", "not one bit".
_DEGREE_PHRASES = (("a", "bit"), ("a", "lot"), ("one", "bit"), ("in", "the", "least"))


def _subject_word(word: str) -> bool:
    """Whether ``word`` can end a subject: a pronoun, a noun, or a word no table knows (a
    name); not an adjective, participle or adverb alone ("so concerned is")."""
    if word in SUBJECTS or word in {"this", "that", "these", "those", "one", "'s"}:
        return True
    if word in FUNCTION_WORDS:
        return False
    options = readings(word)
    return not options or any(r.pos == "NOUN" for r in options)


def _degree_after(lowered: Sequence[str], index: int) -> str | None:
    """The degree word, adverb or degree phrase at ``index`` (after a negation), if any."""
    word = lowered[index] if index < len(lowered) else ""
    for phrase in _DEGREE_PHRASES:
        if tuple(lowered[index : index + len(phrase)]) == phrase:
            return " ".join(phrase)
    options = readings(word)
    if word in DEGREE or word in SENTENCE_ADVERBS or word in {"that", "as", "all", "even"}:
        return word
    if options and all(r.pos == "ADV" for r in options) and word not in NEGATIONS:
        return word
    return None


def negation_refusal(
    lowered: Sequence[str], head: int, after: int, *, removal: bool = False
) -> str | None:
    """Why ``not`` after (or removed after) the verb at ``head`` would not reverse the text's
    opinion, or None when it would: ``after`` is the index of the first word after the
    negation (:func:`negation_edits`' docstring). A ``removal`` needs no opinion word after it
    ("Do n't see this film" holds its opinion in the negation)."""
    # An opinion ahead of the verb stays as it was: the edit must leave it agreeing with the
    # new predicate ("The wasted cast will not love it"; not "This gorgeous epic is not ...",
    # nor "This beautifully animated epic is dull" from "... is never dull").
    predicate = opinion_signs(lowered[after:])
    clash = predicate if not removal else {-sign for sign in predicate}
    if opinion_signs(lowered[:head]) & clash:
        ahead = ", ".join(map(repr, opinion_words(lowered[:head])))
        return f"an opinion ahead of the verb ({ahead}) would disagree with the edited predicate"
    degree = _degree_after(lowered, after)
    if degree is not None:
        return f"{degree!r} after the negation: it would deny a degree, not the opinion"
    rest = list(lowered[after:])
    stop = next((i for i, w in enumerate(rest) if w in _PHRASE_ENDS), len(rest))
    core, outside = rest[:stop], rest[stop:]
    inside = opinion_words(core)
    if not inside and not removal:
        return "no opinion word in the verb's own phrase"
    if opinion_words(outside) and not removal:
        found = ", ".join(map(repr, opinion_words(outside)))
        return f"an opinion in a phrase after the verb's own ({found}) is not reversed"
    if len(opinion_signs(core)) > 1:
        return f"opinions of both signs in the predicate ({', '.join(map(repr, inside))})"
    listed = any(w in _LISTING for w in core) and core[:1] != [] and core[0] not in DETERMINERS
    if listed or any(w in {"and", "or", "nor"} for w in outside):
        return "a list after the verb: which part would the negation deny?"
    return None


def _negation_insertion(
    lowered: Sequence[str], words: Sequence[tuple[str, int, int]]
) -> tuple[Edit, str, str | None] | None:
    head = clause_head(lowered)
    if head is None or head == 0 or lowered[0] in _FRONTED:
        return None
    if not _subject_word(lowered[head - 1]):
        return None  # an inverted clause: "So concerned is not the film with ..."
    edit = Edit(words[head][2], words[head][2], "", " " + match_case(words[head][0], "not"))
    kind = "copula" if lowered[head] in BE else "auxiliary"
    opinions = list(dict.fromkeys(opinion_words(lowered[head + 1 :])))
    rationale = (
        f"inserts 'not' after the {kind} {words[head][0]!r} that heads the text's only clause"
    )
    if opinions:
        rationale += (
            f", whose predicate holds the opinion word{'s' if len(opinions) > 1 else ''} "
            f"{', '.join(map(repr, opinions))} (|rating| >= {OPINION_MIN:g} in the VADER lexicon)"
        )
    refusal = negation_refusal(lowered, head, head + 1) or _comparative_refusal(lowered[head + 1 :])
    return edit, rationale, refusal


def _negation_removal_edit(
    text: str, lowered: Sequence[str], words: Sequence[tuple[str, int, int]], index: int
) -> tuple[Edit, str, str | None] | None:
    aux = index - 1
    if lowered[index] != "never" and (index == 0 or lowered[aux] not in AUXILIARY_FORMS):
        return None
    rest = lowered[index + 1 :]
    if all(w in SENTENCE_ENDS for w in rest):
        return None  # "topkapi this is not ." has no verb phrase left to affirm
    needs = sorted(_POLARITY_ITEMS.intersection(rest) | ({"or", "nor"} & set(rest)))
    if any(rest[i : i + 2] == ["at", "all"] for i in range(len(rest))):
        needs.append("at all")
    if any(rest[i : i + 2] == ["in", "years"] for i in range(len(rest))):
        needs.append("in years")
    if needs or "much" in rest:
        return None  # "I did find it spellbinding at all", "is very funny or original"
    verb_at = aux if lowered[index] != "never" else index
    if {"that", "which", "who"} & set(lowered[1:verb_at]):
        return None  # a negation in a relative clause: "in a manner that never overwhelms"
    if verb_at == 0 and lowered[0] not in {"do", "never"}:
        return None  # no subject: "does go far enough", "is hardly ..."
    tokens = [w for w, _, _ in words]
    edit: Edit | None = _negation_removal(text, list(words), index)
    if lowered[index] != "never" and lowered[aux] in DO and index + 1 < len(words):
        edit = _do_support_removal(text, list(words), aux, index + 1)
    if edit is None:
        return None
    rationale = f"removes the negation {tokens[index]!r}"
    following = lowered[index + 1]
    refusal = negation_refusal(lowered, verb_at, index + 1, removal=True)
    if refusal is None and following in _NEGATED_IDIOMS:
        refusal = f"'{tokens[index]} {tokens[index + 1]}' is an idiom whose meaning is the negation"
    if refusal is None:
        refusal = _comparative_refusal(rest)
    return edit, rationale, refusal


def _comparative_refusal(rest: Sequence[str]) -> str | None:
    """A comparative just after the negation: "has never looked better" is praise, "is not
    better than X" no plain reversal."""
    comparative = next((w for w in rest[:2] if _comparative(w)), None)
    if comparative is None:
        return None
    return f"a comparative after the negation ({comparative!r}) compares, it does not reverse"


def _comparative(word: str) -> bool:
    return word in {"more", "less", "better", "worse"} or any(
        "JJR" in r.tags or "RBR" in r.tags for r in readings(word)
    )


def _do_support_removal(
    text: str, words: list[tuple[str, int, int]], aux: int, verb: int
) -> Edit | None:
    """*did n't find* → *found*, *does n't work* → *works*, *Do n't see* → *See*: the
    auxiliary *do* goes with its negation, and the verb takes its tense; None when the word
    after the negation is no verb in its base form."""
    host, start, _ = words[aux]
    word, _, end = words[verb]
    if not any(r.pos == "VERB" and "VB" in r.tags for r in readings(word)):
        return None
    lemma = word.lower()
    tag = {"does": "VBZ", "did": "VBD"}.get(host.lower(), "VB" if aux == 0 else "VBP")
    form = lemma if tag in ("VB", "VBP") else (lemminflect.getInflection(lemma, tag=tag) or [""])[0]
    if not form:
        return None
    return Edit(start, end, text[start:end], match_case(host, form))


def _negation_removal(text: str, words: list[tuple[str, int, int]], index: int) -> Edit:
    word, start, end = words[index]
    if word.lower() == "n't" and index > 0:
        host, host_start, _ = words[index - 1]
        if host.lower() in _NEGATED_HOSTS:
            return Edit(
                host_start,
                end,
                text[host_start:end],
                match_case(host, _NEGATED_HOSTS[host.lower()]),
            )
        # "is n't" and "isn't" both become "is".
        while start > 0 and text[start - 1].isspace():
            start -= 1
        return Edit(start, end, text[start:end], "")
    # Take the following spaces along, or the preceding ones at the end of the text.
    stop = end
    while stop < len(text) and text[stop].isspace():
        stop += 1
    if stop == len(text):
        stop = end
        while start > 0 and text[start - 1].isspace():
            start -= 1
    return Edit(start, stop, text[start:stop], "")


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


def match_case(template: str, word: str) -> str:
    """``word`` in the case pattern of ``template``: UPPER, Capitalised or as it is."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
