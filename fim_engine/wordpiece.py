"""A BERT-style WordPiece tokenizer over a given vocabulary, built in memory (nothing is
downloaded): what the GPU benchmark and the test fixtures use for random-initialised BERTs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def wordpiece_tokenizer(tokens: Sequence[str], max_length: int) -> Any:
    """A lowercasing BERT WordPiece ``PreTrainedTokenizerFast`` whose vocabulary is ``SPECIALS``
    followed by ``tokens`` (in order, repeats dropped; ``##x`` entries continue a word)."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate(dict.fromkeys([*SPECIALS, *tokens]))}
    backend = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    backend.normalizer = normalizers.BertNormalizer(lowercase=True)
    backend.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    backend.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
