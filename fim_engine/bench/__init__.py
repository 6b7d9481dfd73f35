"""fim_engine's benchmarks, run by ``python -m fim_engine bench|bench-gpu|bench-suggest|bench-span``.

* :mod:`fim_engine.bench.lambda_max` (``bench``): what λmax costs next to a forward pass, and
  next to Algorithm 1, per architecture and label count.
* :mod:`fim_engine.bench.gpu` (``bench-gpu``): throughput of forward and λmax on one
  accelerator, per model size, label count, batch size and precision.
* :mod:`fim_engine.bench.suggest` (``bench-suggest``): what suggestions cost, and how often they
  break.
* :mod:`fim_engine.bench.span` (``bench-span``): span λmax next to a forward pass.

They sit on top of the library (they load, train and suggest); nothing in it imports them.
``sentences.txt`` holds the built-in sentences the timings run on without ``--data``.
"""

from __future__ import annotations

from importlib import resources


def builtin_sentences() -> list[str]:
    """The lines of ``sentences.txt``: 40 sentences in the style of SST-2 reviews."""
    return (resources.files(__name__) / "sentences.txt").read_text(encoding="utf-8").splitlines()
