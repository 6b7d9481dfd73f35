"""Backend for transformers directories: any ``*ForSequenceClassification`` transformers knows."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoConfig, AutoTokenizer

from fim_engine._encoding import EncodedBatch, TokenizedText
from fim_engine.bert_pass import BertPass
from fim_engine.errors import (
    ConfigValueError,
    LabelCountError,
    MissingTokenizerError,
    MissingWeightsError,
    WeightShapeError,
    WeightValueError,
)
from fim_engine.native import require_finite_weights
from fim_engine.sentence_pairs import SentencePair, TextItem
from fim_engine.system_checks import describe, warn_autograd_fallback

# Keys every loader call carries: no network, no code from the directory, no pickles.
SAFE_LOADING: dict[str, Any] = {"local_files_only": True, "trust_remote_code": False}


def config_labels(config: Any) -> list[str]:
    """Label names in label-index order, from ``config.id2label``."""
    raw = config.id2label or {}
    if not isinstance(raw, dict) or not all(str(k).isdigit() for k in raw):
        raise ConfigValueError(
            'config.json: id2label must be an object of label ids to names, e.g. {"0": "negative"}'
        )
    id2label = {int(k): str(v) for k, v in raw.items()}
    if sorted(id2label) != list(range(config.num_labels)):
        raise LabelCountError(
            f"config.json: id2label must name labels 0 .. {config.num_labels - 1} (num_labels = "
            f"{config.num_labels}), got ids {sorted(id2label)}"
        )
    return [id2label[i] for i in range(config.num_labels)]


def tokenizer_key(tokenizer: Any) -> str:
    """A digest of everything that decides a fast tokenizer's output (its serialised pipeline,
    class and special tokens); a slow tokenizer gets a key of its own object."""
    if not tokenizer.is_fast:
        return f"object:{uuid.uuid4()}"
    state = json.dumps(
        [
            type(tokenizer).__name__,
            tokenizer.backend_tokenizer.to_str(),
            sorted(map(str, tokenizer.all_special_tokens)),
        ]
    )
    return "fast:" + hashlib.sha256(state.encode()).hexdigest()


class TransformersBackend:
    kind = "transformers"
    # The tokenizer encodes single texts and sentence pairs alike.
    inputs: tuple[str, ...] = ("text", "pair")

    def __init__(self, model: Any, tokenizer: Any) -> None:
        self.module = model.eval()
        self.tokenizer = tokenizer
        self.architecture = type(model).__name__
        self.labels = config_labels(model.config)
        pad_id = tokenizer.pad_token_id
        self.pad_id = int(pad_id) if pad_id is not None else 0
        candidates = (
            getattr(model.config, "max_position_embeddings", None),
            tokenizer.model_max_length,
        )
        # Tokenizers without a limit report a huge sentinel (int(1e30)); ignore it.
        limits = [x for x in candidates if isinstance(x, int) and 0 < x < 1_000_000]
        self.max_length = min(limits, default=1_000_000)
        # A model with one token-type row (RoBERTa's type_vocab_size 1) was never shown a
        # hypothesis type: it reads pairs through its separators, its token types all 0.
        type_rows = getattr(model.config, "type_vocab_size", None)
        self.token_types = not (isinstance(type_rows, int) and type_rows < 2)
        # The cached tokens hold the token types or not: two keys for one tokenizer.
        self.tokenizer_key = tokenizer_key(tokenizer) + ("" if self.token_types else ":no-types")
        try:
            self.contrast_pass = BertPass.for_model(model)
        except Exception as error:  # another transformers' attribute layout: autograd is exact too
            warn_autograd_fallback(self.architecture, f"cannot be set up: {describe(error)}")
            self.contrast_pass = None

    @classmethod
    def load(cls, path: str | Path, *, dtype: torch.dtype) -> TransformersBackend:
        path = Path(path)
        try:
            config = AutoConfig.from_pretrained(path, **SAFE_LOADING)
        except MemoryError:
            raise
        except Exception as error:  # check_model_dir read it; anything left is the config's fault
            raise ConfigValueError(
                f"config.json could not be read by transformers: {error}"
            ) from error
        model_class = getattr(transformers, config.architectures[0])
        try:
            model, info = model_class.from_pretrained(
                path,
                config=config,
                use_safetensors=True,
                output_loading_info=True,
                dtype=dtype,
                **SAFE_LOADING,
            )
        except MemoryError:
            raise
        except RuntimeError as error:
            if "allocate" in str(error) or "out of memory" in str(error):
                raise
            raise WeightValueError(f"model.safetensors could not be loaded: {error}") from error
        except Exception as error:  # the safetensors reader's and transformers' own errors
            raise WeightValueError(f"model.safetensors could not be loaded: {error}") from error
        if info["mismatched_keys"]:
            key, found, expected = sorted(info["mismatched_keys"])[0]
            raise WeightShapeError(
                f"model.safetensors: tensor {key!r} has shape {tuple(found)}, the config implies {tuple(expected)}"
            )
        if info["missing_keys"]:
            missing = ", ".join(sorted(info["missing_keys"])[:5])
            raise MissingWeightsError(
                f"model.safetensors lacks {missing}: upload the fine-tuned classifier, "
                "not a bare encoder, so that no weights are initialised at random"
            )
        require_finite_weights(model)
        try:
            tokenizer = AutoTokenizer.from_pretrained(path, **SAFE_LOADING)
            limit = tokenizer.model_max_length
            if not isinstance(limit, int | float) or isinstance(limit, bool):
                raise ConfigValueError(
                    f"tokenizer_config.json: model_max_length must be a number, got {limit!r}"
                )
            # Bad tokenizer files often load and fail on first use: use them once here.
            tokenizer(["a test"], truncation=False, verbose=False)
        except (MemoryError, ConfigValueError):
            raise
        except Exception as error:  # tokenizers and transformers fail on bad files in many ways
            raise MissingTokenizerError(
                f"the tokenizer files (tokenizer.json, tokenizer_config.json) could not be loaded: "
                f"{error.__class__.__name__}: {' '.join(str(error).split())}"
            ) from error
        for parameter in model.parameters():
            parameter.requires_grad_(False)
        return cls(model, tokenizer)

    def tokenize(self, texts: Sequence[TextItem], max_length: int) -> list[TokenizedText]:
        """Texts through the tokenizer's single-text encoding, sentence pairs through its pair
        encoding (BERT: [CLS] premise [SEP] hypothesis [SEP], token types 0 then 1). An item
        longer than the limit is cut ``longest_first``: tokens come off the longer segment
        until both fit, so a short hypothesis keeps every word beside a long premise."""
        items: list[TokenizedText | None] = [None] * len(texts)
        for wanted in (str, SentencePair):
            rows = [i for i, item in enumerate(texts) if isinstance(item, wanted)]
            chosen = [texts[i] for i in rows]
            for i, item in zip(rows, self._tokenize_alike(chosen, max_length), strict=True):
                items[i] = item
        return [item for item in items if item is not None]

    def _encode(self, chosen: Sequence[TextItem], **options: Any) -> Any:
        """The tokenizer's encoding of texts, or of sentence pairs (never both at once)."""
        if chosen and isinstance(chosen[0], SentencePair):
            pairs = [SentencePair(*item) for item in chosen]
            premises, hypotheses = [p.premise for p in pairs], [p.hypothesis for p in pairs]
            return self.tokenizer(premises, hypotheses, verbose=False, **options)
        return self.tokenizer(list(chosen), verbose=False, **options)

    def _tokenize_alike(self, chosen: Sequence[TextItem], max_length: int) -> list[TokenizedText]:
        if not chosen:
            return []
        limit = min(max_length, self.max_length)
        full = self._encode(chosen, truncation=False)
        items = []
        for row, item in enumerate(chosen):
            encoding, index = full, row
            if len(full["input_ids"][row]) > limit:
                # Rare, so re-tokenizing only the long items is cheaper than always asking
                # the tokenizer for overflow information.
                encoding = self._encode([item], truncation="longest_first", max_length=limit)
                index = 0
            items.append(self._item(encoding, index, item, truncated=encoding is not full))
        return items

    def _item(self, encoding: Any, row: int, item: TextItem, *, truncated: bool) -> TokenizedText:
        input_ids = list(encoding["input_ids"][row])
        types = encoding.get("token_type_ids") if self.token_types else None
        token_type_ids = list(types[row]) if types is not None else None
        special = self.tokenizer.get_special_tokens_mask(input_ids, already_has_special_tokens=True)
        is_pair = isinstance(item, SentencePair)
        if not self.tokenizer.is_fast:
            piece_index, pieces, segments = self._pieces(input_ids, special)
            return TokenizedText(
                input_ids,
                piece_index,
                pieces,
                truncated,
                spans=None,
                token_type_ids=token_type_ids,
                word_segments=segments if is_pair else None,
            )
        parts: tuple[str, ...] = tuple(item) if isinstance(item, SentencePair) else (item,)
        sequence_ids = encoding.sequence_ids(row)
        order: dict[tuple[int, int], int] = {}
        words: list[str] = []
        spans: list[tuple[int, int]] = []
        word_segments: list[int] = []
        word_index = []
        for token, word in enumerate(encoding.word_ids(row)):
            segment = sequence_ids[token]
            if word is None or segment is None or special[token]:
                word_index.append(-1)
                continue
            if (segment, word) not in order:
                order[(segment, word)] = len(order)
                span = encoding.word_to_chars(row, word, sequence_index=segment)
                words.append(parts[segment][span.start : span.end])
                spans.append((span.start, span.end))
                word_segments.append(segment)
            word_index.append(order[(segment, word)])
        return TokenizedText(
            input_ids,
            word_index,
            words,
            truncated,
            spans=spans,
            token_type_ids=token_type_ids,
            word_segments=word_segments if is_pair else None,
        )

    def _pieces(
        self, input_ids: list[int], special: list[int]
    ) -> tuple[list[int], list[str], list[int]]:
        """Without a fast tokenizer there is no word alignment: each piece is its own word.
        A pair's hypothesis starts after the first special token that follows a piece
        ([SEP], RoBERTa's </s></s>, XLNet's <sep>)."""
        pieces = self.tokenizer.convert_ids_to_tokens(input_ids)
        word_index: list[int] = []
        words: list[str] = []
        segments: list[int] = []
        segment = 0
        for token, is_special in enumerate(special):
            if is_special:
                segment = 1 if words else 0
                word_index.append(-1)
                continue
            word_index.append(len(words))
            words.append(pieces[token])
            segments.append(segment)
        return word_index, words, segments

    def _inputs(self, batch: EncodedBatch) -> dict[str, torch.Tensor]:
        inputs = {"attention_mask": batch.attention_mask}
        if batch.token_type_ids is not None:
            inputs["token_type_ids"] = batch.token_type_ids
        return inputs

    def input_embeddings(self, batch: EncodedBatch) -> torch.Tensor:
        return self.module.get_input_embeddings()(batch.input_ids)

    def embedding_weight(self) -> torch.Tensor:
        return self.module.get_input_embeddings().weight

    def vocabulary_words(self) -> list[tuple[int, str]]:
        special = set(self.tokenizer.all_special_ids)
        ids = sorted(i for i in self.tokenizer.get_vocab().values() if i not in special)
        surfaces = [s.strip() for s in self.tokenizer.batch_decode([[i] for i in ids])]
        # A piece such as "##ing" or a byte-level fragment decodes to a string that the
        # tokenizer encodes differently; keep the tokens that come back as themselves.
        encoded = self.tokenizer(surfaces, add_special_tokens=False, verbose=False)["input_ids"]
        return [
            (i, surface)
            for i, surface, back in zip(ids, surfaces, encoded, strict=True)
            if surface and back == [i]
        ]

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: EncodedBatch) -> torch.Tensor:
        return self.module(inputs_embeds=embeds, **self._inputs(batch)).logits

    def logits(self, batch: EncodedBatch) -> torch.Tensor:
        return self.module(input_ids=batch.input_ids, **self._inputs(batch)).logits
