from __future__ import annotations

from django.apps import AppConfig


class PairsConfig(AppConfig):
    name = "bibi.pairs"
    label = "pairs"
    verbose_name = "Breaker pairs"
