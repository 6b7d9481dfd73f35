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
            triggers.on_answer_rule_changed, dispatch_uid="evaluation-answer-rule"
        )
        signals.results_phase_warning.connect(
            triggers.on_results_phase_warning, dispatch_uid="evaluation-results-warning"
        )
