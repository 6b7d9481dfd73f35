from __future__ import annotations

from django.apps import AppConfig


class GuidanceConfig(AppConfig):
    name = "bibi.guidance"
    label = "guidance"
    verbose_name = "Guidance for breakers: boundary ranking, suggestions, draft checks"
