from __future__ import annotations

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "bibi.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation: prediction matrix, scoring runs, leaderboards"
