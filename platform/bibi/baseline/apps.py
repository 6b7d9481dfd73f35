from __future__ import annotations

from django.apps import AppConfig


class BaselineConfig(AppConfig):
    name = "bibi.baseline"
    label = "baseline"
    verbose_name = "The automatic baseline breaker"
