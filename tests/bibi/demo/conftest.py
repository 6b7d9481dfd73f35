"""The demo tests' shared pieces: the fixture data, stand-in models, a private VAR_DIR and the
published tables of a task."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings as django_settings

from bibi.demo import builder, models
from bibi.evaluation.exports import TABLES
from bibi.evaluation.selectors import Viewer, names_for
from bibi.sharedtasks.models import SharedTask

REPO_ROOT = Path(__file__).resolve().parents[3]
FIXTURE_DATA = REPO_ROOT / "fixtures" / "demo"
TINY = REPO_ROOT / "fixtures" / "fim_engine" / "models"
STAND_INS = {"bow": "tiny-bow", "cnn": "tiny-cnn", "minilm": "tiny-bert"}


@pytest.fixture(autouse=True)
def _demo_builds_run_on_the_embedded_default(request):
    """`make demo` is the embedded default's main job (SQLite, tasks in-process): a demo test
    that builds tasks (marked ``embedded``) runs in the embedded run only. PostgreSQL and
    Redis under the same services are covered by the rest of the services run, and the demo
    builds cost the services run about two minutes of CI time for nothing more."""
    if request.node.get_closest_marker("embedded") and not django_settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("a demo build runs on the embedded default only (the embedded run)")


@pytest.fixture
def tiny_models(monkeypatch):
    """Trained baselines replaced by the tiny fixture models (their labels: negative, positive)."""
    trained = []

    def stand_in(architecture, data, *, progress=True):
        trained.append(architecture)
        return models.TrainedModel(architecture, TINY / STAND_INS[architecture], 0.5, True)

    monkeypatch.setattr(builder, "model_train", stand_in)
    return trained


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR


def published_tables(shared_task: SharedTask) -> tuple[list[dict], list[dict]]:
    snapshot = shared_task.snapshots.get(published_at__isnull=False)
    viewer = Viewer.of(user=_anonymous(), shared_task=shared_task)
    names = names_for(viewer=viewer, snapshot=snapshot)
    return (
        TABLES["builders"].as_json(snapshot, names),
        TABLES["breakers"].as_json(snapshot, names),
    )


def _anonymous():
    from django.contrib.auth.models import AnonymousUser

    return AnonymousUser()
