"""Items and their cell keys: what one example or one side of a pair is, whatever the type.

An *item* is the tuple of texts a system reads for one prediction, in the order the model
reads them (its *segments*): a sentence (text classification), a sentence and a question
(span extraction), a premise and a hypothesis (sentence-pair classification). The
prediction matrix keys a cell by ``item_key(item)``:

- an item of one text is keyed by that text's digest (``text_digest``), so label cells kept
  their keys when items got a second segment;
- an item of several is keyed by the digest of its JSON array (no ambiguity whatever the
  texts hold).

Every side that writes or looks up a cell calls ``item_key``.

    >>> item_key(("UCD won.",)) == text_digest("UCD won.")
    True
    >>> item_key(("UCD won.", "Who won?")) != item_key(("UCD won.", "Who won ?"))
    True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

Item = tuple[str, ...]


def text_digest(text: str) -> str:
    """The sha256 of a text's UTF-8 bytes (texts can be long; keys cannot)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def item_key(item: Sequence[str]) -> str:
    """The key of ``item``'s cell in the prediction matrix."""
    if len(item) == 1:
        return text_digest(item[0])
    return text_digest(json.dumps(list(item), ensure_ascii=False, separators=(",", ":")))


def item_line(item: Sequence[str], *, separator: str = " ||| ") -> str:
    """An item as one line of text, for a table cell or a file that holds one text per item."""
    return separator.join(item)
