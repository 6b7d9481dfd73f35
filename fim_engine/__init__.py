"""fim_engine: safe loading, batched inference, exact λmax, word hints and edit suggestions.

A plain library (it never imports Django). The public API:

* :func:`check_model_dir` → :class:`ModelFormat`: static inspection of an upload.
* :func:`load_system` → :class:`System`: ``labels``, ``predict``, ``fisher``, ``attributions``
  over texts or :class:`SentencePair` items (``editable=`` picks the segment that counts);
  ``precision="fp32" | "tf32" | "bf16"`` (:mod:`fim_engine.precision`, which needs no torch to
  list the modes).
* :func:`fisher_lambda_max`, :func:`fisher_top_eigenvector`: the λmax / top-eigenvector
  algorithm on any differentiable model.
* :func:`integrated_gradients`: word attributions along the embedding path.
* :func:`dense_fisher`: Algorithm 1 of the FIM paper (dense G), the slow reference.
* :func:`suggest`, :func:`suggest_many`, :func:`check_variant`: verified edit suggestions and
  checks of a breaker's draft variant, on texts and sentence pairs
  (:mod:`fim_engine.suggestions`), with :func:`neighbour_swaps` and
  :func:`embedding_neighbours` (:mod:`fim_engine.neighbours`), the one edit generator that
  needs a model (its embeddings). The
  others, WordNet and the rule of what an edit claims are the :mod:`edits` library's.
* :func:`train_system`: baseline builders (bow, cnn, bilstm, minilm; bow-pair, minilm-pair).
* :func:`read_texts`, :func:`read_labelled`, :func:`read_pairs`, :func:`read_labelled_pairs`:
  the input formats of the CLI (sentence pairs: the nli-cad TSV layout, CSV, JSONL).
* exceptions from :mod:`fim_engine.errors`.

Names are imported on first use (PEP 562), so ``import fim_engine`` loads neither torch nor
transformers: a web process can use :mod:`fim_engine.errors`, :mod:`fim_engine.datasets`,
:mod:`fim_engine.qasrl` and :mod:`fim_engine.precision` without them. ``check_model_dir`` needs torch (it builds architectures on the meta device to know
their tensor shapes).

Example:
    >>> from fim_engine import load_system
    >>> system = load_system("models/cnn/")
    >>> system.fisher(["a gorgeous, witty film"])[0].lambda_max
    0.0123
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # For type checkers only; at run time __getattr__ below imports on first use.
    from fim_engine.algorithm1 import DenseFisher, dense_fisher  # noqa: F401
    from fim_engine.attributions import WordAttributions, integrated_gradients  # noqa: F401
    from fim_engine.datasets import (  # noqa: F401
        LabelledPairs,
        LabelledTexts,
        read_items,
        read_labelled,
        read_labelled_pairs,
        read_pairs,
        read_texts,
    )
    from fim_engine.errors import (  # noqa: F401
        InputKindError,
        LabelCountError,
        MissingFileError,
        MissingTokenizerError,
        MissingWeightsError,
        ModelFormatError,
        PaddingSensitiveModelError,
        PickledWeightsError,
        RemoteCodeError,
        UnknownArchitectureError,
        WeightShapeError,
    )
    from fim_engine.fisher import (  # noqa: F401
        FisherResult,
        WordDirections,
        fisher_lambda_max,
        fisher_top_eigenvector,
    )
    from fim_engine.formats import ModelFormat, check_model_dir  # noqa: F401
    from fim_engine.native import NativeConfig  # noqa: F401
    from fim_engine.neighbours import embedding_neighbours, neighbour_swaps  # noqa: F401
    from fim_engine.qasrl import (  # noqa: F401
        QasrlFormatError,
        QasrlReading,
        QasrlRecord,
        read_qa,
        read_qasrl,
        read_tsv,
    )
    from fim_engine.sentence_pairs import SentencePair  # noqa: F401
    from fim_engine.span_model import (  # noqa: F401
        SpanPrediction,
        SpanSystem,
        check_span_model_dir,
        load_span_system,
    )
    from fim_engine.span_suggestions import (  # noqa: F401
        SpanDraftCheck,
        SpanOutcome,
        SpanSuggestion,
        answers_after,
        answers_right,
        answers_stretched,
        changed_stretch,
        check_span_variant,
        predicate_span,
        span_perturbations,
        span_suggest,
    )
    from fim_engine.span_training import SpanTrainingReport, train_span_system  # noqa: F401
    from fim_engine.spans import SpanFisherResult, span_fisher, span_lambda_max  # noqa: F401
    from fim_engine.suggestion_reports import (  # noqa: F401
        Suggestion,
        SuggestionReport,
        SystemOutcome,
        SystemPrediction,
        VariantCheck,
        VariantOutcome,
    )
    from fim_engine.suggestions import check_variant, suggest, suggest_many  # noqa: F401
    from fim_engine.system import System, load_system  # noqa: F401
    from fim_engine.system_outputs import PredictionBatch, TextDirections  # noqa: F401
    from fim_engine.training import TrainingReport, train_system  # noqa: F401

# Public name → the module that defines it.
_EXPORTS = {
    "algorithm1": ("DenseFisher", "dense_fisher"),
    "attributions": ("WordAttributions", "integrated_gradients"),
    "datasets": (
        "LabelledPairs",
        "LabelledTexts",
        "read_items",
        "read_labelled",
        "read_labelled_pairs",
        "read_pairs",
        "read_texts",
    ),
    "errors": (
        "InputKindError",
        "LabelCountError",
        "MissingFileError",
        "MissingTokenizerError",
        "MissingWeightsError",
        "ModelFormatError",
        "PaddingSensitiveModelError",
        "PickledWeightsError",
        "RemoteCodeError",
        "UnknownArchitectureError",
        "WeightShapeError",
    ),
    "fisher": ("FisherResult", "WordDirections", "fisher_lambda_max", "fisher_top_eigenvector"),
    "formats": ("ModelFormat", "check_model_dir"),
    "native": ("NativeConfig",),
    "suggestion_reports": (
        "Suggestion",
        "SuggestionReport",
        "SystemOutcome",
        "SystemPrediction",
        "VariantCheck",
        "VariantOutcome",
    ),
    "suggestions": ("check_variant", "suggest", "suggest_many"),
    "neighbours": ("embedding_neighbours", "neighbour_swaps"),
    # Span tasks (QA-SRL): readers, hosted extractive QA systems, span λmax, the span baseline.
    "qasrl": (
        "QasrlFormatError",
        "QasrlReading",
        "QasrlRecord",
        "read_qa",
        "read_qasrl",
        "read_tsv",
    ),
    "span_model": ("SpanPrediction", "SpanSystem", "check_span_model_dir", "load_span_system"),
    "span_suggestions": (
        "SpanDraftCheck",
        "SpanOutcome",
        "SpanSuggestion",
        "answers_after",
        "answers_right",
        "answers_stretched",
        "changed_stretch",
        "check_span_variant",
        "predicate_span",
        "span_perturbations",
        "span_suggest",
    ),
    "span_training": ("SpanTrainingReport", "train_span_system"),
    # Sentence-pair classification (NLI): the item type; readers are in datasets.
    "sentence_pairs": ("SentencePair",),
    "spans": ("SpanFisherResult", "span_fisher", "span_lambda_max"),
    "system": ("System", "load_system"),
    "system_outputs": ("PredictionBatch", "TextDirections"),
    "training": ("TrainingReport", "train_system"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'fim_engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"fim_engine.{module}"), name)
    # Later lookups find it in the module dict and skip this function.
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
