"""What a machine-made edit is: the character span replaced (:class:`Edit`), a candidate
word (:class:`Replacement`) and the edited text with its source, intent and rationale
(:class:`Perturbation`, whose ``kind`` is :mod:`edits.claims`' rule), and the closed word
classes every generator reads. This module does not import torch.
"""

from __future__ import annotations

from dataclasses import dataclass

from edits.claims import edit_kind


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


AUXILIARIES = word_set(
    "is are was were am be been being do does did has have had will would can could shall "
    "should may might must"
)
NEGATIONS = frozenset({"not", "n't", "never", "no"})
# Every word that negates: a text with two has a double negative whose label nobody can set by
# construction, and antonyms are not made in a text with one.
NEGATION_WORDS = NEGATIONS | {
    "neither", "nor", "nothing", "nobody", "none", "cannot", "nowhere", "without"
}  # fmt: skip
LISTING = frozenset({",", "and", "or", "&"})
# Closed-class words: WordNet knows "a" as a unit of length and "i" as iodine, which is no
# substitution a breaker means. Synonym and antonym lookups skip these.
FUNCTION_WORDS = (
    AUXILIARIES
    | NEGATIONS
    | word_set(
        "a an the this that these those some any each every all both either neither such what "
        "which who whom whose i me my mine we us our ours you your yours he him his she her hers it "
        "its they them their theirs one ones myself itself themselves yourself and or but nor so "
        "yet if then than because as while though although when where whether of in on at by for "
        "with without to from into onto about over under up down out off through during before "
        "after above below between against among around there here how why not very too also just "
        "only s ca wo sha"
    )
)


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


def match_case(template: str, word: str) -> str:
    """``word`` in the case pattern of ``template``: UPPER, Capitalised or as it is."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
