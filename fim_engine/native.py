"""The bibi-native format: three small text classifiers defined here, so no uploaded code runs.

A bibi-native model directory holds

* ``config.json``: ``{"format": "bibi-native", "architecture": "bow" | "cnn" | "bilstm" |
  "bow-pair", "labels": [...], "embedding_dim": ..., ...}`` (sizes below; unknown keys are
  refused),
* ``vocab.json``: ``{"<pad>": 0, "<unk>": 1, "the": 2, ...}``, token → row of the embedding,
* ``model.safetensors``: the state dict of the architecture.

Every architecture reads the n×d matrix of input word embeddings, one row per word, and exposes
``forward_embeddings`` so the engine can differentiate with respect to it (λmax, hints,
integrated gradients). Tokens are words: the tokenizer splits on whitespace and punctuation
(PTB-style clitics such as ``n't`` and ``'s`` are their own words, as in SST-2).

Architectures:

* ``bow``: a fastText-style bag of n-grams (the 2017 Strawman was a bag-of-ngrams model). The
  text vector is the mean of its word embeddings and of hashed bigram embeddings, followed by
  a tanh hidden layer. Choice: the bigram embeddings are looked up from the word ids, so they
  are features of the text that carry no gradient; λmax, hints and attributions measure the
  sensitivity to the word embeddings through the unigram path. Sizes: ``embedding_dim``,
  ``hidden_dim``, ``ngram_buckets`` (0 = unigrams only), ``dropout``.
* ``cnn``: Kim (2014): wide convolutions of several widths, ReLU, max over time.
  Sizes: ``embedding_dim``, ``filter_widths``, ``num_filters``, ``dropout``.
* ``bilstm``: a bidirectional LSTM whose last forward and backward states feed the classifier.
  Sizes: ``embedding_dim``, ``hidden_dim``, ``num_layers``, ``dropout``.
* ``bow-pair``: sentence pairs (premise, hypothesis; :mod:`fim_engine.sentence_pairs`). One
  bag-of-ngrams encoder, shared by both sides, gives u (premise) and v (hypothesis) as ``bow``
  gives its text vector; [u, v, |u − v|, u ∗ v] feeds a tanh layer and the classifier (the
  classic bag-of-words NLI baseline). Its input is the premise's words then the hypothesis's,
  told apart by token segments (0, 1); bigrams never cross the boundary. Sizes as ``bow``.

Example:
    >>> config = NativeConfig(architecture="cnn", labels=["negative", "positive"])
    >>> vocab = Vocabulary.build([["a", "fine", "film"]])
    >>> model = build_native_model(config, len(vocab))
    >>> save_native_model(model, config, vocab, "out/")
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence

from fim_engine.errors import (
    ConfigValueError,
    MissingFileError,
    MissingTokenizerError,
    ModelFormatError,
    UnknownArchitectureError,
    WeightShapeError,
    WeightValueError,
)

NATIVE_FORMAT = "bibi-native"
ARCHITECTURES = ("bow", "cnn", "bilstm", "bow-pair")
# Architectures that read sentence pairs; the others read single texts.
PAIR_ARCHITECTURES = ("bow-pair",)
PAD = "<pad>"
UNK = "<unk>"


@dataclass(frozen=True)
class NativeConfig:
    """Architecture and sizes of a bibi-native model (the contents of its ``config.json``)."""

    architecture: str
    labels: list[str]
    embedding_dim: int = 128
    hidden_dim: int = 128
    ngram_buckets: int = 50_000
    filter_widths: tuple[int, ...] = (3, 4, 5)
    num_filters: int = 100
    num_layers: int = 1
    dropout: float = 0.5
    lowercase: bool = True
    format: str = field(default=NATIVE_FORMAT)

    def __post_init__(self) -> None:
        if self.architecture not in ARCHITECTURES:
            raise UnknownArchitectureError(
                f"config.json: architecture {self.architecture!r} is not a bibi-native "
                f"architecture; use one of {', '.join(ARCHITECTURES)}"
            )
        for name in ("embedding_dim", "hidden_dim", "num_filters", "num_layers"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ModelFormatError(
                    f"config.json: {name} must be a positive integer, got {value!r}"
                )
        if not isinstance(self.ngram_buckets, int) or self.ngram_buckets < 0:
            raise ModelFormatError(
                f"config.json: ngram_buckets must be a non-negative integer, got {self.ngram_buckets!r}"
            )
        widths = self.filter_widths
        if not widths or not all(
            isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in widths
        ):
            raise ModelFormatError(
                f"config.json: filter_widths must be a non-empty list of positive integers, got {widths!r}"
            )
        if not isinstance(self.dropout, int | float) or not 0.0 <= self.dropout < 1.0:
            raise ModelFormatError(f"config.json: dropout must be in [0, 1), got {self.dropout!r}")
        if not isinstance(self.labels, list) or not all(
            isinstance(label, str) and label for label in self.labels
        ):
            raise ModelFormatError("config.json: labels must be a list of non-empty strings")
        if not isinstance(self.lowercase, bool):
            raise ConfigValueError(
                f"config.json: lowercase must be true or false, got {self.lowercase!r}"
            )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NativeConfig:
        """Validate a parsed ``config.json``; raise :class:`ModelFormatError` naming the bad key."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ModelFormatError(
                f"config.json: unknown key(s) {', '.join(unknown)} for a bibi-native model; "
                f"allowed keys are {', '.join(sorted(known))}"
            )
        if data.get("format") != NATIVE_FORMAT:
            raise ModelFormatError(f'config.json: "format" must be "{NATIVE_FORMAT}"')
        for required in ("architecture", "labels"):
            if required not in data:
                raise ModelFormatError(f'config.json: missing "{required}"')
        values = dict(data)
        if isinstance(values.get("filter_widths"), list):
            values["filter_widths"] = tuple(values["filter_widths"])
        return cls(**values)

    @property
    def inputs(self) -> tuple[str, ...]:
        """``("pair",)`` for an architecture that reads sentence pairs, else ``("text",)``."""
        return ("pair",) if self.architecture in PAIR_ARCHITECTURES else ("text",)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["filter_widths"] = list(self.filter_widths)
        return data


