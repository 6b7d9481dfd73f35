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
from scoring.boundary import boundary_scores, percentile_ranks
from scoring.breakers import (
    WEIGHT_FROM_DEV,
    WEIGHT_FROM_ORIGINALS,
    WEIGHT_MODES,
    breaker_scores,
    dev_or_original_weights,
    system_weights,
)
from scoring.breaks import (
    BREAK_RATE_MODES,
    Breaks,
    break_rule,
    broken_pct,
    find_breaks,
    pair_breaks,
)
from scoring.builders import builder_metrics
from scoring.confusion import LabelScores, accuracy, confusion_counts, label_scores, macro_f1
from scoring.errors import ScoringInputError
from scoring.labels import normalize_labels
from scoring.lambda_analysis import LambdaAnalysis, lambda_analysis
from scoring.ranking import rank_leaderboard
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
    "WEIGHT_FROM_DEV",
    "WEIGHT_FROM_ORIGINALS",
    "WEIGHT_MODES",
    "Breaks",
    "LabelScores",
    "LambdaAnalysis",
    "ScoreReport",
    "ScoringInputError",
    "accuracy",
    "both_wrong_table",
    "boundary_scores",
    "break_matrix",
    "break_rule",
    "breaker_scores",
    "broken_pct",
    "builder_metrics",
    "confusion_counts",
    "dev_or_original_weights",
    "find_breaks",
    "flip_table",
    "item_predictions",
    "item_table",
    "label_scores",
    "lambda_analysis",
    "macro_f1",
    "normalize_labels",
    "outside_label_table",
    "pair_breaks",
    "rank_leaderboard",
    "percentile_ranks",
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
from scoring.span_breaks import span_breaks, span_builder_metrics, span_score  # noqa: E402

__all__ += [
    "ANSWER_MODES",
    "answer_scores",
    "normalize_answer",
    "normalize_answers",
    "span_breaks",
    "span_builder_metrics",
    "span_score",
    "token_f1",
]
