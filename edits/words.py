"""Words as bibi-native models and the perturbation generators see them (no torch here).

Words are split on whitespace and punctuation, with PTB-style clitics (``n't``, ``'s``) as words
of their own, the way the SST-2 files are tokenized.
"""

from __future__ import annotations

import re

# Clitics first so "don't" splits as "do" + "n't" like the SST-2 files; the last branch makes
# every other non-space, non-word character a word of its own.
_WORD_PATTERN = re.compile(r"\w+(?=n't\b)|n't\b|'\w+|\w+|[^\w\s]", re.IGNORECASE)


def split_words(text: str, *, lowercase: bool = True) -> list[tuple[str, int, int]]:
    """Split ``text`` into words, each as ``(word, start, end)`` character offsets.

    Example:
        >>> split_words("It isn't bad.")
        [('it', 0, 2), ('is', 3, 5), ("n't", 5, 8), ('bad', 9, 12), ('.', 12, 13)]
    """
    # Match on the original text: lowercasing first could shift offsets (e.g. "İ" grows).
    return [
        (match.group(0).lower() if lowercase else match.group(0), match.start(), match.end())
        for match in _WORD_PATTERN.finditer(text)
    ]
