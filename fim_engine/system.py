"""A hosted system: one interface over every model family (predict, fisher, attributions).

Example:
    >>> system = load_system("models/team-7/", expected_num_labels=2)
    >>> system.labels
    ['negative', 'positive']
    >>> batch = system.predict(["a gorgeous, witty film", "flat and tedious"])
    >>> batch.probabilities.shape
    (2, 2)
    >>> [r.lambda_max for r in system.fisher(["a gorgeous, witty film"])]
    [0.0123]
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from fim_engine._backend import Backend, ContrastPass
from fim_engine._encoding import (
    TOKEN_CACHE,
    EncodedBatch,
    TokenizedText,
    collate,
    length_sorted_batches,
)
from fim_engine._native_backend import NativeBackend
from fim_engine.attributions import WordAttributions, integrated_gradients
from fim_engine.errors import LabelCountError, PaddingSensitiveModelError
from fim_engine.fisher import (
    FisherResult,
    Vjp,
    WordDirections,
    autograd_vjp,
    contrasts,
    fisher_lambda_max,
    fisher_top_eigenvector,
)
from fim_engine.formats import check_model_dir
from fim_engine.precision import check_precision, precision_context

# Texts on which a family's own λmax pass must give the model's logits and autograd's gradients
# before it is trusted:
# one word, a padded longer text with punctuation, and a contraction.
PASS_CHECK_TEXTS = (
    "good",
    "It isn't a bad film at all, but the story was dull!",
    "a flat , dim mess",
)


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


@dataclass(frozen=True)
class TextDirections:
    """One text as :meth:`System.word_directions` sees it.

    ``words`` (W) are the text's words in order, ``spans`` their character offsets (``None``
    without a fast tokenizer); ``input_ids`` and ``word_index`` (L, padded) the tokens and the
    word of each (-1: none); ``directions`` holds λmax and the top eigenvector per word
    (:class:`fim_engine.WordDirections`); ``leverage`` (W) the first-order KL of deleting each
    word; ``label`` and ``probabilities`` the prediction.
    """

    text: str
    label: str
    probabilities: np.ndarray
    truncated: bool
    words: list[str]
    spans: list[tuple[int, int]] | None
    input_ids: np.ndarray
    word_index: np.ndarray
    directions: WordDirections
    leverage: np.ndarray

    def tokens(self, word: int) -> list[int]:
        """The token ids of word ``word``."""
        return [int(token) for token in self.input_ids[self.word_index == word]]


def default_device() -> torch.device:
    """CUDA when available, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class System:
    """A loaded, ready-to-run classifier. Build it with :func:`load_system`.

    Inference runs in eval mode without gradients on parameters, in batches of ``batch_size``
    texts grouped by length and padded with masks; texts longer than ``max_length`` tokens
    (including special tokens) are truncated and reported as such. ``precision`` (``"fp32"``,
    ``"tf32"`` or ``"bf16"``, :mod:`fim_engine.precision`) is the default of :meth:`predict`,
    :meth:`fisher` and :meth:`word_directions`; each takes ``precision=`` to override it.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        device: torch.device,
        batch_size: int,
        max_length: int,
        precision: str = "fp32",
        contrast_pass: bool = True,
    ) -> None:
        """``contrast_pass=False`` runs λmax on autograd even where the backend has its own
        pass (:attr:`Backend.contrast_pass`; the benchmark compares the two)."""
        if batch_size < 1 or max_length < 1:
            raise ValueError("batch_size and max_length must be positive")
        self.precision = check_precision(precision)
        self.backend = backend
        self.device = torch.device(device)  # callers may pass "cpu" or "cuda:0"
        self.batch_size = batch_size
        self.max_length = min(max_length, backend.max_length)
        self._vocabulary_words: list[tuple[int, str]] | None = None
        self._checked_pass: bool | None = None if contrast_pass else False
        backend.module.to(device).eval()
        for parameter in backend.module.parameters():
            parameter.requires_grad_(False)

    @property
    def labels(self) -> list[str]:
        """Label names in the model's label-index order."""
        return list(self.backend.labels)

    @property
    def num_labels(self) -> int:
        return len(self.backend.labels)

    @property
    def format(self) -> str:
        """``"transformers"`` or ``"bibi-native"``."""
        return self.backend.kind

    @property
    def architecture(self) -> str:
        return self.backend.architecture

    @property
    def dtype(self) -> torch.dtype:
        return next(self.backend.module.parameters()).dtype

    @property
    def contrast_pass(self) -> ContrastPass | None:
        """The pass λmax runs on: the backend's own (:attr:`Backend.contrast_pass`) once it has
        agreed with autograd on a check batch, else ``None`` (autograd's passes)."""
        return self._contrast_pass()

    def without_contrast_pass(self) -> System:
        """This model, with λmax on autograd's passes even where the backend has its own (the
        benchmark times both; tests compare them)."""
        return System(
            self.backend,
            device=self.device,
            batch_size=self.batch_size,
            max_length=self.max_length,
            precision=self.precision,
            contrast_pass=False,
        )

    # The embedding path: the functions λmax, hints and attributions differentiate.

    def encode(self, texts: Sequence[str]) -> EncodedBatch:
        """Tokenize and pad ``texts`` (in the given order) into one batch on the system's device."""
        return collate(self.tokenize(texts), pad_id=self.backend.pad_id, device=self.device)

    def tokenize(self, texts: Sequence[str]) -> list[TokenizedText]:
        """The texts' tokens, from the process-wide cache shared by systems with the same
        tokenizer (:class:`fim_engine._encoding.TokenCache`)."""
        return TOKEN_CACHE.tokenize(
            self.backend.tokenizer_key, texts, self.max_length, self.backend.tokenize
        )

    def input_embeddings(self, batch: EncodedBatch) -> torch.Tensor:
        """B×L×d input word embeddings of ``batch`` (the x of the Fisher metric)."""
        return self.backend.input_embeddings(batch)

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: EncodedBatch) -> torch.Tensor:
        """B×C logits for input embeddings ``embeds`` (B×L×d) in place of the batch's own."""
        return self.backend.logits_from_embeddings(embeds, batch)

    def batches(self, texts: Sequence[str]) -> Iterator[tuple[list[int], EncodedBatch]]:
        """Yield ``(indices into texts, batch)`` for length-grouped batches of ``batch_size``."""
        items = self.tokenize(texts)
        for indices in length_sorted_batches(items, self.batch_size):
            chosen = [items[i] for i in indices]
            yield indices, collate(chosen, pad_id=self.backend.pad_id, device=self.device)

    # The interface the platform uses.

    def running(self, precision: str | None = None) -> contextlib.AbstractContextManager[None]:
        """The context the passes run in: ``precision``, else the system's (validated)."""
        return precision_context(self.precision if precision is None else precision, self.device)

    def predict(self, texts: Sequence[str], *, precision: str | None = None) -> PredictionBatch:
        """Class probabilities for each text.

        Args:
            texts: N strings.
            precision: ``"fp32"``, ``"tf32"`` or ``"bf16"``; default the system's.

        Returns:
            :class:`PredictionBatch` with N×C probabilities in input order.

        Example:
            >>> system.predict(["a gorgeous film"]).labels
            ['positive']
        """
        texts = list(texts)
        probabilities = np.zeros((len(texts), self.num_labels), dtype=np.float64)
        truncated = [False] * len(texts)
        with torch.inference_mode(), self.running(precision):
            for indices, batch in self.batches(texts):
                logits = self.backend.logits(batch)
                probabilities[indices] = torch.softmax(logits.double(), dim=-1).cpu().numpy()
                for row, i in enumerate(indices):
                    truncated[i] = batch.truncated[row]
        names = self.labels
        labels = [names[i] for i in probabilities.argmax(axis=1)] if texts else []
        return PredictionBatch(names, probabilities, labels, truncated)

    def fisher(
        self, texts: Sequence[str], *, hints: bool = True, precision: str | None = None
    ) -> list[FisherResult]:
        """λmax of the Fisher metric w.r.t. each text's own word embeddings, with word hints
        and word leverage.

        Args:
            texts: N strings.
            hints: compute per-word hints and leverage (cheap; False leaves both empty).
            precision: ``"fp32"``, ``"tf32"`` or ``"bf16"``; default the system's.

        Returns:
            N :class:`FisherResult` in input order.

        Example:
            >>> result = system.fisher(["it is n't bad at all"])[0]
            >>> max(result.hints, key=lambda h: h[1])
            ("n't", 0.71)
            >>> max(result.leverage, key=lambda h: h[1])
            ('bad', 0.052)
        """
        if hints:
            return [
                FisherResult(
                    lambda_max=text.directions.lambda_max,
                    hints=list(zip(text.words, map(float, text.directions.norms), strict=True)),
                    truncated=text.truncated,
                    label=text.label,
                    probabilities=text.probabilities,
                    leverage=list(zip(text.words, map(float, text.leverage), strict=True)),
                )
                for text in self.word_directions(texts, precision=precision)
            ]
        texts = list(texts)
        results: list[FisherResult | None] = [None] * len(texts)
        for indices, batch, embeds, logits, vjp in self._differentiable_batches(texts, precision):
            lam, _ = fisher_lambda_max(logits, embeds, batch.editable, token_scores=False, vjp=vjp)
            probs = torch.softmax(logits.detach().double(), dim=-1).cpu().numpy()
            for row, i in enumerate(indices):
                results[i] = FisherResult(
                    lambda_max=float(lam[row]),
                    hints=[],
                    truncated=batch.truncated[row],
                    label=self.labels[int(probs[row].argmax())],
                    probabilities=probs[row],
                    leverage=[],
                )
        return [r for r in results if r is not None]

    def word_directions(
        self, texts: Sequence[str], *, precision: str | None = None
    ) -> list[TextDirections]:
        """λmax and the top eigenvector of G per word for each text, with what an editor needs:
        the words, their character spans and token ids, and the leverage of deleting each.
        :meth:`fisher` reports its hints and leverage from this; suggestions rank edits with it.
        """
        texts = list(texts)
        results: list[TextDirections | None] = [None] * len(texts)
        pad = self.pad_embedding().double().cpu().numpy()
        for indices, batch, embeds, logits, vjp in self._differentiable_batches(texts, precision):
            lam, direction = fisher_top_eigenvector(logits, embeds, batch.editable, vjp=vjp)
            probs = torch.softmax(logits.detach().double(), dim=-1).cpu().numpy()
            per_text = WordDirections.from_batch(
                lam, direction, embeds.detach(), batch.word_index, [len(w) for w in batch.words]
            )
            word_rows = batch.word_index.cpu().numpy()
            id_rows = batch.input_ids.cpu().numpy()
            for row, i in enumerate(indices):
                directions = per_text[row]
                results[i] = TextDirections(
                    text=texts[i],
                    label=self.labels[int(probs[row].argmax())],
                    probabilities=probs[row],
                    truncated=batch.truncated[row],
                    words=batch.words[row],
                    spans=batch.spans[row],
                    word_index=word_rows[row],
                    input_ids=id_rows[row],
                    directions=directions,
                    leverage=directions.kl(directions.projection(pad)),
                )
        return [r for r in results if r is not None]

    def _differentiable_batches(
        self, texts: list[str], precision: str | None
    ) -> Iterator[tuple[list[int], EncodedBatch, torch.Tensor, torch.Tensor, Vjp | None]]:
        """``(indices, batch, embeddings, logits, vjp)`` per batch: the logits' vector-Jacobian
        products with respect to the embeddings, from the family's own pass
        (:attr:`Backend.contrast_pass`) where it has one, else ``None``: the logits are then
        differentiable and autograd's are used. The caller's backward pass runs inside the same
        context."""
        exact = self._contrast_pass()
        if exact is not None:
            with torch.no_grad(), self.running(precision):
                for indices, batch in self.batches(texts):
                    embeds = self.input_embeddings(batch)
                    logits, tape = exact.forward(embeds, batch.attention_mask, batch.token_type_ids)
                    yield indices, batch, embeds, logits, functools.partial(exact.backward, tape)
            return
        # Gradients are needed even when the caller runs under no_grad or inference_mode.
        with torch.inference_mode(False), torch.enable_grad(), self.running(precision):
            for indices, batch in self.batches(texts):
                embeds = self.input_embeddings(batch).detach().requires_grad_(True)
                yield indices, batch, embeds, self.logits_from_embeddings(embeds, batch), None

    def _contrast_pass(self) -> ContrastPass | None:
        """The backend's own pass for λmax, once it has given the model's logits and autograd's
        contrast gradients on a check batch; otherwise (it differs, or fails on this device),
        with a warning, ``None``: autograd's passes."""
        if self._checked_pass is None:
            exact = self.backend.contrast_pass
            self._checked_pass = exact is not None and self._pass_agrees(exact)
        return self.backend.contrast_pass if self._checked_pass else None

    def _pass_agrees(self, exact: ContrastPass) -> bool:
        # Past the token cache: the check's texts are not the caller's.
        tokens = self.backend.tokenize(PASS_CHECK_TEXTS, self.max_length)
        batch = collate(tokens, pad_id=self.backend.pad_id, device=self.device)
        keep = batch.editable[None, :, :, None]
        try:
            with torch.autocast(self.device.type, enabled=False):
                with torch.inference_mode(False), torch.enable_grad():
                    embeds = self.input_embeddings(batch).detach().requires_grad_(True)
                    expected = self.logits_from_embeddings(embeds, batch)
                    grads = autograd_vjp(expected, embeds)(contrasts(expected)) * keep
                    expected = expected.detach()
                with torch.no_grad():
                    got, tape = exact.forward(
                        embeds.detach(), batch.attention_mask, batch.token_type_ids
                    )
                    got_grads = exact.backward(tape, contrasts(got)) * keep
        except (RuntimeError, NotImplementedError) as error:
            problem = f"fails: {str(error).splitlines()[0][:200]}"
        else:
            tolerance = 1e-4 if expected.dtype.itemsize <= 4 else 1e-9
            logit_error = float((got - expected).abs().max())
            logit_error /= 1.0 + float(expected.abs().max())
            grad_error = float((got_grads - grads).abs().max())
            grad_error /= max(float(grads.abs().max()), 1e-30)
            if max(logit_error, grad_error) <= tolerance:
                return True
            problem = f"differs from autograd by {max(logit_error, grad_error):.3g} (relative)"
        warnings.warn(
            f"λmax: {self.backend.architecture}'s own pass {problem}; autograd's passes are used",
            RuntimeWarning,
            stacklevel=4,
        )
        return False

    def pad_embedding(self) -> torch.Tensor:
        """The pad token's input embedding (d,): what a deleted word is replaced by in leverage.
        Zero for bibi-native models, whose padding row is never trained."""
        return self.backend.embedding_weight()[self.backend.pad_id].detach()

    def vocabulary_words(self) -> list[tuple[int, str]]:
        """``(token id, word)`` for every vocabulary token that stands for a whole word on its own
        (a text made of that word alone encodes to that one token), sorted by id; computed once."""
        if self._vocabulary_words is None:
            self._vocabulary_words = self.backend.vocabulary_words()
        return self._vocabulary_words

    def attributions(
        self, texts: Sequence[str], *, steps: int = 50, target: str | None = None
    ) -> list[WordAttributions]:
        """Integrated-gradients attributions per word; see :func:`fim_engine.integrated_gradients`."""
        return integrated_gradients(self, texts, steps=steps, target=target)