class Vocabulary:
    """Word → embedding row. Row 0 is ``<pad>``; unknown words map to ``<unk>``.

    Example:
        >>> vocab = Vocabulary.build([["good", "film"], ["bad", "film"]])
        >>> vocab.ids(["film", "zzz"])
        [2, 1]
    """

    def __init__(self, index: Mapping[str, int]) -> None:
        ids = sorted(index.values())
        if ids != list(range(len(ids))):
            raise ModelFormatError("vocab.json: ids must be the distinct integers 0 .. size-1")
        if index.get(PAD) != 0 or UNK not in index:
            raise ModelFormatError(f'vocab.json: must map "{PAD}" to 0 and contain "{UNK}"')
        self.index = dict(index)
        self.unk_id = self.index[UNK]

    @classmethod
    def build(
        cls, sentences: Iterable[Sequence[str]], *, min_count: int = 1, max_size: int | None = None
    ) -> Vocabulary:
        """Vocabulary of the words seen at least ``min_count`` times, most frequent first."""
        counts = Counter(word for sentence in sentences for word in sentence)
        ranked = sorted(
            (w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w)
        )
        if max_size is not None:
            ranked = ranked[: max(0, max_size - 2)]
        index = {PAD: 0, UNK: 1}
        for word in ranked:
            index.setdefault(word, len(index))
        return cls(index)

    @classmethod
    def load(cls, path: str | Path) -> Vocabulary:
        path = Path(path)
        if not path.is_file():
            raise MissingTokenizerError(
                f"{path.name} is missing: a bibi-native model needs vocab.json mapping each word to its embedding row"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except RecursionError:
            raise ConfigValueError("vocab.json is nested too deeply to read") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ModelFormatError(f"vocab.json is not valid UTF-8 JSON: {error}") from error
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
            for k, v in data.items()
        ):
            raise ModelFormatError("vocab.json must be a JSON object mapping words to integer ids")
        return cls(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.index, ensure_ascii=False), encoding="utf-8")

    def ids(self, words: Iterable[str]) -> list[int]:
        return [self.index.get(word, self.unk_id) for word in words]

    def __len__(self) -> int:
        return len(self.index)


class NativeClassifier(nn.Module):
    """Base of the native architectures: ids → word embeddings → logits.

    Subclasses implement :meth:`forward_embeddings`; ``embeds`` is B×L×d, ``input_ids`` and
    ``mask`` (True on the text's words) are B×L, ``segments`` (B×L, 0 premise, 1 hypothesis)
    tells a pair's sides apart and is ``None`` for single texts; the result is B×C logits. A
    row's logits depend on that row only, and padding positions never influence them.
    """

    embedding: nn.Embedding

    def forward_embeddings(
        self,
        embeds: torch.Tensor,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        segments: torch.Tensor | None = None,
    ) -> torch.Tensor:
        raise NotImplementedError

    def forward(
        self, input_ids: torch.Tensor, mask: torch.Tensor, segments: torch.Tensor | None = None
    ) -> torch.Tensor:
        return self.forward_embeddings(self.embedding(input_ids), input_ids, mask, segments)


