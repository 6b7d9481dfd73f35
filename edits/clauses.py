"""Clauses: the shape a text needs before a label-changing edit can decide its label.

A label-changing edit (a WordNet antonym, ``not`` put in, a negation taken out) reverses the
sentence's claim only when the edited clause is the whole claim. In a text of several clauses it
reverses one of them ("The cast is good , but the plot is not thin"), and a phrase set off by a
comma, a dash or brackets keeps its own opinion ("not a shameless sham , calculated to cash
in"). Without a parser, :func:`single_clause` reads the shape from closed-class words and the
word readings of :mod:`edits.fluency`, and refuses a text with any of:

1. a sentence end inside it, a semicolon, a colon, a dash (``--``, ``—``) or brackets; a
   question mark (a rhetorical question's label does not follow its words);
2. a word that starts a clause (``CLAUSE_WORDS``: *but*, *yet*, *though*, *because*, *which*,
   *what*, *why*, *except*, ...); *that*, *like*, *as* or *than* before a subject (*that it*,
   *as it is*, *like you could*);
3. a subject pronoun after the first word (*every scene she is in*); *it*, *you* (objects as
   often) and *that* only before a verb (*a movie it is*, *a film that never takes off*);
4. *and* or *or* before a subject (*and the cast is*), an auxiliary (*and did n't*) or a tensed
   verb of its own (*and turned it into*); a verb in its base form shares the auxiliary
   (*will amuse and provoke*);
5. a comma anywhere but between adjectives (*a charming , funny and moving story*): elsewhere
   it sets off a phrase (*at its best ,*; *, capable of*; *, with*), a clause, or a contrast
   (*not horrible , just mediocre*);
6. more than one predicate: verb groups (:func:`verb_groups`: *has been*, *wo n't*, *'ll*) and
   verbs that can only be a present tense (*explores*, *appears*; not *features*, a noun too).

:func:`clause_head` then finds the copula or auxiliary after which ``not`` goes, where it reads
as the negation of the whole clause. This module does not import torch.

Example:
    >>> single_clause("the film is a jolly surprise .".split())
    True
    >>> single_clause("it appears that something has been lost .".split())
    False
"""

from __future__ import annotations

from collections.abc import Sequence

from edits.fluency import (
    DEGREE,
    DETERMINERS,
    NO_SUBSTITUTE,
    PARTICLES,
    SENTENCE_ENDS,
    SUBJECTS,
    readings,
)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words that join or start a clause of their own.
CLAUSE_WORDS = _words(
    "but although though while whereas because since unless until till if when whenever which "
    "who whom whose what whatever why how where wherever whether however yet nevertheless "
    "otherwise despite except"
)
_COORDINATORS = frozenset({"and", "or", "nor", "so"})
# Words that start a clause when a subject follows: "that it", "as it is", "like you could".
_BEFORE_SUBJECT = frozenset({"that", "like", "as", "than"})
CLAUSE_MARKS = frozenset(";:—–")
# Brackets as typed and as the Penn Treebank writes them ("-lrb-" splits as "-", "lrb", "-").
_BRACKETS = frozenset("()[]{}") | {"lrb", "rrb", "lsb", "rsb", "lcb", "rcb"}
HAVE = frozenset({"has", "have", "had"})
DO = frozenset({"do", "does", "did"})
BE = frozenset({"is", "are", "was", "were", "am", "be", "been", "being"})
MODAL_AUXILIARIES = _words("will would can could shall should may might must")
# Clitic and negated forms of auxiliaries: "'ll bet", "wo n't", "ca n't".
_CLITIC_AUXILIARIES = frozenset({"'s", "'re", "'m", "'ll", "'d", "'ve", "wo", "ca", "sha"})
AUXILIARY_FORMS = BE | HAVE | DO | MODAL_AUXILIARIES | _CLITIC_AUXILIARIES
# Adverbs that may stand between an auxiliary and its verb ("has also won").
BETWEEN = _words("also really just still already always never ever even truly")
# Quantifiers whose scope a "not" after the head would tangle with: "few films have not been".
_QUANTIFIERS = _words("few many all every any each some most no none both several")
# Sentence adverbs that read wrong after an inserted "not": "will not probably stay".
_SENTENCE_ADVERBS = _words(
    "also still already just even ever only simply actually apparently probably possibly "
    "definitely certainly surely clearly obviously perhaps maybe indeed undoubtedly arguably "
    "finally again easily thus therefore oddly strangely surprisingly curiously remarkably "
    "unfortunately fortunately admittedly frankly honestly pretty rather fairly "
    "somewhat best"
)

