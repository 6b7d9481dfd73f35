"""When two texts are the same text: the one comparison rule every app uses.

The example importer finds duplicate texts in a dataset with it, and the pair checks find
a pair's original in the starter set with it, so a text the importer calls a duplicate is
exactly a text the pair checks cannot tell apart.

    >>> normalize_text("  Cafe\\u0301\\tcrème \\n brûlée  ")
    'Café crème brûlée'
"""

from __future__ import annotations

import re
import unicodedata

_WHITESPACE = re.compile(r"\s+")


def normalize_text(text: str) -> str:
    """NFC, every run of whitespace (tabs, line breaks too) as one space, no edge spaces."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()
