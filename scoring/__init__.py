"""Scores of a Build It, Break It shared task: a pure pandas/numpy library (no Django).

The public API; see README.md for the inputs, formulas, modes and outputs. Example::

    import scoring

    report = scoring.score(
        scoring.read_pairs("pairs.csv"),
        scoring.read_predictions("predictions.csv"),
        weights=scoring.read_weights("weights.csv"),
    )
    report.to_dict()["breakers"]
"""

from __future__ import annotations

from scoring._io import read_pairs, read_predictions, read_table, read_weights
from scoring.breakers import WEIGHT_MODES, breaker_scores, system_weights
from scoring.breaks import BREAK_RATE_MODES, Breaks, broken_pct, find_breaks
from scoring.builders import builder_metrics
from scoring.confusion import accuracy, confusion_counts, macro_f1
from scoring.errors import ScoringInputError
from scoring.labels import normalize_labels
from scoring.lambda_analysis import LambdaAnalysis, lambda_analysis
from scoring.report import ScoreReport, score
from scoring.tables import (
    both_wrong_table,
    break_matrix,
    flip_table,
    item_predictions,
    item_table,
    outside_label_table,
    tag_table,
)

__all__ = [
    "BREAK_RATE_MODES",
    "WEIGHT_MODES",
    "Breaks",
    "LambdaAnalysis",
    "ScoreReport",
    "ScoringInputError",
    "accuracy",
    "both_wrong_table",
    "break_matrix",
    "breaker_scores",
    "broken_pct",
    "builder_metrics",
    "confusion_counts",
    "find_breaks",
    "flip_table",
    "item_predictions",
    "item_table",
    "lambda_analysis",
    "macro_f1",
    "normalize_labels",
    "outside_label_table",
    "read_pairs",
    "read_predictions",
    "read_table",
    "read_weights",
    "score",
    "system_weights",
    "tag_table",
]

# Span tasks (QA-SRL): when an answer is right, and the break rule and builder scores for spans.
from scoring.answers import (  # noqa: E402
    ANSWER_MODES,
    answer_scores,
    normalize_answer,
    normalize_answers,
    token_f1,
)
from scoring.span_breaks import span_breaks, span_builder_metrics  # noqa: E402

__all__ += [
    "ANSWER_MODES",
    "answer_scores",
    "normalize_answer",
    "normalize_answers",
    "span_breaks",
    "span_builder_metrics",
    "token_f1",
]
