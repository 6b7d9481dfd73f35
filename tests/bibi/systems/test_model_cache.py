"""A process keeps the last few loaded models (``SYSTEM_MODEL_CACHE_SIZE``, or as many as its
memory allows), least recently used out first, so a worker computing chunk after chunk of one
version loads it once."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest

from bibi.sharedtasks.models import SharedTask
from bibi.systems import runner
from bibi.systems.errors import ValidationFailed
from bibi.systems.models import System, SystemVersion

TINY = Path(__file__).resolve().parents[3] / "fixtures" / "fim_engine" / "models"


@pytest.fixture
def loads(settings, monkeypatch, tmp_path):
    settings.MODEL_STORE = tmp_path
    settings.SYSTEM_MODEL_CACHE_SIZE = 2
    monkeypatch.setattr(runner, "_LOADED", type(runner._LOADED)())
    calls: list[str] = []
    real = runner.model_load

    def counted(path, **options):
        calls.append(Path(path).name)
        return real(path, **options)

    monkeypatch.setattr(runner, "model_load", counted)
    return calls


def version(model: str) -> SystemVersion:
    """A ready version whose model this machine's store already holds."""
    from django.conf import settings

    key = uuid.uuid4()
    shutil.copytree(TINY / model, Path(settings.MODEL_STORE) / str(key) / model)
    # A label task's system: what the model is loaded for (its items, the text λmax counts).
    system = System(shared_task=SharedTask(task_type="text_classification"))
    return SystemVersion(uuid=key, model_dir=f"{key}/{model}", system=system)


def test_a_model_is_loaded_once_while_it_stays_in_the_cache(loads):
    bow = version("tiny-bow")
    first = runner.version_system(bow)
    assert runner.version_system(bow) is first
    assert first.predict(["a good film"]).labels[0] in {"negative", "positive"}
    assert loads == ["tiny-bow"]


def test_the_least_recently_used_model_leaves_first(loads):
    bow, cnn, bert = version("tiny-bow"), version("tiny-cnn"), version("tiny-bert")
    runner.version_system(bow)
    runner.version_system(cnn)
    runner.version_system(bow)  # bow is now the most recently used
    runner.version_system(bert)  # over the size of 2: cnn goes
    assert runner.loaded_versions() == [str(bow.uuid), str(bert.uuid)]
    runner.version_system(cnn)
    assert loads == ["tiny-bow", "tiny-cnn", "tiny-bert", "tiny-cnn"]
    assert runner.loaded_versions() == [str(bert.uuid), str(cnn.uuid)]


def test_by_default_the_cache_keeps_what_fits_in_the_workers_memory(loads, settings, monkeypatch):
    settings.SYSTEM_MODEL_CACHE_SIZE = 0
    settings.SYSTEM_MODEL_MEMORY_PERCENT = 50
    bow, cnn, bert = version("tiny-bow"), version("tiny-cnn"), version("tiny-bert")
    sizes = [runner.model_bytes(runner.version_system(v)) for v in (bow, cnn)]
    assert runner.loaded_versions() == [str(bow.uuid), str(cnn.uuid)]
    # Room for cnn and bert only (at 50%): loading bert drops the least recently used, bow.
    tiny_bert = runner.model_load(TINY / "tiny-bert")[1]
    room = 2 * (sizes[1] + runner.model_bytes(tiny_bert))
    monkeypatch.setattr(runner, "memory_bytes", lambda device: room)
    runner.version_system(bert)
    assert runner.loaded_versions() == [str(cnn.uuid), str(bert.uuid)]


def test_a_model_larger_than_the_memory_budget_still_stays_while_in_use(loads, monkeypatch):
    monkeypatch.setattr(runner, "memory_bytes", lambda device: 1)
    bow = version("tiny-bow")
    assert runner.version_system(bow) is runner.version_system(bow)
    assert runner.loaded_versions() == [str(bow.uuid)]


def test_the_memory_is_the_machines_or_its_cgroups(loads):
    import os

    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert 0 < runner.memory_bytes(runner.version_system(version("tiny-bow")).device) <= physical


def unpacked_version(labels: list[str]) -> SystemVersion:
    """A version being validated: its model is the directory its archive was unpacked into."""
    task = SharedTask(slug="t", labels=labels)
    return SystemVersion(uuid=uuid.uuid4(), system=System(shared_task=task, name="s"))


def test_a_model_being_validated_is_loaded_from_its_unpacked_directory_and_never_kept(loads):
    being_validated = unpacked_version(["negative", "positive"])
    first = runner.version_system(being_validated, unpacked=TINY / "tiny-cnn")
    second = runner.version_system(being_validated, unpacked=TINY / "tiny-cnn")
    assert first is not second
    assert loads == ["tiny-cnn", "tiny-cnn"]
    assert runner.loaded_versions() == []


def test_a_model_being_validated_must_have_the_tasks_label_count(loads):
    being_validated = unpacked_version(["negative", "neutral", "positive"])
    with pytest.raises(ValidationFailed) as failed:
        runner.version_system(being_validated, unpacked=TINY / "tiny-cnn")
    assert failed.value.reason == SystemVersion.FailureReason.LABEL_MISMATCH
    assert runner.loaded_versions() == []
