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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, overload

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
from fim_engine.errors import LabelCountError
from fim_engine.fisher import (
    FisherResult,
    Vjp,
    WordDirections,
    fisher_lambda_max,
    fisher_top_eigenvector,
)
from fim_engine.formats import check_model_dir
from fim_engine.precision import check_precision, precision_context
from fim_engine.sentence_pairs import (
    SentencePair,
    TextItem,
    as_items,
    check_editable,
    check_inputs,
    editable_segments,
    segment_names,
)
from fim_engine.system_checks import (
    check_padding_invariance,
    contrast_pass_problem,
    warn_autograd_fallback,
)
from fim_engine.system_outputs import PredictionBatch, TextDirections


def default_device() -> torch.device:
    """CUDA when available, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class System:
    """A loaded, ready-to-run classifier. Build it with :func:`load_system`.

    Inference runs in eval mode without gradients on parameters, in batches of ``batch_size``
    items grouped by length and padded with masks; items longer than ``max_length`` tokens
    (including special tokens) are truncated and reported as such. An item is a text or a
    sentence pair (:mod:`fim_engine.sentence_pairs`; a pair is cut ``longest_first``).
    ``precision`` (``"fp32"``, ``"tf32"`` or ``"bf16"``, :mod:`fim_engine.precision`) is the
    default of :meth:`predict`, :meth:`fisher` and :meth:`word_directions`; each takes
    ``precision=`` to override it. ``editable`` (``None``, ``"premise"``, ``"hypothesis"`` or
    ``"both"``) is the default of :meth:`fisher`, :meth:`word_directions` and
    :meth:`attributions` for sentence pairs: which segments count (``None``: every token).
    ``contrast_pass=False`` runs λmax on autograd's passes even where the family has its own
    (:meth:`contrast_pass`); the benchmarks compare the two.
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
        editable: str | None = None,
    ) -> None:
        if batch_size < 1 or max_length < 1:
            raise ValueError("batch_size and max_length must be positive")
        self.precision = check_precision(precision)
        self.editable = check_editable(editable)
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

    def without_contrast_pass(self) -> System:
        """This model, with λmax on autograd's passes even where the backend has its own (the
        benchmark times both; tests compare them)."""
        return System(
            self.backend,
            device=self.device,
            batch_size=self.batch_size,
            max_length=self.max_length,
            precision=self.precision,
            editable=self.editable,
            contrast_pass=False,
        )

    # The embedding path: the functions λmax, hints and attributions differentiate.

    def encode(self, texts: Sequence[TextItem], *, editable: str | None = None) -> EncodedBatch:
        """Tokenize and pad ``texts`` (in the given order) into one batch on the system's device;
        ``editable`` as for :meth:`fisher` decides the batch's ``editable`` mask."""
        items = self.editable_items(texts, editable)
        return collate(items, pad_id=self.backend.pad_id, device=self.device)

    def tokenize(self, texts: Sequence[TextItem]) -> list[TokenizedText]:
        """The items' tokens (every word editable), from the process-wide cache shared by
        systems with the same tokenizer (:class:`fim_engine._encoding.TokenCache`)."""
        items = as_items(texts)
        check_inputs(items, self.backend.inputs, self.architecture)
        return TOKEN_CACHE.tokenize(
            self.backend.tokenizer_key, items, self.max_length, self.backend.tokenize
        )

    def editable_items(
        self, texts: Sequence[TextItem], editable: str | None = None
    ) -> list[TokenizedText]:
        """:meth:`tokenize`, with only the words of the ``editable`` segments left editable.
        Without ``editable`` the system's default applies to sentence pairs; a text counts whole
        (naming a segment for a text raises ``ValueError``)."""
        check_editable(editable)
        items = as_items(texts)
        return [
            tokens.keep_segments(
                editable_segments(item, editable)
                if editable is not None or not isinstance(item, SentencePair)
                else editable_segments(item, self.editable)
            )
            for item, tokens in zip(items, self.tokenize(items), strict=True)
        ]

    def input_embeddings(self, batch: EncodedBatch) -> torch.Tensor:
        """B×L×d input word embeddings of ``batch`` (the x of the Fisher metric)."""
        return self.backend.input_embeddings(batch)

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: EncodedBatch) -> torch.Tensor:
        """B×C logits for input embeddings ``embeds`` (B×L×d) in place of the batch's own."""
        return self.backend.logits_from_embeddings(embeds, batch)

    def batches(
        self, texts: Sequence[TextItem], *, editable: str | None = None
    ) -> Iterator[tuple[list[int], EncodedBatch]]:
        """Yield ``(indices into texts, batch)`` for length-grouped batches of ``batch_size``;
        ``editable`` as for :meth:`fisher`."""
        items = self.editable_items(texts, editable)
        for indices in length_sorted_batches(items, self.batch_size):
            chosen = [items[i] for i in indices]
            yield indices, collate(chosen, pad_id=self.backend.pad_id, device=self.device)

    # The interface the platform uses.

    def running(self, precision: str | None = None) -> contextlib.AbstractContextManager[None]:
        """The context the passes run in: ``precision``, else the system's (validated)."""
        return precision_context(self.precision if precision is None else precision, self.device)

    def predict(
        self, texts: Sequence[TextItem], *, precision: str | None = None
    ) -> PredictionBatch:
        """Class probabilities for each text or sentence pair.

        Args:
            texts: N items: strings, or :class:`fim_engine.SentencePair` (a
                ``(premise, hypothesis)`` tuple is one) for a model that reads pairs.
            precision: ``"fp32"``, ``"tf32"`` or ``"bf16"``; default the system's.

        Returns:
            :class:`PredictionBatch` with N×C probabilities in input order.

        Example:
            >>> system.predict(["a gorgeous film"]).labels
            ['positive']
            >>> nli.predict([("A man sleeps.", "A man is awake.")]).labels
            ['contradiction']
        """
        texts = as_items(texts)
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
        self,
        texts: Sequence[TextItem],
        *,
        hints: bool = True,
        precision: str | None = None,
        editable: str | None = None,
    ) -> list[FisherResult]:
        """λmax of the Fisher metric w.r.t. each item's editable word embeddings, with word
        hints and word leverage.

        Args:
            texts: N texts or sentence pairs (as for :meth:`predict`).
            hints: compute per-word hints and leverage (cheap; False leaves both empty).
            precision: ``"fp32"``, ``"tf32"`` or ``"bf16"``; default the system's.
            editable: which of a pair's segments count: ``"premise"``, ``"hypothesis"``,
                ``"both"``, or ``None`` (every token); default the system's. λmax is then exact
                for the columns of J at those segments' word pieces; hints and leverage list
                their words (premise first), ``word_segments`` says whose.

        Returns:
            N :class:`FisherResult` in input order.

        Example:
            >>> result = system.fisher(["it is n't bad at all"])[0]
            >>> max(result.hints, key=lambda h: h[1]), max(result.leverage, key=lambda h: h[1])
            (("n't", 0.71), ('bad', 0.052))
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
                    word_segments=text.word_segments,
                )
                for text in self.word_directions(texts, precision=precision, editable=editable)
            ]
        items = as_items(texts)
        results: list[FisherResult | None] = [None] * len(items)
        for indices, batch, embeds, logits, vjp in self._differentiable_batches(
            items, precision, editable
        ):
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
                    word_segments=segment_names(batch.word_segments[row]),
                )
        return [r for r in results if r is not None]

    @overload
    def word_directions(
        self, texts: Sequence[str], *, precision: str | None = ..., editable: str | None = ...
    ) -> list[TextDirections[str]]: ...

    @overload
    def word_directions(
        self,
        texts: Sequence[TextItem],
        *,
        precision: str | None = ...,
        editable: str | None = ...,
    ) -> list[TextDirections[TextItem]]: ...

    def word_directions(
        self,
        texts: Sequence[TextItem],
        *,
        precision: str | None = None,
        editable: str | None = None,
    ) -> list[TextDirections[Any]]:
        """λmax and the top eigenvector of G per word for each item, with what an editor needs:
        the words, their character spans and token ids, and the leverage of deleting each.
        :meth:`fisher` reports its hints and leverage from this; suggestions rank edits with it.
        ``editable`` as for :meth:`fisher`.
        """
        items = as_items(texts)
        results: list[TextDirections[Any] | None] = [None] * len(items)
        pad = self.pad_embedding().double().cpu().numpy()
        for indices, batch, embeds, logits, vjp in self._differentiable_batches(
            items, precision, editable
        ):
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
                    text=items[i],
                    label=self.labels[int(probs[row].argmax())],
                    probabilities=probs[row],
                    truncated=batch.truncated[row],
                    words=batch.words[row],
                    spans=batch.spans[row],
                    word_index=word_rows[row],
                    input_ids=id_rows[row],
                    directions=directions,
                    leverage=directions.kl(directions.projection(pad)),
                    word_segments=segment_names(batch.word_segments[row]),
                )
        return [r for r in results if r is not None]

    def _differentiable_batches(
        self, texts: list[TextItem], precision: str | None, editable: str | None
    ) -> Iterator[tuple[list[int], EncodedBatch, torch.Tensor, torch.Tensor, Vjp | None]]:
        """``(indices, batch, embeddings, logits, vjp)`` per batch: the logits' vector-Jacobian
        products with respect to the embeddings, from the family's own pass
        (:meth:`contrast_pass`) where it has one, else ``None``: the logits are then
        differentiable and autograd's are used. The caller's backward pass runs inside the same
        context."""
        exact = self.contrast_pass()
        if exact is not None:
            with torch.no_grad(), self.running(precision):
                for indices, batch in self.batches(texts, editable=editable):
                    embeds = self.input_embeddings(batch)
                    logits, tape = exact.forward(embeds, batch.attention_mask, batch.token_type_ids)
                    yield indices, batch, embeds, logits, functools.partial(exact.backward, tape)
            return
        # Gradients are needed even when the caller runs under no_grad or inference_mode.
        with torch.inference_mode(False), torch.enable_grad(), self.running(precision):
            for indices, batch in self.batches(texts, editable=editable):
                embeds = self.input_embeddings(batch).detach().requires_grad_(True)
                yield indices, batch, embeds, self.logits_from_embeddings(embeds, batch), None

    def contrast_pass(self) -> ContrastPass | None:
        """The family's own pass λmax runs on (:attr:`Backend.contrast_pass`, e.g. the BERT
        pass), or ``None``: autograd's passes. The first call checks that the pass gives the
        model's logits and autograd's contrast gradients
        (:func:`fim_engine.system_checks.contrast_pass_problem`); if it differs or raises
        anything, a warning (and a log record) says why and autograd runs from then on. Always
        ``None`` for ``System(contrast_pass=False)``."""
        if self._checked_pass is None:
            exact = self.backend.contrast_pass
            problem = None if exact is None else contrast_pass_problem(self, exact)
            if problem is not None:
                warn_autograd_fallback(self.architecture, problem, stacklevel=3)
            self._checked_pass = exact is not None and problem is None
        return self.backend.contrast_pass if self._checked_pass else None

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
        self,
        texts: Sequence[TextItem],
        *,
        steps: int = 50,
        target: str | None = None,
        editable: str | None = None,
    ) -> list[WordAttributions]:
        """Integrated-gradients attributions per editable word (``editable`` as for
        :meth:`fisher`); see :func:`fim_engine.integrated_gradients`."""
        return integrated_gradients(self, texts, steps=steps, target=target, editable=editable)


def load_system(
    path: str | Path,
    *,
    device: str | torch.device | None = None,
    batch_size: int = 32,
    max_length: int = 128,
    expected_num_labels: int | None = None,
    dtype: torch.dtype = torch.float32,
    precision: str = "fp32",
    editable: str | None = None,
    contrast_pass: bool = True,
) -> System:
    """Check and load a model directory (transformers or bibi-native format).

    Args:
        path: the model directory.
        device: ``"cpu"``, ``"cuda"``, ...; default CUDA when available, else CPU.
        batch_size: texts per forward pass.
        max_length: maximum tokens per text, special tokens included; longer texts are truncated.
        expected_num_labels: the shared task's label count; a mismatch raises :class:`LabelCountError`.
        dtype: parameter dtype (float64 is for exactness tests).
        precision: ``"fp32"`` (exact), ``"tf32"`` or ``"bf16"``: the passes' default.
        editable: for sentence pairs, the segment(s) λmax, hints and attributions count by
            default: ``"premise"``, ``"hypothesis"``, ``"both"`` or ``None`` (every token).
        contrast_pass: False runs λmax on autograd even where the family has its own pass.

    Raises:
        ModelFormatError: a subclass naming what is wrong (see :mod:`fim_engine.errors`).

    Example:
        >>> system = load_system("models/cnn/", batch_size=64)
    """
    check_precision(precision)
    check_editable(editable)
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
        contrast_pass=contrast_pass,
        editable=editable,
    )
    if backend.kind == "transformers":
        check_padding_invariance(system)
    return system
