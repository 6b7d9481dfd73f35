"""Hosted extractive QA systems: safe loading, batched best-span prediction and span λmax.

A span system is a transformers ``*ForQuestionAnswering`` directory. It reads the question
and the sentence as a pair, ``[CLS] question [SEP] sentence [SEP]``, and answers with a span of
the sentence. :func:`check_span_model_dir` applies the same static checks as
:func:`fim_engine.check_model_dir` does to sequence classifiers (no links, pickles, code files
or ``auto_map``; config fields transformers can build from; tensor shapes that fit the config;
the QA head present), and :func:`load_span_system` loads with the same safe options
(``local_files_only``, no remote code, safetensors only) and refuses NaN weights.

Example:
    >>> system = load_span_system("models/minilm-span/")
    >>> system.predict(["who beat someone?"], ["UCD beat St Vincents in the final ."])[0].text
    'UCD'
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from fim_engine.errors import (
    ConfigValueError,
    MissingFileError,
    MissingTokenizerError,
    MissingWeightsError,
    PaddingSensitiveModelError,
    RemoteCodeError,
    UnknownArchitectureError,
    WeightValueError,
)
from fim_engine.spans import SpanFisherResult, span_fisher
from fim_engine.system import default_device

DEFAULT_MAX_ANSWER_TOKENS = 30


@dataclass(frozen=True)
class SpanPrediction:
    """The best span of one sentence: character offsets (end exclusive), its text, the sum of
    its start and end logits, and whether the sentence was cut to fit the model."""

    start: int
    end: int
    text: str
    score: float
    truncated: bool


@dataclass
class SpanBatch:
    """Encoded (question, sentence) pairs, right-padded: B×L tensors.

    ``context`` marks the sentence's own tokens (where an answer may start or end, and what a
    breaker may edit); ``offsets`` (B×L×2, on the CPU) are each token's character offsets in
    its sentence; ``word_index`` (B×L) numbers the sentence's words, -1 elsewhere.
    """

    input_ids: torch.Tensor
    attention_mask: torch.Tensor
    token_type_ids: torch.Tensor | None
    context: torch.Tensor
    offsets: torch.Tensor
    word_index: torch.Tensor
    words: list[list[str]]
    truncated: list[bool]

    def model_inputs(self) -> dict[str, torch.Tensor]:
        inputs = {"attention_mask": self.attention_mask}
        if self.token_type_ids is not None:
            inputs["token_type_ids"] = self.token_type_ids
        return inputs


def check_span_model_dir(path: str | Path) -> str:
    """Inspect a QA model directory statically; return its architecture name.

    Raises:
        ModelFormatError: the subclass :func:`fim_engine.check_model_dir` raises for the same
            fault, or :class:`UnknownArchitectureError` for a model that is not a transformers
            ``*ForQuestionAnswering``.
    """
    import transformers
    from transformers import AutoConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES

    from fim_engine import formats
    from fim_engine._transformers_backend import SAFE_LOADING

    root = Path(path)
    if not root.is_dir():
        raise MissingFileError(f"{root} is not a directory")
    files = list(formats.walk(root))
    for file in files:
        formats.refuse_unsafe_file(root, file)
    raw = formats.read_json(root / "config.json", required=True)
    for file in files:
        if file.suffix == ".json" and formats.has_key(
            formats.read_json(file, required=False), "auto_map"
        ):
            raise RemoteCodeError(
                f'{file.relative_to(root)} has an "auto_map" entry, which asks to run the '
                "model's own Python code; bibi never runs uploaded code"
            )
    architectures = raw.get("architectures")
    name = architectures[0] if isinstance(architectures, list) and len(architectures) == 1 else None
    known = set(MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES.values())
    if name not in known or not hasattr(transformers, str(name)):
        raise UnknownArchitectureError(
            f"config.json: architectures must name one extractive QA model known to transformers "
            f"{transformers.__version__} (e.g. BertForQuestionAnswering), got {architectures!r}"
        )
    if not formats.has_tokenizer(root):
        raise MissingTokenizerError("no tokenizer files: include tokenizer.json")
    formats.check_transformers_fields(raw)
    try:
        config = AutoConfig.from_pretrained(root, **SAFE_LOADING)
    except MemoryError:
        raise
    except Exception as error:  # whatever transformers raises on a config, the config is at fault
        raise ConfigValueError(f"config.json could not be read by transformers: {error}") from error
    # A QA head has two outputs (start, end): the shape check counts them as two labels.
    formats.check_transformers_shapes(root, getattr(transformers, str(name)), config, 2, raw)
    return str(name)


class SpanSystem:
    """A loaded extractive QA model and its (fast) tokenizer, in eval mode."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        *,
        device: torch.device,
        batch_size: int = 32,
        max_length: int = 256,
        max_answer_tokens: int = DEFAULT_MAX_ANSWER_TOKENS,
    ) -> None:
        if not tokenizer.is_fast:
            raise MissingTokenizerError(
                "a span system needs a fast tokenizer (tokenizer.json) for character offsets"
            )
        self.module = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device
        self.batch_size = batch_size
        limit = getattr(model.config, "max_position_embeddings", max_length)
        self.max_length = min(max_length, int(limit))
        self.max_answer_tokens = max_answer_tokens
        self.architecture = type(model).__name__

    def encode(self, questions: Sequence[str], sentences: Sequence[str]) -> SpanBatch:
        """Encode pairs; a sentence too long for ``max_length`` is cut (``truncated``)."""
        encoding = self.tokenizer(
            list(questions),
            list(sentences),
            truncation="only_second",
            max_length=self.max_length,
            padding=True,
            return_offsets_mapping=True,
            return_tensors="pt",
        )
        batch, width = encoding["input_ids"].shape
        context = torch.zeros(batch, width, dtype=torch.bool)
        word_index = torch.full((batch, width), -1, dtype=torch.long)
        words: list[list[str]] = []
        truncated = []
        offsets = encoding["offset_mapping"]
        for row, sentence in enumerate(sentences):
            sequence = encoding.sequence_ids(row)
            raw_words = encoding.word_ids(row)
            order: dict[int, int] = {}
            spans: list[list[int]] = []
            for token, (part, word) in enumerate(zip(sequence, raw_words, strict=True)):
                if part != 1 or word is None:
                    continue
                context[row, token] = True
                start, end = (int(x) for x in offsets[row, token])
                if word not in order:
                    order[word] = len(order)
                    spans.append([start, end])
                spans[order[word]][1] = end
                word_index[row, token] = order[word]
            words.append([sentence[a:b] for a, b in spans])
            last = int(offsets[row][context[row]][-1, 1]) if context[row].any() else 0
            truncated.append(bool(sentence[last:].strip()))
        types = encoding.get("token_type_ids")
        return SpanBatch(
            input_ids=encoding["input_ids"].to(self.device),
            attention_mask=encoding["attention_mask"].to(self.device),
            token_type_ids=None if types is None else types.to(self.device),
            context=context.to(self.device),
            offsets=offsets,
            word_index=word_index.to(self.device),
            words=words,
            truncated=truncated,
        )

    def input_embeddings(self, batch: SpanBatch) -> torch.Tensor:
        """B×L×d input embeddings of the batch's tokens (the x of λmax)."""
        return self.module.get_input_embeddings()(batch.input_ids)

    def logits_from_embeddings(
        self, embeds: torch.Tensor, batch: SpanBatch
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Start and end logits (B×L each) from input embeddings."""
        out = self.module(inputs_embeds=embeds, **batch.model_inputs())
        return out.start_logits, out.end_logits

    def pad_embedding(self) -> torch.Tensor:
        """The pad token's input embedding (d,): what a deleted word is replaced by in leverage."""
        pad_id = self.tokenizer.pad_token_id or 0
        return self.module.get_input_embeddings().weight[pad_id].detach()

    def fisher(self, questions: Sequence[str], sentences: Sequence[str]) -> list[SpanFisherResult]:
        """Span λmax, word hints and leverage per pair; see :func:`fim_engine.spans.span_fisher`."""
        return span_fisher(self, questions, sentences)

    def predict(self, questions: Sequence[str], sentences: Sequence[str]) -> list[SpanPrediction]:
        """The best span of each sentence for its question, in input order.

        The best span maximises start logit + end logit over spans of the sentence's tokens
        with start ≤ end and at most ``max_answer_tokens`` tokens.
        """
        if len(questions) != len(sentences):
            raise ValueError(f"{len(questions)} questions but {len(sentences)} sentences")
        results: list[SpanPrediction] = []
        for first in range(0, len(questions), self.batch_size):
            rows = slice(first, first + self.batch_size)
            batch = self.encode(questions[rows], sentences[rows])
            with torch.inference_mode():
                out = self.module(input_ids=batch.input_ids, **batch.model_inputs())
            results.extend(
                self._best_spans(out.start_logits, out.end_logits, batch, sentences[rows])
            )
        return results

    def _best_spans(
        self,
        start: torch.Tensor,
        end: torch.Tensor,
        batch: SpanBatch,
        sentences: Sequence[str],
    ) -> list[SpanPrediction]:
        width = start.shape[1]
        positions = torch.arange(width, device=start.device)
        length = positions[None, :] - positions[:, None]  # end − start
        allowed = (length >= 0) & (length < self.max_answer_tokens)
        both = batch.context[:, :, None] & batch.context[:, None, :] & allowed[None]
        scores = (start[:, :, None] + end[:, None, :]).float().masked_fill(~both, float("-inf"))
        best = scores.flatten(1).argmax(dim=1).cpu().numpy()
        top = scores.flatten(1).max(dim=1).values.cpu().numpy()
        out = []
        for row, flat in enumerate(best):
            s, e = divmod(int(flat), width)
            # An empty sentence has no span to give (every score masked); a NaN score is the
            # model's own fault and is passed on for the caller to refuse.
            if np.isneginf(top[row]):
                out.append(SpanPrediction(0, 0, "", float("-inf"), batch.truncated[row]))
                continue
            a, b = int(batch.offsets[row, s, 0]), int(batch.offsets[row, e, 1])
            out.append(
                SpanPrediction(a, b, sentences[row][a:b], float(top[row]), batch.truncated[row])
            )
        return out


def load_span_system(
    path: str | Path,
    *,
    device: str | torch.device | None = None,
    dtype: torch.dtype = torch.float32,
    batch_size: int = 32,
    max_length: int = 256,
    max_answer_tokens: int = DEFAULT_MAX_ANSWER_TOKENS,
) -> SpanSystem:
    """Check and load a ``*ForQuestionAnswering`` directory (see :func:`check_span_model_dir`).

    The attention runs in transformers' eager implementation: span λmax differentiates the
    model twice, which the fused attention kernels do not support.
    """
    import transformers
    from transformers import AutoConfig, AutoTokenizer

    from fim_engine._transformers_backend import SAFE_LOADING
    from fim_engine.native import require_finite_weights

    name = check_span_model_dir(path)
    config = AutoConfig.from_pretrained(path, **SAFE_LOADING)
    try:
        model, info = getattr(transformers, name).from_pretrained(
            path,
            config=config,
            use_safetensors=True,
            output_loading_info=True,
            dtype=dtype,
            attn_implementation="eager",
            **SAFE_LOADING,
        )
    except MemoryError:
        raise
    except Exception as error:  # the safetensors reader's and transformers' own errors
        raise WeightValueError(f"model.safetensors could not be loaded: {error}") from error
    if info["missing_keys"]:
        missing = ", ".join(sorted(info["missing_keys"])[:5])
        raise MissingWeightsError(f"model.safetensors lacks {missing}: upload the fine-tuned model")
    require_finite_weights(model)
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, **SAFE_LOADING)
    except Exception as error:  # tokenizers fail on bad files in many ways
        raise MissingTokenizerError(f"the tokenizer files could not be loaded: {error}") from error
    system = SpanSystem(
        model,
        tokenizer,
        device=torch.device(device) if device is not None else default_device(),
        batch_size=batch_size,
        max_length=max_length,
        max_answer_tokens=max_answer_tokens,
    )
    _check_padding_invariance(system)
    return system


