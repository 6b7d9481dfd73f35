from __future__ import annotations

from django.apps import AppConfig


class SystemsConfig(AppConfig):
    name = "bibi.systems"
    label = "systems"
    verbose_name = "Builder systems"
