"""Task types as plug-ins: one module (or subpackage) per type behind one interface.

``task_type(key)`` is the type of a ``SharedTask.task_type`` value (``SharedTask.kind``);
``TaskType`` (``base``) is the interface and its contract; ``Parts`` is how a higher app keeps
its own part of each type (a model runner, guidance candidates, a page fragment).

The types:

- ``text_classification`` (``TextClassification``): one text -> a label;
- ``span_extraction`` (``SpanExtraction``): a sentence and a question -> a span of it;
- ``sentence_pair_classification`` (``SentencePairs``): a premise and a hypothesis -> a label.

A new type is a module here that subclasses ``TaskType`` (or ``LabelledTaskType``) and
registers an instance below, its template fragments under ``web/templates/tasktypes/<key>/``,
and the parts higher apps keep by type where its answers are of a new kind.
"""

from __future__ import annotations

from bibi.tasktypes.base import LABEL, SPAN, Parts, Segment, TaskType
from bibi.tasktypes.registry import choices, example_formats, register, task_type, task_types
from bibi.tasktypes.sentence_pairs import SentencePairs
from bibi.tasktypes.span_extraction import SpanExtraction
from bibi.tasktypes.text_classification import TextClassification

TEXT_CLASSIFICATION = register(TextClassification())
SPAN_EXTRACTION = register(SpanExtraction())
SENTENCE_PAIRS = register(SentencePairs())

__all__ = [
    "LABEL",
    "SPAN",
    "SENTENCE_PAIRS",
    "SPAN_EXTRACTION",
    "TEXT_CLASSIFICATION",
    "Parts",
    "Segment",
    "TaskType",
    "choices",
    "example_formats",
    "register",
    "task_type",
    "task_types",
]
