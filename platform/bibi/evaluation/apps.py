from __future__ import annotations

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "bibi.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation: prediction matrix, scoring runs, leaderboards"

    def ready(self) -> None:
        # What the task's services tell evaluation (bibi.sharedtasks.signals).
        from bibi.evaluation import triggers
        from bibi.sharedtasks import signals

        signals.answer_rule_changed.connect(
            triggers.dev_scores_after_answer_rule, dispatch_uid="evaluation-answer-rule"
        )
        signals.results_phase_warning.connect(
            triggers.validation_end_warning, dispatch_uid="evaluation-results-warning"
        )