def _check_padding_invariance(system: SpanSystem) -> None:
    """Refuse models whose start or end logits on a sentence change when the pair is padded.

    As for sequence classifiers (:func:`fim_engine.load_system`): every result assumes a pair
    scores the same alone and in a batch, through token ids and through input embeddings.
    """
    questions = ["what ?", "what happened there , and to whom , after all of it ?"]
    sentences = ["a short one .", "a much longer sentence to force some padding onto the first ."]
    together, alone = (
        system.encode(questions, sentences),
        system.encode(questions[:1], sentences[:1]),
    )
    width = alone.input_ids.shape[1]
    keep = alone.context[0]
    tolerance = (
        1e-3 if next(system.module.parameters()).dtype in (torch.float16, torch.bfloat16) else 1e-4
    )

    def scores(batch: SpanBatch, through_embeddings: bool) -> Any:
        if through_embeddings:
            return system.module(
                inputs_embeds=system.input_embeddings(batch), **batch.model_inputs()
            )
        return system.module(input_ids=batch.input_ids, **batch.model_inputs())

    with torch.inference_mode():
        for through_embeddings in (False, True):
            padded, single = (scores(b, through_embeddings) for b in (together, alone))
            for name in ("start_logits", "end_logits"):
                first = getattr(padded, name)[0, :width][keep]
                reference = getattr(single, name)[0][keep]
                scale = max(1.0, float(reference.abs().max()))
                if float((first - reference).abs().max()) > tolerance * scale:
                    raise PaddingSensitiveModelError(
                        f"{system.architecture}: the {name.split('_')[0]} scores of a sentence "
                        "change when it is padded inside a batch; bibi cannot host it"
                    )
