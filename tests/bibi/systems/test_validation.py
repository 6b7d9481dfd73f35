"""Validating hosted uploads in-process: the same service the gpu worker runs."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

import fim_engine
from bibi.systems import services, validation
from bibi.systems.models import Prediction, SystemVersion

from ..conftest import BLIND_DEV, STARTER
from .conftest import BAD_MODELS, TINY_MODELS, archive_upload

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def upload_and_validate(cast, system, directory: Path, **kwargs) -> SystemVersion:
    version = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(directory), **kwargs
    )
    return validation.system_version_validate(version_id=version.id)


def model_store_entries(version: SystemVersion) -> list[Path]:
    store = Path(settings.MODEL_STORE)
    return [p for p in store.glob(f"*{version.uuid}*")] if store.exists() else []


@pytest.mark.parametrize("architecture", ["tiny-cnn", "tiny-bow", "tiny-bilstm", "tiny-bert"])
def test_a_valid_model_ends_ready_with_dev_scores_and_lambda_for_every_starter(
    hosted, architecture
):
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / architecture)
    assert version.status == "ready", version.failure_detail
    assert version.dev_count == len(BLIND_DEV)
    assert 0 <= version.dev_accuracy <= 1 and 0 <= version.dev_macro_f1 <= 1
    starter = version.predictions.filter(source=Prediction.Source.STARTER)
    assert sorted(p.example.external_id for p in starter) == sorted(eid for eid, _, _ in STARTER)
    assert all(p.lambda_max is not None and p.lambda_max >= 0 for p in starter)
    assert all(len(p.hints) >= 1 for p in starter)
    system.refresh_from_db()
    assert system.active_version == version
    assert (Path(settings.MODEL_STORE) / version.model_dir / "config.json").is_file()


def test_dev_accuracy_is_what_the_model_gets_right_on_the_blind_dev_set(hosted):
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    loaded = fim_engine.load_system(TINY_MODELS / "tiny-cnn")
    predicted = loaded.predict([text for _, text, _ in BLIND_DEV]).labels
    expected = sum(p == gold for p, (_, _, gold) in zip(predicted, BLIND_DEV, strict=True)) / len(
        BLIND_DEV
    )
    assert version.dev_accuracy == pytest.approx(expected)
    stored = dict(
        version.predictions.filter(source="blind_dev").values_list("example__external_id", "label")
    )
    assert stored == {eid: label for (eid, _, _), label in zip(BLIND_DEV, predicted, strict=True)}


def test_the_upload_is_enqueued_on_the_gpu_queue_after_commit(
    hosted, django_capture_on_commit_callbacks, monkeypatch
):
    from bibi.systems import tasks

    sent = []
    monkeypatch.setattr(
        tasks.system_validate_task,
        "apply_async",
        lambda args, kwargs, **options: sent.append(args[0]),
    )
    cast, system = hosted
    with django_capture_on_commit_callbacks(execute=True):
        version = services.system_version_upload(
            system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
        )
    assert sent == [version.id]
    assert version.status == "queued"
    assert len(version.archive_sha256) == 64
    from bibi.celery import app

    assert app.amqp.router.route({}, tasks.system_validate_task.name)["queue"].name == "gpu"


BAD_CASES = json.loads((BAD_MODELS / "cases.json").read_text())


@pytest.mark.parametrize("case", sorted(BAD_CASES))
def test_a_bad_model_directory_fails_with_its_reason_and_leaves_no_file(hosted, case):
    cast, system = hosted
    version = upload_and_validate(cast, system, BAD_MODELS / case)
    assert version.status == "failed"
    expected_reason = (
        "label_mismatch" if BAD_CASES[case]["error"] == "LabelCountError" else "invalid_model"
    )
    assert version.failure_reason == expected_reason
    assert BAD_CASES[case]["message_contains"] in version.failure_detail
    assert model_store_entries(version) == []
    assert not (Path(settings.UPLOAD_ROOT) / version.archive_path).exists()


def test_a_model_with_more_labels_than_the_task_fails_as_a_label_mismatch(hosted):
    cast, system = hosted
    cast.shared_task.labels = ["negative", "neutral", "positive"]
    cast.shared_task.save()
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert (version.status, version.failure_reason) == ("failed", "label_mismatch")
    assert "3" in version.failure_detail and "2" in version.failure_detail


def test_a_stated_label_mapping_is_applied(hosted):
    cast, system = hosted
    version = upload_and_validate(
        cast,
        system,
        TINY_MODELS / "tiny-cnn",
        label_mapping={"negative": "positive", "positive": "negative"},
    )
    assert version.status == "ready"
    loaded = fim_engine.load_system(TINY_MODELS / "tiny-cnn")
    raw = loaded.predict([text for _, text, _ in BLIND_DEV]).labels
    flipped = {"negative": "positive", "positive": "negative"}
    stored = list(
        version.predictions.filter(source="blind_dev")
        .order_by("example__position")
        .values_list("label", flat=True)
    )
    assert stored == [flipped[label] for label in raw]


def test_a_mapping_to_labels_outside_the_task_is_refused_at_upload(hosted):
    cast, system = hosted
    with pytest.raises(ValidationError, match="Not labels of this task: neutral"):
        services.system_version_upload(
            system=system,
            actor=cast.builder,
            archive=archive_upload(TINY_MODELS / "tiny-cnn"),
            label_mapping={"negative": "neutral"},
        )
    assert not system.versions.exists()


def test_a_forward_pass_that_raises_fails_as_a_model_error(hosted, monkeypatch):
    def explode(self, texts):
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied")

    monkeypatch.setattr(fim_engine.System, "predict", explode)
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert (version.status, version.failure_reason) == ("failed", "model_error")
    assert (
        version.failure_detail
        == "The model raised RuntimeError: mat1 and mat2 shapes cannot be multiplied"
    )
    assert model_store_entries(version) == []


def test_running_out_of_memory_is_its_own_reason(hosted, monkeypatch):
    def swell(self, texts, hints=True):
        raise MemoryError()

    monkeypatch.setattr(fim_engine.System, "fisher", swell)
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert (version.status, version.failure_reason) == ("failed", "out_of_memory")
    assert model_store_entries(version) == []


def test_a_validation_past_the_soft_time_limit_fails_as_a_time_out(hosted, monkeypatch):
    def slow(self, texts):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(fim_engine.System, "predict", slow)
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert (version.status, version.failure_reason) == ("failed", "timeout")
    assert "longer than the limit" in version.failure_detail
    assert version.counts_against_quota


def test_a_lost_worker_fails_the_version_without_counting_it(hosted, settings):
    cast, system = hosted
    settings.SYSTEM_VALIDATION_TIME_LIMIT = 60
    version = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )
    SystemVersion.objects.filter(id=version.id).update(
        status="running", started_at=timezone.now() - timedelta(minutes=5)
    )
    assert services.system_versions_reap_stale() == 1
    version.refresh_from_db()
    assert (version.status, version.failure_reason) == ("failed", "worker_lost")
    assert version.counts_against_quota is False


def test_platform_failures_do_not_use_up_the_upload_quota(hosted):
    cast, system = hosted
    cast.shared_task.max_uploads_per_system = 1
    cast.shared_task.save()
    first = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )
    SystemVersion.objects.filter(id=first.id).update(status="failed", failure_reason="worker_lost")
    second = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )
    assert second.number == 2
    with pytest.raises(ValidationError, match="used its 1 upload"):
        services.system_version_upload(
            system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
        )


def test_uploads_close_with_the_build_phase(cast):
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="late", kind="hosted"
    )
    with pytest.raises(ValidationError, match="build phase closed at"):
        services.system_version_upload(
            system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
        )


def test_a_team_has_at_most_its_quota_of_systems(hosted):
    cast, _ = hosted
    services.system_create(team=cast.builder_team, actor=cast.builder, name="two", kind="hosted")
    services.system_create(
        team=cast.builder_team, actor=cast.builder, name="three", kind="self_reported"
    )
    with pytest.raises(ValidationError, match="already has 3 system"):
        services.system_create(
            team=cast.builder_team, actor=cast.builder, name="four", kind="hosted"
        )


def test_breaker_teams_have_no_systems(hosted):
    cast, _ = hosted
    with pytest.raises(ValidationError, match="Only builder teams"):
        services.system_create(
            team=cast.breaker_team, actor=cast.breaker, name="sneaky", kind="hosted"
        )


def test_starter_predictions_are_the_models_own(hosted):
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-bilstm")
    loaded = fim_engine.load_system(TINY_MODELS / "tiny-bilstm")
    batch = loaded.predict([text for _, text, _ in STARTER])
    stored = version.predictions.filter(source="starter").order_by("example__position")
    assert [p.label for p in stored] == batch.labels
    for prediction, row in zip(stored, batch.probabilities, strict=True):
        assert [prediction.probabilities[name] for name in loaded.labels] == pytest.approx(
            list(row), abs=1e-6
        )
