from __future__ import annotations

from django.apps import AppConfig


class SharedTasksConfig(AppConfig):
    name = "bibi.sharedtasks"
    label = "sharedtasks"
    verbose_name = "Shared tasks"
