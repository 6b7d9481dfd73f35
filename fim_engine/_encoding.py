"""Tokenized texts and padded batches, shared by every backend."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import torch

from fim_engine.sentence_pairs import TextItem


@dataclass(frozen=True)
class TokenizedText:
    """One text or sentence pair after tokenization, before padding.

    ``word_index[t]`` is the word that token ``t`` belongs to, or -1 for tokens a breaker cannot
    edit ([CLS], [SEP], ...). ``words`` holds the surface form of each word, in text order, and
    ``spans`` its ``(start, end)`` character offsets in the text (``None`` when the tokenizer
    cannot align pieces to characters). For a sentence pair, ``word_segments[w]`` is the segment
    of word w (0 premise, 1 hypothesis; premise words come first) and its span is an offset
    into that segment's string; ``None`` for a single text.
    """

    input_ids: list[int]
    word_index: list[int]
    words: list[str]
    truncated: bool
    spans: list[tuple[int, int]] | None
    token_type_ids: list[int] | None = None
    word_segments: list[int] | None = None

    def keep_segments(self, segments: frozenset[int] | None) -> TokenizedText:
        """This item with only the words of ``segments`` editable (``None``: all of them): the
        other words' tokens get word index -1 and the kept words are numbered afresh."""
        if segments is None or self.word_segments is None:
            return self
        kept = [w for w, segment in enumerate(self.word_segments) if segment in segments]
        if len(kept) == len(self.words):
            return self
        renumber = {old: new for new, old in enumerate(kept)}
        return replace(
            self,
            word_index=[renumber.get(w, -1) for w in self.word_index],
            words=[self.words[w] for w in kept],
            spans=None if self.spans is None else [self.spans[w] for w in kept],
            word_segments=[self.word_segments[w] for w in kept],
        )


@dataclass
class EncodedBatch:
    """A right-padded batch of B texts of at most L tokens.

    Shapes: ``input_ids``, ``attention_mask``, ``word_index`` and ``token_type_ids`` are B×L;
    ``editable`` (B×L bool) marks the text's own tokens: not special tokens, not padding, and
    for sentence pairs only the editable segment's. ``word_segments`` holds each row's
    :attr:`TokenizedText.word_segments`.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    editable: torch.Tensor
    word_index: torch.Tensor
    token_type_ids: torch.Tensor | None
    words: list[list[str]]
    truncated: list[bool]
    spans: list[list[tuple[int, int]] | None]
    word_segments: list[list[int] | None] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.words)


def collate(items: Sequence[TokenizedText], *, pad_id: int, device: torch.device) -> EncodedBatch:
    """Pad ``items`` on the right into one :class:`EncodedBatch` on ``device``."""
    width = max(1, max(len(item.input_ids) for item in items))
    shape = (len(items), width)
    input_ids = torch.full(shape, pad_id, dtype=torch.long)
    attention_mask = torch.zeros(shape, dtype=torch.long)
    word_index = torch.full(shape, -1, dtype=torch.long)
    has_types = all(item.token_type_ids is not None for item in items)
    token_type_ids = torch.zeros(shape, dtype=torch.long) if has_types else None
    for row, item in enumerate(items):
        n = len(item.input_ids)
        input_ids[row, :n] = torch.tensor(item.input_ids, dtype=torch.long)
        attention_mask[row, :n] = 1
        word_index[row, :n] = torch.tensor(item.word_index, dtype=torch.long)
        if token_type_ids is not None and item.token_type_ids is not None:
            token_type_ids[row, :n] = torch.tensor(item.token_type_ids, dtype=torch.long)
    editable = word_index >= 0
    device = torch.device(device)
    if device.type == "cuda":
        # Page-locked host memory lets the copies run asynchronously with the host's work.
        input_ids, attention_mask, word_index, editable = (
            t.pin_memory() for t in (input_ids, attention_mask, word_index, editable)
        )
        token_type_ids = None if token_type_ids is None else token_type_ids.pin_memory()
    copy = device.type == "cuda"
    return EncodedBatch(
        input_ids=input_ids.to(device, non_blocking=copy),
        attention_mask=attention_mask.to(device, non_blocking=copy),
        editable=editable.to(device, non_blocking=copy),
        word_index=word_index.to(device, non_blocking=copy),
        token_type_ids=None
        if token_type_ids is None
        else token_type_ids.to(device, non_blocking=copy),
        words=[list(item.words) for item in items],
        truncated=[item.truncated for item in items],
        spans=[None if item.spans is None else list(item.spans) for item in items],
        word_segments=[item.word_segments for item in items],
    )


def length_sorted_batches(items: Sequence[TokenizedText], batch_size: int) -> Iterator[list[int]]:
    """Yield index lists of at most ``batch_size`` items of similar length.

    Sorting by length keeps padding (wasted compute) small; callers put results back in input
    order, and since padding is masked the grouping does not change any value beyond rounding.
    """
    order = sorted(range(len(items)), key=lambda i: len(items[i].input_ids))
    for start in range(0, len(order), batch_size):
        yield order[start : start + batch_size]


class TokenCache:
    """Tokenized texts kept across calls and systems, least recently used out.

    Keyed by (tokenizer key, token limit, text): systems whose tokenizers have the same key
    (the same vocabulary and rules, e.g. several fine-tunes of one checkpoint) share entries,
    so a text is tokenized once per tokenizer, not once per system and pass (predict, then
    λmax). ``hits`` and ``misses`` count texts.
    """

    def __init__(self, max_entries: int = 50_000) -> None:
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[tuple[str, int, TextItem], TokenizedText] = OrderedDict()
        self._lock = threading.Lock()

    def tokenize(
        self,
        key: str,
        texts: Sequence[TextItem],
        limit: int,
        tokenize: Callable[[Sequence[TextItem], int], list[TokenizedText]],
    ) -> list[TokenizedText]:
        """``tokenize(texts, limit)``, computing only the texts (or sentence pairs: a pair is
        never the same key as a text) not seen with this key."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (key, limit, t) not in self._items]
        fresh = dict(zip(missing, tokenize(missing, limit), strict=True)) if missing else {}
        with self._lock:
            self.misses += len(missing)
            self.hits += len(texts) - len(missing)
            found = []
            for text in texts:
                item = fresh.get(text) or self._items.get((key, limit, text))
                if item is None:  # evicted meanwhile by another thread
                    item = tokenize([text], limit)[0]
                self._items[(key, limit, text)] = item
                self._items.move_to_end((key, limit, text))
                found.append(item)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
        return found

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


# One per process: every System tokenizes through it.
TOKEN_CACHE = TokenCache()
