"""The bibi Django project."""

from __future__ import annotations

# Import the Celery app whenever Django starts so shared tasks bind to it.
from bibi.celery import app as celery_app

__all__ = ["celery_app"]
