"""What a :class:`fim_engine.System` checks of its model before trusting it.

* At load, **padding invariance** (:func:`check_padding_invariance`): a text must score the same
  alone and inside a padded batch, through token ids and through input embeddings.
* On first use of λmax, **the family's own pass** (:func:`contrast_pass_problem`, e.g.
  :mod:`fim_engine.bert_pass`): it must give the model's logits and autograd's contrast
  gradients on a check batch of texts and a sentence pair (token types 0 and 1). It relies on
  the installed transformers' attribute paths and kernels, so *any* exception it raises is a
  reason to run autograd instead (a renamed submodule raises ``AttributeError``), never a crash:
  :func:`warn_autograd_fallback` logs and warns with the reason, and the λmax that follows is
  autograd's, which is exact too.

Example:
    >>> problem = contrast_pass_problem(system, system.backend.contrast_pass)
    >>> problem is None  # the pass agrees
    True
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from typing import Protocol

import torch

from fim_engine._backend import Backend, ContrastPass
from fim_engine._encoding import EncodedBatch, collate
from fim_engine.errors import PaddingSensitiveModelError
from fim_engine.fisher import autograd_vjp, contrasts
from fim_engine.sentence_pairs import SentencePair, TextItem

logger = logging.getLogger("fim_engine")

# Items on which a family's own λmax pass must give the model's logits and autograd's gradients
# before it is trusted: one word, a padded longer text with punctuation, a contraction, and a
# sentence pair (the hypothesis's token types are 1) for models that read pairs.
PASS_CHECK_ITEMS: tuple[TextItem, ...] = (
    "good",
    "It isn't a bad film at all, but the story was dull!",
    "a flat , dim mess",
    SentencePair("A man is playing a guitar on stage.", "Nobody is making music."),
)


class CheckedSystem(Protocol):
    """What the checks need of a system (:class:`fim_engine.System` is one)."""

    backend: Backend
    device: torch.device
    max_length: int

    @property
    def architecture(self) -> str: ...

    @property
    def dtype(self) -> torch.dtype: ...

    def encode(self, texts: Sequence[TextItem], *, editable: str | None = None) -> EncodedBatch: ...

    def input_embeddings(self, batch: EncodedBatch) -> torch.Tensor: ...

    def logits_from_embeddings(self, embeds: torch.Tensor, batch: EncodedBatch) -> torch.Tensor: ...


def describe(error: BaseException) -> str:
    """An exception in one line: its class and the first line of its message (≤ 200 chars)."""
    message = str(error).splitlines()[0][:200] if str(error) else ""
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def warn_autograd_fallback(architecture: str, problem: str, *, stacklevel: int = 2) -> None:
    """Log and warn (``RuntimeWarning``) that ``architecture``'s own λmax pass is not used."""
    message = f"λmax: {architecture}'s own pass {problem}; autograd's passes are used"
    logger.warning(message)
    warnings.warn(message, RuntimeWarning, stacklevel=stacklevel + 1)


def contrast_pass_problem(system: CheckedSystem, exact: ContrastPass) -> str | None:
    """``None`` when ``exact`` gives the model's logits and autograd's contrast gradients on the
    check batch (relative 1e-4 in float32, 1e-9 in float64); otherwise what is wrong, in words
    ("fails: AttributeError: ...", "differs from autograd by ...")."""
    items = [
        item
        for item in PASS_CHECK_ITEMS
        if ("pair" if isinstance(item, SentencePair) else "text") in system.backend.inputs
    ]
    # Past the token cache: the check's items are not the caller's.
    tokens = system.backend.tokenize(items, system.max_length)
    batch = collate(tokens, pad_id=system.backend.pad_id, device=system.device)
    keep = batch.editable[None, :, :, None]
    with torch.autocast(system.device.type, enabled=False):
        # Autograd is the reference: its failure is no fault of the pass, so it propagates.
        with torch.inference_mode(False), torch.enable_grad():
            embeds = system.input_embeddings(batch).detach().requires_grad_(True)
            expected = system.logits_from_embeddings(embeds, batch)
            grads = autograd_vjp(expected, embeds)(contrasts(expected)) * keep
            expected = expected.detach()
        try:
            with torch.no_grad():
                got, tape = exact.forward(
                    embeds.detach(), batch.attention_mask, batch.token_type_ids
                )
                got_grads = exact.backward(tape, contrasts(got)) * keep
        except Exception as error:  # any: the pass leans on another library's internals
            return f"fails: {describe(error)}"
    tolerance = 1e-4 if expected.dtype.itemsize <= 4 else 1e-9
    try:
        logit_error = float((got - expected).abs().max()) / (1.0 + float(expected.abs().max()))
        grad_error = float((got_grads - grads).abs().max())
    except Exception as error:  # e.g. a pass that returns the wrong shapes
        return f"fails: {describe(error)}"
    grad_error /= max(float(grads.abs().max()), 1e-30)
    if max(logit_error, grad_error) <= tolerance:
        return None
    return f"differs from autograd by {max(logit_error, grad_error):.3g} (relative)"


def check_padding_invariance(system: CheckedSystem) -> None:
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
