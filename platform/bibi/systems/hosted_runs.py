"""What validating a hosted version computes, whatever its task's type.

Worker-only, like everything that runs models. A labelled task's version (``label_outputs``:
a ``*ForSequenceClassification`` or native classifier, fed each item as its type gives it) and
a span task's (``span_outputs``: an extractive QA model) are each run over the blind dev set
(dev scores) and the starter set (λmax and word hints); ``validation`` picks the run by the
task's kind of answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bibi.systems.models import Prediction


@dataclass
class HostedRun:
    """A version's cells and scores from its model directory, before anything is stored."""

    rows: list[Prediction]
    model_format: str
    accuracy: float | None
    count: int
    # Labelled tasks: the task label each model label means, and dev macro-F1.
    mapping: dict[str, str] = field(default_factory=dict)
    macro_f1: float | None = None
    # Span tasks: the mean token F1 on the blind dev set.
    token_f1: float | None = None
    # Span tasks: the answer mode and token F1 threshold ``accuracy`` was computed under.
    answer_mode: str = ""
    answer_threshold: float | None = None
