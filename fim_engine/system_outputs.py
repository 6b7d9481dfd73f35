"""What a :class:`fim_engine.System` returns besides :class:`fim_engine.FisherResult`: the
predictions of a batch, and one item's words with the top eigenvector of its Fisher metric."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from fim_engine.fisher import WordDirections
from fim_engine.sentence_pairs import TextItem


@dataclass(frozen=True)
class PredictionBatch:
    """Predictions for N texts, in input order.

    ``probabilities`` is N×C float64 in the order of ``label_names``; ``labels`` holds the
    predicted (argmax) label of each text; ``truncated[i]`` is True when text i was cut to the
    system's maximum length before it was scored.
    """

    label_names: list[str]
    probabilities: np.ndarray
    labels: list[str]
    truncated: list[bool]

    def __len__(self) -> int:
        return len(self.labels)


# What a TextDirections was computed for: a text, or (for a model that reads them) a pair.
Item = TypeVar("Item", str, TextItem)


@dataclass(frozen=True)
class TextDirections(Generic[Item]):
    """One text (or sentence pair) as :meth:`System.word_directions` sees it.

    ``words`` (W) are the editable words in order, ``spans`` their character offsets (``None``
    without a fast tokenizer); ``input_ids`` and ``word_index`` (L, padded) the tokens and the
    word of each (-1: none, or a word of a pair's fixed segment); ``directions`` holds λmax and
    the top eigenvector per word (:class:`fim_engine.WordDirections`); ``leverage`` (W) the
    first-order KL of deleting each word; ``label`` and ``probabilities`` the prediction. For a
    sentence pair, ``word_segments`` (W) names each word's segment (``"premise"`` or
    ``"hypothesis"``; premise words first) and a span is an offset into that segment.
    """

    text: Item
    label: str
    probabilities: np.ndarray
    truncated: bool
    words: list[str]
    spans: list[tuple[int, int]] | None
    input_ids: np.ndarray
    word_index: np.ndarray
    directions: WordDirections
    leverage: np.ndarray
    word_segments: list[str] | None = None

    def tokens(self, word: int) -> list[int]:
        """The token ids of word ``word``."""
        return [int(token) for token in self.input_ids[self.word_index == word]]
