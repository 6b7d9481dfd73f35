"""Tokens of a pair's texts, and the measures the minimal-pair rules take with them: the
token edit distance, the share of tokens kept, and whether an edit lies past what systems
read. Pure functions over strings (``bibi.pairs.checks`` applies them).

    >>> tokenize('Russell is "terrific" as coach Herb Brooks.')
    ['Russell', 'is', '"', 'terrific', '"', 'as', 'coach', 'Herb', 'Brooks', '.']
    >>> token_edit_distance(tokenize("It's harmless."), tokenize("It's not harmless."))
    1
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

# Penn-Treebank-like splitting, so that a change of punctuation or quoting is one token edit
# and "film." and "film ." (SST's pre-tokenized spelling) read the same:
# - "doesn't" is "does" + "n't": negation is a unit breakers add and remove;
# - "it's" is "it" + "'s", "I'm" is "I" + "'m" (clitics), but "'terrific'" is ' terrific ';
# - a word is a run of letters, digits and underscores; every other visible character
#   (punctuation, quotes, brackets, hyphens, symbols) is a token of its own.
_TOKEN = re.compile(
    r"""
    \w+(?=n['’]t\b)
    | n['’]t\b
    | ['’](?:s|d|m|re|ve|ll)\b
    | \w+
    | \S
    """,
    re.VERBOSE | re.IGNORECASE,
)
# Systems count their limit in sub-word tokens (WordPiece, BPE), which split rare words into
# pieces; the web process has no model tokenizer (no torch there), so it counts ``tokenize``
# tokens and scales them. On SST-2 sentences of 20 tokens or more, MiniLM's WordPiece makes
# 1.13 pieces per token on average and 1.42 at the 99th percentile: 1.5 errs towards warning.
SUBWORDS_PER_TOKEN = 1.5
# [CLS] and [SEP] (<s> and </s>) take two of the positions a model reads.
SPECIAL_TOKENS = 2


def tokenize(text: str) -> list[str]:
    """Split ``text`` into word, clitic and punctuation tokens (case kept).

    >>> tokenize("I'm mad for this movie!")
    ['I', "'m", 'mad', 'for', 'this', 'movie', '!']
    """
    return _TOKEN.findall(text)


def _trim(a: Sequence[str], b: Sequence[str]) -> tuple[Sequence[str], Sequence[str]]:
    """Drop the common prefix and suffix: a minimal pair differs in a few tokens in a row."""
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end_a, end_b = len(a), len(b)
    while end_a > start and end_b > start and a[end_a - 1] == b[end_b - 1]:
        end_a -= 1
        end_b -= 1
    return a[start:end_a], b[start:end_b]


def token_edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between two token sequences: inserts, deletes, replacements.

    The quadratic part runs only over the tokens around the edit (see ``_trim``).
    """
    a, b = _trim(a, b)
    if not a or not b:
        return len(a) + len(b)
    previous = list(range(len(b) + 1))
    for i, token_a in enumerate(a, start=1):
        current = [i]
        for j, token_b in enumerate(b, start=1):
            current.append(
                min(
                    previous[j] + 1,
                    current[j - 1] + 1,
                    previous[j - 1] + (token_a != token_b),
                )
            )
        previous = current
    return previous[-1]


def shared_token_ratio(original: Sequence[str], variant: Sequence[str]) -> float:
    """The share of the variant's tokens that the original has too (counted with repeats).

    0.0 for an empty variant.
    """
    if not variant:
        return 0.0
    # A common prefix or suffix is shared as a whole; only the middles need counting.
    middle_original, middle_variant = _trim(original, variant)
    shared = len(variant) - len(middle_variant)
    if middle_original and middle_variant:
        shared += sum((Counter(middle_original) & Counter(middle_variant)).values())
    return shared / len(variant)


def tokens_in_sight(max_sequence_length: int) -> int:
    """How many ``tokenize`` tokens a system reading ``max_sequence_length`` sub-word tokens
    surely sees, by the conservative estimate ``SUBWORDS_PER_TOKEN``."""
    return max(0, int((max_sequence_length - SPECIAL_TOKENS) / SUBWORDS_PER_TOKEN))


def edit_out_of_sight(
    original: str, variant: str, *, max_sequence_length: int | None
) -> str | None:
    """A warning when the edit may lie past what systems read, else None.

    The edit begins at the first token where the two texts differ. If that is past
    ``tokens_in_sight``, a system that truncates both texts may read two identical inputs,
    and the pair cannot break it.

    >>> edit_out_of_sight("a b c d e", "a b x d e", max_sequence_length=8) is None
    True
    >>> edit_out_of_sight("a b c d e", "a b c d f", max_sequence_length=8)[:51]
    'the edit begins at token 5, past the first 4 tokens'
    """
    if max_sequence_length is None:
        return None
    in_sight = tokens_in_sight(max_sequence_length)
    # A token has at least one character, so texts that differ within their first
    # ``in_sight`` characters differ within their first ``in_sight`` tokens: most pairs are
    # settled without tokenizing them again.
    if original[:in_sight] != variant[:in_sight]:
        return None
    start = 0
    for a, b in zip(tokenize(original), tokenize(variant), strict=False):
        if a != b:
            break
        start += 1
    if start < in_sight:
        return None
    return (
        f"the edit begins at token {start + 1}, past the first {in_sight} tokens every system "
        f"surely reads (systems read {max_sequence_length} sub-word tokens, "
        "SYSTEM_MAX_SEQUENCE_LENGTH; a token may be several): a system may see two identical "
        "texts, and the pair then cannot break it"
    )
