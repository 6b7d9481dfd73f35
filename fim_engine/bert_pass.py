"""λmax's passes for BERT sequence classifiers, written out: a forward pass that keeps what the
backward needs, and a backward pass that takes many cotangents at once.

λmax needs J_D = D ∂z/∂x, the gradients of the C − 1 logit contrasts with respect to the input
embeddings (:mod:`fim_engine.fisher`). Autograd gets them from one backward pass vmapped over the
contrasts, but on a CPU that pass costs about 1.2 forward passes per contrast: layer norm, GELU
and fused attention have no batching rule, so each runs once per contrast and the results are
stacked. Here every step of the backward pass is a plain tensor operation on a leading axis of K
cotangents, so the matrix products take all K at once and nothing is stacked.

Two facts of the architecture make both passes cheaper than the model's own:

* only the [CLS] position of the last layer reaches the pooler, so that layer's query, attention
  output, feed-forward network and layer norms run on one position; keys and values still run on
  every position (the forward and the backward pass both save about a sixth of MiniLM-L6's work);
* the model has no gradients to keep (its weights are fixed), so the backward pass computes
  input gradients only.

The arithmetic is BERT's, in eval mode (no dropout): embeddings LN(x + position + token type);
per layer a = LN(h + Attn(h) W_o), h′ = LN(a + GELU(a W_i) W_f); logits from tanh(h_cls W_p) W_c.
:class:`BertPass` takes the weights from the transformers module when called (so it follows the
module to another device or dtype), and :meth:`BertPass.for_model` returns ``None`` for a model
whose configuration it does not cover, which then runs on autograd. :class:`fim_engine.System`
also checks once that its logits equal the model's own before it trusts it.

Example:
    >>> bert = BertPass.for_model(model)
    >>> logits, tape = bert.forward(embeds, attention_mask, token_type_ids)
    >>> grads = bert.backward(tape, cotangents)  # K×B×C → K×B×L×d
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F


@dataclass
class _Norm:
    """What a layer norm's backward pass needs: its input, the row means and 1/σ, the gain."""

    input: torch.Tensor
    mean: torch.Tensor
    inv_std: torch.Tensor
    gain: torch.Tensor

    def backward(self, grad: torch.Tensor) -> torch.Tensor:
        """∂/∂x of K losses whose gradients with respect to the output are ``grad`` (K×…×d):
        the native kernel, on the K gradients folded into its rows."""
        k, dim = grad.shape[0], grad.shape[-1]

        def rows(x: torch.Tensor) -> torch.Tensor:
            # A copy: the kernel reads rows as contiguous (a reshape may keep stride 0).
            return x.expand(k, *x.shape).reshape(-1, x.shape[-1]).contiguous()

        folded = torch.ops.aten.native_layer_norm_backward(
            grad.reshape(-1, dim).to(self.input.dtype).contiguous(),
            rows(self.input),
            [dim],
            rows(self.mean),
            rows(self.inv_std),
            self.gain,
            None,
            [True, False, False],
        )[0]
        return folded.view(grad.shape)


@dataclass
class _LayerTape:
    """One encoder layer's saved activations; ``rows`` = 1 when only [CLS] was computed."""

    query: torch.Tensor  # B×H×rows×h
    key: torch.Tensor  # B×H×L×h
    value: torch.Tensor  # B×H×L×h
    probs: torch.Tensor  # B×H×rows×L
    attention_norm: _Norm
    gelu_slope: torch.Tensor  # B×rows×4d, GELU′ at the intermediate pre-activation
    output_norm: _Norm
    cls_only: bool


@dataclass
class Tape:
    """Everything :meth:`BertPass.backward` needs from one forward pass."""

    embedding_norm: _Norm
    layers: list[_LayerTape]
    pooled: torch.Tensor  # B×d, tanh(h_cls W_p + b_p)


