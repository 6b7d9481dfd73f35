"""Negation edits: ``not`` put into a text of one clause, or its one negation taken out
(meant to change the label, claimed only where the clause supports it; :func:`negation_edits`).
This module does not import torch.
"""

from __future__ import annotations

from collections.abc import Sequence

import lemminflect

from edits.claims import KEEPS_LABEL, NEGATION
from edits.clauses import AUXILIARY_FORMS, BE, DO, SENTENCE_ADVERBS, clause_head, single_clause
from edits.edited import (
    FUNCTION_WORDS,
    LISTING,
    NEGATION_WORDS,
    NEGATIONS,
    Edit,
    Perturbation,
    match_case,
    word_set,
)
from edits.fluency import DEGREE, DETERMINERS, SENTENCE_ENDS, SUBJECTS, readings
from edits.opinion import OPINION_MIN, opinion_signs, opinion_words
from edits.words import split_words

# The negations that ``negation_edits`` removes ("no" rarely leaves a sentence behind).
_REMOVABLE = frozenset({"not", "n't", "never"})
# Words that need a negation before them: a removal would leave "can act a lick" behind.
_POLARITY_ITEMS = word_set(
    "any anything anyone anybody anywhere ever either lick ounce yet whatsoever anymore"
)
# Hosts whose "n't" form is irregular: "ca n't" → "can", "wo n't" → "will".
_NEGATED_HOSTS = {"ca": "can", "wo": "will", "sha": "shall"}


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
_PHRASE_ENDS = word_set(
    "at in on with for to that about by from than like as into during while after before "
    "without despite since until"
)
# Fronted words that invert the clause: "So concerned is not the film with ...".
_FRONTED = word_set("so such only never rarely seldom little hardly scarcely nor neither not")
# Idioms whose negation is their meaning: "can not deny", "ca n't help", "ca n't wait".
_NEGATED_IDIOMS = word_set("deny help resist wait overstate beat fail miss")
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
    ("Do n't see this film" holds its opinion in the negation), but none in a phrase after the
    verb's own either ("does n't sustain its promise with a jarring tone")."""
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
    if opinion_words(outside):
        found = ", ".join(map(repr, opinion_words(outside)))
        return f"an opinion in a phrase after the verb's own ({found}) is not reversed"
    if len(opinion_signs(core)) > 1:
        return f"opinions of both signs in the predicate ({', '.join(map(repr, inside))})"
    listed = any(w in LISTING for w in core) and core[:1] != [] and core[0] not in DETERMINERS
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
