"""A system's own nearest words: the neighbours of a word in its input-embedding space, the one
edit generator that needs a model, and how a word is put to a system on its own.

:func:`embedding_neighbours` and :func:`neighbour_swaps` are public; :func:`neighbour_table`
(the normalised embeddings of a system's content-word vocabulary, kept per system) and
:func:`word_items` serve :mod:`fim_engine.suggestions` too.

A neighbour is as often the word's opposite or an odd word as a synonym (*family* →
*shellshock*), so it is a probe of the model: it claims no label (:mod:`edits.claims`).

Example:
    >>> [r.word for r in embedding_neighbours(system, "Good", k=3)]
    ['Charming', 'Funny', 'Great']
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import torch

from edits.claims import KEEPS_LABEL, NEIGHBOUR
from edits.perturbations import (
    Perturbation,
    Replacement,
    is_content_word,
    match_case,
    substitution,
)
from edits.words import split_words
from fim_engine.sentence_pairs import SentencePair, TextItem
from fim_engine.system import System


def word_items(system: System, words: Sequence[str]) -> tuple[list[TextItem], str | None]:
    """Each of ``words`` as an item ``system`` reads, and the ``editable`` under which the
    item's editable tokens are the word's own: the word alone, or, for a model that reads
    sentence pairs only, the pair (word, word) with its premise counted (a word's pieces
    do not depend on the segment it stands in)."""
    if "text" in system.backend.inputs:
        return list(words), None
    return [SentencePair(word, word) for word in words], "premise"


def word_tokens(system: System, word: str) -> list[int]:
    """The token ids ``system`` encodes ``word`` alone into (special tokens left out)."""
    items, editable = word_items(system, [word])
    (tokens,) = system.editable_items(items, editable)
    return [i for i, w in zip(tokens.input_ids, tokens.word_index, strict=True) if w >= 0]


def embedding_neighbours(system: System, word: str, *, k: int = 10) -> list[Replacement]:
    """The ``k`` vocabulary words nearest to ``word`` in ``system``'s input-embedding space
    (cosine), content words only, nearest first, in the word's case.

    Only a word that the system encodes as one token has neighbours (``[]`` otherwise).
    """
    ids = word_tokens(system, word)
    if len(ids) != 1:
        return []
    return neighbour_table(system).nearest(ids[0], word, k, "the system")


def neighbour_swaps(text: str, system: System, *, k: int = 5) -> list[Perturbation]:
    """One perturbation per word of ``text`` (:func:`edits.words.split_words`) and each of
    its ``k`` embedding neighbours in ``system`` (:func:`embedding_neighbours`)."""
    return [
        substitution(text, start, end, replacement)
        for word, start, end in split_words(text, lowercase=False)
        if is_content_word(word)
        for replacement in embedding_neighbours(system, word, k=k)
    ]


class NeighbourTable:
    """The unit-normalised input embeddings of a system's content-word vocabulary."""

    def __init__(self, system: System) -> None:
        entries = [(i, w) for i, w in system.vocabulary_words() if is_content_word(w)]
        weight = system.backend.embedding_weight().detach().double()
        self.ids = torch.tensor([i for i, _ in entries], dtype=torch.long, device=weight.device)
        self.words = [w for _, w in entries]
        self.weight = weight
        self.unit = torch.nn.functional.normalize(weight[self.ids], dim=-1)

    def nearest(self, token: int, word: str, k: int, where: str) -> list[Replacement]:
        """The ``k`` content words nearest to the token ``token`` (the word ``word``), each a
        neighbour replacement whose rationale names ``where`` the embeddings come from."""
        if not len(self.words) or k == 0:
            return []
        query = torch.nn.functional.normalize(self.weight[token], dim=-1)
        cosine = self.unit @ query
        order = torch.argsort(cosine, descending=True, stable=True).tolist()  # ties by id
        found: list[Replacement] = []
        lowered = word.lower()
        for index in order:
            if len(found) == k:
                break
            candidate = self.words[index]
            if candidate.lower() == lowered:
                continue
            found.append(
                Replacement(
                    match_case(word, candidate),
                    NEIGHBOUR,
                    KEEPS_LABEL[NEIGHBOUR],
                    f"nearest neighbour of {word!r} in the input-embedding space of {where} (cosine "
                    f"{float(cosine[index]):.2f}): a probe of the model that claims no label",
                )
            )
        return found


_TABLES: weakref.WeakKeyDictionary[System, NeighbourTable] = weakref.WeakKeyDictionary()


def neighbour_table(system: System) -> NeighbourTable:
    """``system``'s :class:`NeighbourTable`, built on first use and kept while it lives."""
    if system not in _TABLES:
        _TABLES[system] = NeighbourTable(system)
    return _TABLES[system]