def _bag_mean(
    embeds: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor, bigrams: nn.Embedding | None
) -> torch.Tensor:
    """Mean of the word embeddings (B×L×d) at ``mask`` and of the hashed embeddings of the
    bigrams of adjacent masked words (B×d); the bigram rows are looked up from ids, so they
    carry no gradient with respect to ``embeds``."""
    keep = mask.unsqueeze(-1).to(embeds.dtype)
    total = (embeds * keep).sum(dim=1)
    count = mask.sum(dim=1).to(embeds.dtype)
    if bigrams is not None and input_ids.shape[1] > 1:
        both = (mask[:, :-1] & mask[:, 1:]).unsqueeze(-1).to(embeds.dtype)
        # A fixed multiplicative hash keeps bucket ids identical across processes and saves.
        bucket = (input_ids[:, :-1] * 1_000_003 + input_ids[:, 1:]) % bigrams.num_embeddings
        total = total + (bigrams(bucket) * both).sum(dim=1)
        count = count + both.sum(dim=(1, 2))
    return total / count.clamp(min=1).unsqueeze(-1)


class BagOfNgrams(NativeClassifier):
    """fastText-style bag of unigrams and hashed bigrams with one tanh hidden layer."""

    # Text vectors the hidden layer reads side by side: one here, four for pairs.
    feature_blocks = 1

    def __init__(self, config: NativeConfig, vocab_size: int) -> None:
        super().__init__()
        dim = config.embedding_dim
        self.vocab_size = vocab_size
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.bigrams = nn.Embedding(config.ngram_buckets, dim) if config.ngram_buckets else None
        self.hidden = nn.Linear(self.feature_blocks * dim, config.hidden_dim)
        self.dropout = nn.Dropout(config.dropout)
        self.output = nn.Linear(config.hidden_dim, len(config.labels))

    def forward_embeddings(
        self,
        embeds: torch.Tensor,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        segments: torch.Tensor | None = None,
    ) -> torch.Tensor:
        return self.classify(_bag_mean(embeds, input_ids, mask, self.bigrams))

    def classify(self, features: torch.Tensor) -> torch.Tensor:
        """B×C logits from the B×(blocks·d) features: tanh layer, dropout, output layer."""
        return self.output(self.dropout(torch.tanh(self.hidden(features))))


class BagOfNgramsPair(BagOfNgrams):
    """Sentence pairs: u, v = the premise's and the hypothesis's bags of n-grams (one shared
    encoder), classified from [u, v, |u − v|, u ∗ v] through one tanh hidden layer."""

    feature_blocks = 4

    def forward_embeddings(
        self,
        embeds: torch.Tensor,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        segments: torch.Tensor | None = None,
    ) -> torch.Tensor:
        if segments is None:
            raise ValueError("bow-pair reads sentence pairs: it needs each token's segment")
        u = _bag_mean(embeds, input_ids, mask & (segments == 0), self.bigrams)
        v = _bag_mean(embeds, input_ids, mask & (segments == 1), self.bigrams)
        return self.classify(torch.cat([u, v, (u - v).abs(), u * v], dim=-1))


class KimCNN(NativeClassifier):
    """Kim (2014) CNN: wide 1-D convolutions, ReLU, max over the windows that touch the text."""

    def __init__(self, config: NativeConfig, vocab_size: int) -> None:
        super().__init__()
        dim = config.embedding_dim
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.widths = tuple(config.filter_widths)
        self.convs = nn.ModuleList(
            nn.Conv1d(dim, config.num_filters, w, padding=w - 1) for w in self.widths
        )
        self.dropout = nn.Dropout(config.dropout)
        self.output = nn.Linear(config.num_filters * len(self.widths), len(config.labels))

    def forward_embeddings(
        self,
        embeds: torch.Tensor,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        segments: torch.Tensor | None = None,
    ) -> torch.Tensor:
        # Zeroed padding plays the role of the convolution's own zero padding, so a padded row
        # sees exactly the windows it would see alone, as long as windows lying wholly in the
        # padding are excluded from the max below.
        x = (embeds * mask.unsqueeze(-1).to(embeds.dtype)).transpose(1, 2)
        lengths = mask.sum(dim=1)
        pooled = []
        for width, conv in zip(self.widths, self.convs, strict=True):
            maps = torch.relu(conv(x))
            positions = torch.arange(maps.shape[-1], device=maps.device)
            valid = positions.unsqueeze(0) < (lengths + width - 1).unsqueeze(1)
            best = maps.masked_fill(~valid.unsqueeze(1), float("-inf")).amax(dim=-1)
            pooled.append(torch.where((lengths > 0).unsqueeze(1), best, torch.zeros_like(best)))
        return self.output(self.dropout(torch.cat(pooled, dim=1)))