SENTENCE_ADVERBS = _SENTENCE_ADVERBS


def single_clause(words: Sequence[str]) -> bool:
    """Whether the words (``edits.words.split_words``) make one clause, with nothing set
    off from it (module docstring, points 1–6)."""
    lowered = [w.lower() for w in words]
    body = lowered
    while body and body[-1] in SENTENCE_ENDS:
        body = body[:-1]
    if not body or "?" in lowered:
        return False
    if any(w in SENTENCE_ENDS or w in CLAUSE_MARKS or w in CLAUSE_WORDS for w in body):
        return False
    if any(w in _BRACKETS for w in body) or _has_dash(body):
        return False
    for index, word in enumerate(body):
        following = body[index + 1] if index + 1 < len(body) else ""
        if word == "," and not _between_adjectives(body, index):
            return False
        if word in _COORDINATORS and _starts_predicate(following):
            return False
        if word in _BEFORE_SUBJECT and following in SUBJECTS:
            return False
        if index > 0 and (
            word in SUBJECTS - {"it", "you"}
            or (word in {"that", "it", "you"} and _verb_like(following))
        ):
            return False
    return len(verb_groups(body)) + len(_bare_present_verbs(body)) <= 1


def _has_dash(words: Sequence[str]) -> bool:
    """Two hyphens in a row: "--", typed or from the Penn Treebank ("a film -- a mess")."""
    return any(a == b == "-" for a, b in zip(words, words[1:], strict=False))


def _starts_predicate(word: str) -> bool:
    """Whether ``word`` after *and*/*or* starts a clause or a verb phrase of its own: a
    subject, a determiner, an auxiliary, or a tensed verb that can be nothing else."""
    if word in SUBJECTS or word in DETERMINERS or word in AUXILIARY_FORMS:
        return True
    options = readings(word)
    return bool(options) and all(
        r.pos == "VERB" and not {"VB", "VBP", "VBG"} & set(r.tags) for r in options
    )


def _between_adjectives(words: Sequence[str], comma: int) -> bool:
    """Whether the comma at ``comma`` joins two adjectives of a list ("charming , funny"),
    degree words and adverbs before the second one aside ("depressed , mostly inarticulate")."""
    after = comma + 1
    while after < len(words) and _adverb(words[after]):
        after += 1
    following = words[after] if after < len(words) else ""
    before = words[comma - 1] if comma > 0 else ""
    if before in PARTICLES or following in PARTICLES | _SENTENCE_ADVERBS:
        return False  # "for a shoot - 'em - up , ballistic is", "not bad , just dull"
    return _adjective_like(before) and any(r.pos == "ADJ" for r in readings(following))


def _adverb(word: str) -> bool:
    """A degree word or an adverb and nothing else (*very*, *mostly*), but not a sentence
    adverb (*just*, *only*), which starts a contrast after a comma: "not horrible , just dull"."""
    options = readings(word)
    if word in _SENTENCE_ADVERBS:
        return False
    return word in DEGREE or (bool(options) and all(r.pos == "ADV" for r in options))


def _adjective_like(word: str) -> bool:
    """An adjective, or a participle that may read as one (*charming*, *depressed*)."""
    return any(
        r.pos == "ADJ" or (r.pos == "VERB" and {"VBG", "VBN", "VBD"} & set(r.tags))
        for r in readings(word)
    )


def _verb_like(word: str) -> bool:
    """Whether ``word`` can start a verb phrase (an auxiliary, an adverb like *never*, a verb)."""
    if word in AUXILIARY_FORMS or word in BETWEEN:
        return True
    return any(r.pos == "VERB" and r.tags != ("VB",) for r in readings(word))


