"""What the language resources of :mod:`edits` refuse to run without.

:class:`WordNetMissingError` says the WordNet files that synonyms, antonyms and name swaps read
are not installed; :class:`OpinionLexiconError` that the sentiment lexicon gating
label-changing edits is missing or unreadable. Each message names what to install. This module
imports nothing.

Example:
    >>> from edits.wordnet import load_wordnet
    >>> try:
    ...     load_wordnet("/nowhere")
    ... except WordNetMissingError as error:
    ...     print(error)
    WordNet 3.0 files not found in /nowhere (missing index.noun, ...): install Debian's wordnet-base ...
"""

from __future__ import annotations


class WordNetMissingError(FileNotFoundError):
    """The WordNet 3.0 database files are not where bibi looks (see :mod:`edits.wordnet`)."""


class OpinionLexiconError(RuntimeError):
    """The VADER sentiment lexicon that gates label-changing edits (:mod:`edits.opinion`)
    is not installed, or a line of it cannot be read."""