class BiLSTM(NativeClassifier):
    """Bidirectional LSTM over the words; the last forward and backward states are classified."""

    def __init__(self, config: NativeConfig, vocab_size: int) -> None:
        super().__init__()
        dim = config.embedding_dim
        self.embedding = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.lstm = nn.LSTM(
            dim,
            config.hidden_dim,
            num_layers=config.num_layers,
            batch_first=True,
            bidirectional=True,
            dropout=config.dropout if config.num_layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(config.dropout)
        self.output = nn.Linear(2 * config.hidden_dim, len(config.labels))

    def forward_embeddings(
        self,
        embeds: torch.Tensor,
        input_ids: torch.Tensor,
        mask: torch.Tensor,
        segments: torch.Tensor | None = None,
    ) -> torch.Tensor:
        lengths = mask.sum(dim=1)
        # Packing needs at least one step; an empty text runs on its (zeroed) padding and its
        # features are zeroed afterwards, so the logits are the output bias.
        packed = pack_padded_sequence(
            embeds * mask.unsqueeze(-1).to(embeds.dtype),
            lengths.clamp(min=1).cpu(),
            batch_first=True,
            enforce_sorted=False,
        )
        _, (hidden, _) = self.lstm(packed)
        features = torch.cat([hidden[-2], hidden[-1]], dim=1) * (lengths > 0).unsqueeze(1).to(
            embeds.dtype
        )
        return self.output(self.dropout(features))


_CLASSES: dict[str, type[NativeClassifier]] = {
    "bow": BagOfNgrams,
    "cnn": KimCNN,
    "bilstm": BiLSTM,
    "bow-pair": BagOfNgramsPair,
}


def build_native_model(config: NativeConfig, vocab_size: int) -> NativeClassifier:
    """A freshly initialised model of ``config.architecture`` for a vocabulary of ``vocab_size``."""
    return _CLASSES[config.architecture](config, vocab_size)


def expected_native_shapes(config: NativeConfig, vocab_size: int) -> dict[str, tuple[int, ...]]:
    """Tensor name → shape that ``model.safetensors`` must hold, computed without allocating."""
    with torch.device("meta"):
        model = build_native_model(config, vocab_size)
    return {name: tuple(tensor.shape) for name, tensor in model.state_dict().items()}


def save_native_model(
    model: NativeClassifier, config: NativeConfig, vocab: Vocabulary, out_dir: str | Path
) -> Path:
    """Write ``config.json``, ``vocab.json`` and ``model.safetensors`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(
        json.dumps(config.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    vocab.save(out / "vocab.json")
    state = {
        name: tensor.detach().cpu().contiguous() for name, tensor in model.state_dict().items()
    }
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    return out


def read_native_config(path: str | Path) -> NativeConfig:
    """Parse and validate ``config.json`` of a bibi-native model directory."""
    file = Path(path) / "config.json"
    if not file.is_file():
        raise MissingFileError("config.json is missing")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except RecursionError:
        raise ConfigValueError("config.json is nested too deeply to read") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelFormatError(f"config.json is not valid UTF-8 JSON: {error}") from error
    if not isinstance(data, dict):
        raise ModelFormatError("config.json must be a JSON object")
    return NativeConfig.from_dict(data)


def load_native_model(
    path: str | Path, *, dtype: torch.dtype = torch.float32
) -> tuple[NativeClassifier, NativeConfig, Vocabulary]:
    """Load a directory that :func:`fim_engine.check_model_dir` accepted; weights via safetensors only."""
    path = Path(path)
    config = read_native_config(path)
    vocab = Vocabulary.load(path / "vocab.json")
    model = build_native_model(config, len(vocab))
    try:
        state = load_file(str(path / "model.safetensors"))
    except MemoryError:
        raise
    except Exception as error:  # the safetensors reader's own errors: the file is at fault
        raise WeightValueError(f"model.safetensors could not be read: {error}") from error
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as error:
        raise WeightShapeError(
            f"model.safetensors does not fit the {config.architecture} architecture: "
            f"{' '.join(str(error).split())}"
        ) from error
    require_finite_weights(model)
    return model.to(dtype).eval(), config, vocab


def require_finite_weights(module: nn.Module) -> None:
    """Refuse a model holding NaN or infinite weights: every output would be NaN or saturated."""
    for name, tensor in module.state_dict().items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise WeightValueError(
                f"model.safetensors: tensor {name!r} holds NaN or infinite values"
            )