class BertPass:
    """The forward and batched backward passes of one BERT sequence classifier."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.bert = model.bert
        self.heads = int(model.config.num_attention_heads)

    @classmethod
    def for_model(cls, model: Any) -> BertPass | None:
        """A pass for ``model`` when it is a BERT classifier this module covers, else ``None``."""
        config = getattr(model, "config", None)
        if config is None or type(model).__name__ != "BertForSequenceClassification":
            return None
        covered = (
            getattr(config, "hidden_act", None) == "gelu"
            and getattr(config, "position_embedding_type", "absolute") in (None, "absolute")
            and not getattr(config, "is_decoder", False)
            and not getattr(config, "add_cross_attention", False)
            and getattr(model.bert, "pooler", None) is not None
            and config.hidden_size % config.num_attention_heads == 0
            and len(model.bert.encoder.layer) > 0
        )
        return cls(model) if covered else None

    def forward(
        self,
        embeds: torch.Tensor,
        attention_mask: torch.Tensor,
        token_type_ids: torch.Tensor | None,
    ) -> tuple[torch.Tensor, Tape]:
        """B×C logits for input word embeddings ``embeds`` (B×L×d), and the tape."""
        emb = self.bert.embeddings
        length = embeds.shape[1]
        types = (
            token_type_ids
            if token_type_ids is not None
            else torch.zeros(embeds.shape[:2], dtype=torch.long, device=embeds.device)
        )
        positions = emb.position_embeddings.weight[:length]
        hidden, embedding_norm = _norm(
            embeds + emb.token_type_embeddings(types) + positions, emb.LayerNorm
        )
        # Padding keys get −inf before the softmax; every row keeps its [CLS] key.
        mask = torch.zeros(attention_mask.shape, dtype=hidden.dtype, device=hidden.device)
        mask = mask.masked_fill(attention_mask == 0, float("-inf"))[:, None, None, :]
        layers = self.bert.encoder.layer
        tapes = []
        for index, layer in enumerate(layers):
            hidden, tape = self._layer(layer, hidden, mask, cls_only=index == len(layers) - 1)
            tapes.append(tape)
        pooler = self.bert.pooler.dense
        pooled = torch.tanh(F.linear(hidden[:, 0], pooler.weight, pooler.bias))
        head = self.model.classifier
        logits = F.linear(pooled, head.weight, head.bias)
        return logits, Tape(embedding_norm, tapes, pooled)

    def _layer(
        self, layer: Any, hidden: torch.Tensor, mask: torch.Tensor, *, cls_only: bool
    ) -> tuple[torch.Tensor, _LayerTape]:
        attention = layer.attention.self
        batch, length, dim = hidden.shape
        rows = hidden[:, :1] if cls_only else hidden

        def heads(x: torch.Tensor) -> torch.Tensor:
            return x.view(batch, x.shape[1], self.heads, -1).transpose(1, 2)

        query = heads(F.linear(rows, attention.query.weight, attention.query.bias))
        key = heads(F.linear(hidden, attention.key.weight, attention.key.bias))
        value = heads(F.linear(hidden, attention.value.weight, attention.value.bias))
        scale = 1.0 / math.sqrt(query.shape[-1])
        probs = torch.softmax((query @ key.transpose(-1, -2)) * scale + mask, dim=-1)
        context = (probs @ value).transpose(1, 2).reshape(batch, rows.shape[1], dim)
        out = layer.attention.output
        attended, attention_norm = _norm(
            F.linear(context, out.dense.weight, out.dense.bias) + rows, out.LayerNorm
        )
        inner = layer.intermediate.dense
        pre = F.linear(attended, inner.weight, inner.bias)
        # GELU′(pre) by the native kernel: gelu_backward(1, pre).
        gelu_slope = torch.ops.aten.gelu_backward(torch.ones_like(pre), pre)
        ffn = layer.output
        result, output_norm = _norm(
            F.linear(F.gelu(pre), ffn.dense.weight, ffn.dense.bias) + attended, ffn.LayerNorm
        )
        tape = _LayerTape(
            query, key, value, probs, attention_norm, gelu_slope, output_norm, cls_only
        )
        return result, tape

    def backward(self, tape: Tape, cotangents: torch.Tensor) -> torch.Tensor:
        """uᵀ ∂z/∂x for each of K cotangents u: K×B×C in, K×B×L×d out (vector-Jacobian
        products with respect to the input word embeddings)."""
        grad = cotangents.to(tape.pooled.dtype) @ self.model.classifier.weight
        grad = grad * (1.0 - tape.pooled.square())
        grad = (grad @ self.bert.pooler.dense.weight).unsqueeze(2)  # K×B×1×d, at [CLS]
        layers = self.bert.encoder.layer
        for layer, layer_tape in zip(reversed(layers), reversed(tape.layers), strict=True):
            grad = self._layer_backward(layer, layer_tape, grad)
        return tape.embedding_norm.backward(grad)

    def _layer_backward(self, layer: Any, tape: _LayerTape, grad: torch.Tensor) -> torch.Tensor:
        # Every product below is a fresh tensor of K×…, so it is scaled and summed in place:
        # a new K-fold tensor per step would cost more in page faults than in arithmetic.
        grad = tape.output_norm.backward(grad)
        inner = (grad @ layer.output.dense.weight).mul_(tape.gelu_slope)
        grad = tape.attention_norm.backward((inner @ layer.intermediate.dense.weight).add_(grad))
        attention = layer.attention.self
        k, batch, rows, dim = grad.shape
        heads, width, length = self.heads, dim // self.heads, tape.key.shape[2]
        scale = 1.0 / math.sqrt(width)
        # ∂/∂context per head, the K cotangents folded into its rows (B×H×(K·rows)×h): the
        # products with the saved keys, values and queries then need no copy of them per
        # cotangent, as a broadcast over K would make.
        context = (grad @ layer.attention.output.dense.weight).view(k, batch, rows, heads, width)
        context = context.permute(1, 3, 0, 2, 4).reshape(batch, heads, k * rows, width)
        d_scores = context @ tape.value.transpose(-1, -2)  # ∂/∂probs, then the softmax's backward
        folded = d_scores.view(batch, heads, k, rows, length)
        probs = tape.probs.unsqueeze(2)
        folded.sub_((folded * probs).sum(dim=-1, keepdim=True)).mul_(probs)
        d_query = (d_scores @ tape.key).mul_(scale).view(batch, heads, k, rows, width)
        by_column = context.view(batch, heads, k, rows, width).transpose(2, 3)
        d_value = tape.probs.transpose(-1, -2) @ by_column.reshape(batch, heads, rows, k * width)
        d_value = d_value.view(batch, heads, length, k, width).permute(3, 0, 2, 1, 4)
        by_row = folded.transpose(-1, -2).reshape(batch, heads, k * length, rows)
        d_key = (by_row @ tape.query).mul_(scale).view(batch, heads, k, length, width)
        d_key = d_key.permute(2, 0, 3, 1, 4)
        d_query = d_query.permute(2, 0, 3, 1, 4)  # each K×B×positions×H×h
        parts = [d_key, d_value] if tape.cls_only else [d_query, d_key, d_value]
        stacked = grad.new_empty(k, batch, length, len(parts), heads, width)
        for slot, part in enumerate(parts):
            stacked[:, :, :, slot].copy_(part)
        linears = [attention.key, attention.value]
        if not tape.cls_only:
            linears.insert(0, attention.query)
        weights = torch.cat([linear.weight for linear in linears])
        out = stacked.view(k, batch, length, -1) @ weights
        if tape.cls_only:
            out[:, :, :1] += d_query.reshape(k, batch, 1, dim) @ attention.query.weight
        out[:, :, :rows] += grad
        return out


def _norm(x: torch.Tensor, layer_norm: Any) -> tuple[torch.Tensor, _Norm]:
    """``layer_norm(x)``, and what its backward pass needs."""
    out, mean, inv_std = torch.native_layer_norm(
        x, [x.shape[-1]], layer_norm.weight, layer_norm.bias, layer_norm.eps
    )
    return out, _Norm(x, mean, inv_std, layer_norm.weight)
