"""edits: the language of machine-made edits, in pure Python (no torch, no models, no Django).

The modules, lowest first:

* :mod:`edits.words`: words as the generators see them (``split_words``).
* :mod:`edits.errors`: :class:`WordNetMissingError`, :class:`OpinionLexiconError`.
* :mod:`edits.wordnet`: WordNet 3.0 read offline (:func:`load_wordnet`, :class:`WordNet`).
* :mod:`edits.fluency`: how a word reads in its sentence and what may replace it
  (``lemminflect``, ``wordfreq``).
* :mod:`edits.opinion`: which words carry an opinion (VADER's lexicon).
* :mod:`edits.clauses`: whether a text is one clause, and where ``not`` goes.
* :mod:`edits.claims`: the ONE rule of what a machine-made edit claims: keeps the label, changes
  it (*label unverified*), or a probe that claims nothing (:func:`edit_claim`).
* :mod:`edits.edited`: what an edit is (:class:`Edit`, :class:`Perturbation`) and the closed
  word classes.
* :mod:`edits.names`, :mod:`edits.negation`: name swaps (a capitalised person's name in its
  sentence) and negation edits (claimed only where the clause supports them, else probes).
* :mod:`edits.perturbations`: the generators (:func:`synonym_swaps`, :func:`antonym_swaps`,
  :func:`name_swaps`, :func:`keyboard_typos`, :func:`negation_edits`).

fim_engine ranks and verifies edits with a model (its suggestions, the embedding neighbours);
edits makes them. Names are imported on first use (PEP 562), and the heavy resources (WordNet,
VADER's lexicon, ``lemminflect``'s and ``wordfreq``'s tables) load on first use too: ``import
edits.claims`` costs the web process nothing.

Example:
    >>> from edits import antonym_swaps, edit_claim
    >>> (swap,) = antonym_swaps("a good film")
    >>> swap.text, edit_claim(swap.kind, original_label="pos", labels=["neg", "pos"])
    ('a bad film', Claim(kind='changes', label='neg'))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # For type checkers only; at run time __getattr__ below imports on first use.
    from edits.claims import (  # noqa: F401
        Claim,
        changed_label,
        edit_claim,
        edit_kind,
        pair_unverified,
        stated_kind,
    )
    from edits.errors import OpinionLexiconError, WordNetMissingError  # noqa: F401
    from edits.perturbations import (  # noqa: F401
        Edit,
        Perturbation,
        Replacement,
        antonym_swaps,
        keyboard_typos,
        name_swaps,
        negation_edits,
        synonym_swaps,
    )
    from edits.wordnet import WordNet, load_wordnet  # noqa: F401
    from edits.words import split_words  # noqa: F401

# Public name → the module that defines it.
_EXPORTS = {
    "claims": (
        "Claim",
        "changed_label",
        "edit_claim",
        "edit_kind",
        "pair_unverified",
        "stated_kind",
    ),
    "errors": ("OpinionLexiconError", "WordNetMissingError"),
    "perturbations": (
        "Edit",
        "Perturbation",
        "Replacement",
        "antonym_swaps",
        "keyboard_typos",
        "name_swaps",
        "negation_edits",
        "synonym_swaps",
    ),
    "wordnet": ("WordNet", "load_wordnet"),
    "words": ("split_words",),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'edits' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"edits.{module}"), name)
    # Later lookups find it in the module dict and skip this function.
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