def load_system(
    path: str | Path,
    *,
    device: str | torch.device | None = None,
    batch_size: int = 32,
    max_length: int = 128,
    expected_num_labels: int | None = None,
    dtype: torch.dtype = torch.float32,
    precision: str = "fp32",
) -> System:
    """Check and load a model directory (transformers or bibi-native format).

    Args:
        path: the model directory.
        device: ``"cpu"``, ``"cuda"``, ...; default CUDA when available, else CPU.
        batch_size: texts per forward pass.
        max_length: maximum tokens per text, special tokens included; longer texts are truncated.
        expected_num_labels: the shared task's label count; a mismatch raises :class:`LabelCountError`.
        dtype: parameter dtype (float64 is for exactness tests).
        precision: ``"fp32"`` (exact), ``"tf32"`` or ``"bf16"``: the default of the system's
            passes (:mod:`fim_engine.precision`).

    Raises:
        ModelFormatError: a subclass naming what is wrong (see :mod:`fim_engine.errors`).

    Example:
        >>> system = load_system("models/cnn/", batch_size=64)
    """
    check_precision(precision)
    model_format = check_model_dir(path, expected_num_labels=expected_num_labels)
    backend: Backend
    if model_format.kind == "bibi-native":
        backend = NativeBackend.load(path, dtype=dtype)
    else:
        # Imported here so that the platform's web process can inspect uploads without transformers.
        from fim_engine._transformers_backend import TransformersBackend

        backend = TransformersBackend.load(path, dtype=dtype)
    if expected_num_labels is not None and len(backend.labels) != expected_num_labels:
        raise LabelCountError(
            f"the model has {len(backend.labels)} labels ({', '.join(backend.labels)}) but the shared task "
            f"has {expected_num_labels}"
        )
    system = System(
        backend,
        device=torch.device(device) if device is not None else default_device(),
        batch_size=batch_size,
        max_length=max_length,
        precision=precision,
    )
    if backend.kind == "transformers":
        _check_padding_invariance(system)
    return system


def _check_padding_invariance(system: System) -> None:
    """Refuse models whose scores change when a text is padded (e.g. last-token pooling).

    Every result bibi reports assumes a text scores the same alone and inside a batch, through
    token ids (predict) and through input embeddings (λmax, attributions); a model that reads
    the last position regardless of the mask would silently break that.
    """
    texts = ["good", "a much longer text to force some padding onto the short one ."]
    together, alone = system.encode(texts), system.encode(texts[:1])
    with torch.inference_mode():
        pairs = [
            (system.backend.logits(together)[0], system.backend.logits(alone)[0]),
            (
                system.logits_from_embeddings(system.input_embeddings(together), together)[0],
                system.logits_from_embeddings(system.input_embeddings(alone), alone)[0],
            ),
        ]
    tolerance = 1e-3 if system.dtype in (torch.float16, torch.bfloat16) else 1e-4
    for padded, single in pairs:
        scale = max(1.0, float(single.abs().max()))
        if float((padded - single).abs().max()) > tolerance * scale:
            raise PaddingSensitiveModelError(
                f"{system.architecture}: the prediction for a text changes when it is padded inside a "
                "batch (the model probably reads the last position); bibi cannot host it"
            )
