"""Numeric precision of a system's forward and backward passes.

* ``fp32`` (the default): float32 throughout; the exactness tests run in it (or in float64).
* ``tf32``: float32 tensors, but CUDA matrix products and convolutions may use TensorFloat-32
  (10-bit mantissa inputs, float32 accumulation). A no-op on CPU.
* ``bf16``: autocast to bfloat16 (CPU and CUDA): matrix products and most layers run in
  bfloat16, reductions stay float32. λmax is still assembled in float64 from the gradients.

λmax and hints under ``tf32``/``bf16`` are approximations; the README gives their measured
error next to fp32.

Example:
    >>> with precision_context("bf16", torch.device("cpu")):
    ...     logits = model(**inputs).logits
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where used, so that the CLI can list the modes without torch
    import torch

PRECISIONS = ("fp32", "tf32", "bf16")


def check_precision(precision: str) -> str:
    """``precision`` if it is one of :data:`PRECISIONS`, else a ValueError naming them."""
    if precision not in PRECISIONS:
        raise ValueError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    return precision


@contextlib.contextmanager
def precision_context(precision: str, device: torch.device) -> Iterator[None]:
    """Run the enclosed forward and backward passes in ``precision`` on ``device``; the global
    matmul settings that ``tf32`` changes are restored on exit."""
    import torch

    check_precision(precision)
    if precision == "bf16":
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16):
            yield
        return
    if precision == "tf32" and device.type == "cuda":
        matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
        try:
            yield
        finally:
            torch.backends.cuda.matmul.allow_tf32 = matmul
            torch.backends.cudnn.allow_tf32 = cudnn
        return
    yield
