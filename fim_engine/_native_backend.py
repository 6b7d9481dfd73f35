"""Backend for bibi-native directories: words are tokens, no special tokens; a sentence pair is
its premise's words then its hypothesis's, told apart by token segments (0, 1)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import torch

from edits.words import split_words
from fim_engine._encoding import EncodedBatch, TokenizedText
from fim_engine.native import (
    NativeClassifier,
    NativeConfig,
    Vocabulary,
    load_native_model,
)
from fim_engine.sentence_pairs import SentencePair, TextItem, check_inputs, longest_first


class NativeBackend:
    kind = "bibi-native"
    pad_id = 0
    # Native models have no position table, so length is bounded only by the caller.
    max_length = 1_000_000

    def __init__(self, model: NativeClassifier, config: NativeConfig, vocab: Vocabulary) -> None:
        self.module = model.eval()
        self.config = config
        self.vocab = vocab
        self.architecture = config.architecture
        self.inputs = config.inputs
        self.labels = list(config.labels)
        words = json.dumps([config.lowercase, sorted(vocab.index.items())])
        self.tokenizer_key = "native:" + hashlib.sha256(words.encode()).hexdigest()
        self.contrast_pass = None

    @classmethod
    def load(cls, path: str | Path, *, dtype: torch.dtype) -> NativeBackend:
        model, config, vocab = load_native_model(path, dtype=dtype)
        return cls(model, config, vocab)

    def tokenize(self, texts: Sequence[TextItem], max_length: int) -> list[TokenizedText]:
        check_inputs(texts, self.inputs, self.architecture)
        return [
            self._pair(item, max_length)
            if isinstance(item, SentencePair)
            else self._text(item, max_length)
            for item in texts
        ]

    def _text(self, text: str, max_length: int) -> TokenizedText:
        spans = split_words(text, lowercase=self.config.lowercase)
        kept = spans[:max_length]
        return TokenizedText(
            input_ids=self.vocab.ids(word for word, _, _ in kept),
            word_index=list(range(len(kept))),
            # The words as written in the text, not lowercased.
            words=[text[start:end] for _, start, end in kept],
            truncated=len(spans) > len(kept),
            spans=[(start, end) for _, start, end in kept],
        )

    def _pair(self, pair: SentencePair, max_length: int) -> TokenizedText:
        sides = [split_words(side, lowercase=self.config.lowercase) for side in pair]
        # The longer side loses words first, so a short hypothesis is never cut for a premise.
        keep = longest_first(len(sides[0]), len(sides[1]), max_length)
        kept = [(segment, word) for segment in (0, 1) for word in sides[segment][: keep[segment]]]
        segments = [segment for segment, _ in kept]
        return TokenizedText(
            input_ids=self.vocab.ids(word for _, (word, _, _) in kept),
            word_index=list(range(len(kept))),
            words=[pair[segment][start:end] for segment, (_, start, end) in kept],
            truncated=keep != (len(sides[0]), len(sides[1])),
            spans=[(start, end) for _, (_, start, end) in kept],
            token_type_ids=segments,
            word_segments=segments,
        )

    def input_embeddings(self, batch: EncodedBatch) -> torch.Tensor:
        return self.module.embedding(batch.input_ids)

    def embedding_weight(self) -> torch.Tensor:
        return self.module.embedding.weight

    def vocabulary_words(self) -> list[tuple[int, str]]:
        # Every entry but <pad> and <unk> is a word that the tokenizer maps to itself.
        special = {self.pad_id, self.vocab.unk_id}
        return sorted((i, word) for word, i in self.vocab.index.items() if i not in special)

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: EncodedBatch) -> torch.Tensor:
        return self.module.forward_embeddings(
            embeds, batch.input_ids, batch.attention_mask.bool(), batch.token_type_ids
        )

    def logits(self, batch: EncodedBatch) -> torch.Tensor:
        return self.module(batch.input_ids, batch.attention_mask.bool(), batch.token_type_ids)