def _bare_present_verbs(words: Sequence[str]) -> list[int]:
    """Indexes of verbs that can only be a present tense (*explores*: no noun *explores*) and
    stand in no verb group: each is a predicate of its own. Parts of a hyphenated word
    (*by-the-numbers*) are left out."""
    found = []
    for index, word in enumerate(words):
        options = readings(word)
        if word in AUXILIARY_FORMS or not options:
            continue
        if not all(r.pos == "VERB" and "VBZ" in r.tags for r in options):
            continue
        before = words[index - 1] if index > 0 else ""
        after = words[index + 1] if index + 1 < len(words) else ""
        if "-" in (before, after) or before in AUXILIARY_FORMS:
            continue
        found.append(index)
    return found


def _listed_predicate(rest: Sequence[str]) -> bool:
    """Whether what follows the head is a list of adjectives ("too long and too loud", "funny,
    smart and sweet", "uniformly excellent and relaxed", "as dull and as long"), where an
    inserted "not" has no clear scope."""
    first = next((w for w in rest if w != "as" and not _adverb(w)), "")
    adjective = any(r.pos == "ADJ" for r in readings(first))
    return adjective and any(w in _COORDINATORS or w == "," for w in rest)


def verb_groups(words: Sequence[str]) -> list[int]:
    """Indexes of the auxiliaries and copulas that start a verb group: an auxiliary after
    another, negations and adverbs between them aside, belongs to its group ("has been", "wo
    n't be", "has never been"), and one after an article is a noun ("a can of soda")."""
    starts = []
    for index, word in enumerate(words):
        if word not in AUXILIARY_FORMS:
            continue
        before = index - 1
        while before >= 0 and words[before] in BETWEEN | {"not", "n't"}:
            before -= 1
        # After another auxiliary it is of its group; after an article a noun ("a can").
        if before >= 0 and words[before] in AUXILIARY_FORMS | {"a", "an", "the"}:
            continue
        starts.append(index)
    return starts


def clause_head(words: Sequence[str]) -> int | None:
    """The index of the copula or auxiliary that heads the text's only clause, where ``not``
    can go after it; None when the text is not one clause (:func:`single_clause`); when its
    verb group has no such head (*has* as a main verb: "It has its flaws"; *do* before no verb;
    *being*, no tensed verb: "the gimmick of being filmed"); when the group sits in a clause
    after *that* or *than* ("a film that critics will love"); or when ``not`` after it would not
    read as the clause's negation: after existential *there* ("there are not plot holes":
    English says *no*), after a quantifier ("few films have not been"), before a sentence
    adverb ("will not probably stay", "is not pretty dicey"), a clitic ("would not 've been")
    or a quantifier ("not much weaker" still says weaker), or before a list of adjectives
    ("is not uniformly excellent and relaxed": which does it deny?).

    Example:
        >>> clause_head("the kids will love it .".split())
        2
    """
    lowered = [w.lower() for w in words]
    if not single_clause(lowered):
        return None
    groups = verb_groups(lowered)
    if len(groups) != 1:
        return None
    index = groups[0]
    head = lowered[index]
    before = lowered[index - 1] if index > 0 else ""
    after = lowered[index + 1] if index + 1 < len(lowered) else ""
    if before in ("to", "there") or after in NO_SUBSTITUTE or after in _SENTENCE_ADVERBS:
        # "seems to have lost" has no head of its own.
        return None
    if head in ("be", "been", "being") or {head, after} & _CLITIC_AUXILIARIES:
        return None
    if _QUANTIFIERS.intersection(lowered[:index]) or {"that", "than"} & set(lowered[1:index]):
        return None
    if _listed_predicate(lowered[index + 1 :]):
        return None
    if head in BE or head in MODAL_AUXILIARIES:
        return index
    following = next((w for w in lowered[index + 1 :] if w not in BETWEEN), "")
    tags = {tag for r in readings(following) if r.pos == "VERB" for tag in r.tags}
    if head in HAVE and "VBN" in tags:
        return index
    if head in DO and "VB" in tags:
        return index
    return None
