"""The contract between :class:`fim_engine.System` and a model family."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import torch
from torch import nn

from fim_engine._encoding import EncodedBatch, TokenizedText
from fim_engine.sentence_pairs import TextItem


class ContrastPass(Protocol):
    """An exact forward pass that keeps a tape, and a backward pass over K cotangents at once
    (:class:`fim_engine.bert_pass.BertPass`): what λmax needs, cheaper than autograd's."""

    def forward(
        self,
        embeds: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None,
    ) -> tuple[torch.Tensor, Any]: ...

    def backward(self, tape: Any, cotangents: torch.Tensor) -> torch.Tensor: ...


class Backend(Protocol):
    """A loaded model of one family (bibi-native or transformers).

    Contract: ``logits`` and ``logits_from_embeddings`` return B×C logits and treat each row
    independently (eval mode, padding masked), so a text scores the same alone or in a batch.
    ``inputs`` names what the model reads: ``"text"``, ``"pair"`` (sentence pairs) or both;
    ``tokenize`` refuses the other kind with a ``ValueError``.
    """

    kind: str
    architecture: str
    inputs: tuple[str, ...]
    labels: list[str]
    pad_id: int
    max_length: int
    # Equal for backends that tokenize every text alike: the key of the shared token cache.
    tokenizer_key: str

    @property
    def contrast_pass(self) -> ContrastPass | None:
        """The family's own exact passes for λmax, or None: autograd's."""
        ...

    @property
    def module(self) -> nn.Module: ...

    def tokenize(self, texts: Sequence[TextItem], max_length: int) -> list[TokenizedText]: ...

    def input_embeddings(self, batch: EncodedBatch) -> torch.Tensor: ...

    def embedding_weight(self) -> torch.Tensor:
        """V×d input-embedding table; row ``pad_id`` is the pad token's."""
        ...

    def vocabulary_words(self) -> list[tuple[int, str]]:
        """``(token id, word)`` for every token that a text made of that word alone encodes to,
        as its only editable token, sorted by id."""
        ...

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: EncodedBatch) -> torch.Tensor: ...

    def logits(self, batch: EncodedBatch) -> torch.Tensor: ...
