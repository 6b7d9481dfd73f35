"""Validating hosted uploads in-process: the same service the gpu worker runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

import fim_engine
from bibi.systems import outcomes, services, validation
from bibi.systems.models import Prediction, SystemVersion

from ...conftest import sent_where_no_worker_reads
from ..conftest import BLIND_DEV, STARTER
from .conftest import BAD_MODELS, TINY_MODELS, archive_upload, long_blind_dev, wide_cnn

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def upload_and_validate(cast, system, directory: Path, **kwargs) -> SystemVersion:
    """Upload ``directory`` and validate it in this process. The validation message the upload
    sends on commit goes where no worker reads, so that in a transactional test the session's
    worker cannot take the version first (the version would then still be "running" here)."""
    with sent_where_no_worker_reads():
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
    # Refused before the model ran: the team keeps its upload.
    assert version.counts_against_quota is False


def test_a_failure_detail_never_shows_a_server_path(hosted):
    cast, system = hosted
    version = upload_and_validate(cast, system, BAD_MODELS / "model-type-missing")
    assert version.failure_reason == "invalid_model"
    assert "model_type" in version.failure_detail
    for root in (settings.MODEL_STORE, settings.UPLOAD_ROOT, settings.VAR_DIR, "/tmp/"):
        assert str(root) not in version.failure_detail
    assert "<archive>" in version.failure_detail


def test_server_paths_in_a_detail_are_replaced_and_the_archives_own_paths_kept(hosted):
    import tempfile

    _, system = hosted
    version = SystemVersion(system=system, number=1)
    store, uploads = settings.MODEL_STORE, settings.UPLOAD_ROOT
    detail = outcomes.public_detail(
        f"no tokenizer in {store}/.partial-{version.uuid}/my-model/tokenizer.json; "
        f"read {uploads}/systems/3/x.archive, spooled to '{tempfile.gettempdir()}/tmpab12.upload'",
        version,
    )
    assert detail == (
        "no tokenizer in <archive>/my-model/tokenizer.json; read <server path>, spooled to "
        "'<server path>'"
    )


def test_refusals_found_before_the_model_ran_do_not_use_up_the_quota(hosted, tmp_path):
    cast, system = hosted
    cast.shared_task.max_uploads_per_system = 1
    cast.shared_task.save()
    not_an_archive = SimpleUploadedFile("model.zip", b"this is no archive")
    refused = services.system_version_upload(
        system=system, actor=cast.builder, archive=not_an_archive
    )
    refused = validation.system_version_validate(version_id=refused.id)
    assert (refused.failure_reason, refused.counts_against_quota) == ("invalid_archive", False)
    refused = upload_and_validate(cast, system, BAD_MODELS / "unknown-activation")
    assert (refused.failure_reason, refused.counts_against_quota) == ("invalid_model", False)
    cast.shared_task.labels = ["negative", "neutral", "positive"]
    cast.shared_task.save()
    refused = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert (refused.failure_reason, refused.counts_against_quota) == ("label_mismatch", False)
    cast.shared_task.labels = ["negative", "positive"]
    cast.shared_task.save()
    accepted = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert accepted.status == "ready"
    with pytest.raises(ValidationError, match="used its 1 upload"):
        services.system_version_upload(
            system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
        )


def test_a_model_whose_outputs_overflow_fails_as_a_model_error_and_stores_nothing(hosted, tmp_path):
    from safetensors.torch import load_file, save_file

    model = tmp_path / "overflow"
    shutil.copytree(TINY_MODELS / "tiny-bow", model)
    weights = load_file(str(model / "model.safetensors"))
    # Finite weights whose logits overflow float32: every probability comes out NaN.
    weights["hidden.bias"].fill_(100.0)
    weights["output.weight"].fill_(3e38)
    save_file(weights, str(model / "model.safetensors"))
    cast, system = hosted
    version = upload_and_validate(cast, system, model)
    assert (version.status, version.failure_reason) == ("failed", "model_error")
    assert "NaN or infinite outputs" in version.failure_detail
    assert version.counts_against_quota is True
    assert not version.predictions.exists()
    assert model_store_entries(version) == []


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


def test_failures_the_platform_caused_do_not_use_up_the_upload_quota(hosted):
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


@pytest.mark.django_db(transaction=True)
def test_on_the_embedded_default_an_upload_answers_with_the_version_as_validated(hosted):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("only the embedded default validates during the upload request")
    cast, system = hosted
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-cnn")},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["status"] == "ready"
    assert body["started_at"] and body["finished_at"]
    assert (body["attempts"], body["dev_count"], body["note"]) == (1, len(BLIND_DEV), None)


def poll_version(version_id: int, done: set[str], seconds: float = 120) -> SystemVersion:
    """The version once its status is in ``done`` (polled; fails after ``seconds``)."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        version = SystemVersion.objects.get(id=version_id)
        if version.status in done:
            return version
        assert time.monotonic() < deadline, f"version still {version.status}"
        time.sleep(0.05)


@pytest.mark.django_db(transaction=True)
def test_on_the_embedded_default_an_upload_answers_before_a_background_validation_ends(
    hosted, settings, monkeypatch
):
    import threading

    from django.test import Client

    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("with a broker, a worker validates: the request never waits for it")
    settings.SYSTEM_VALIDATION_IN_BACKGROUND = True
    cast, system = hosted
    release = threading.Event()
    run = validation._run_validation

    def held(version):
        # Validation in the request would wait here until the timeout, then answer "ready".
        release.wait(timeout=30)
        return run(version)

    monkeypatch.setattr(validation, "_run_validation", held)
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-cnn")},
        format="multipart",
    )
    try:
        assert response.status_code == 201, response.json()
        body = response.json()
        assert body["status"] in ("queued", "running"), body
        assert not release.is_set()
        poll_version(SystemVersion.objects.get().id, {"running"})
        page = Client()
        page.force_login(cast.builder)
        html = page.get(f"/tasks/sst/systems/{system.id}/").content.decode()
        assert "A version is being checked" in html and "data-poll-url" in html
    finally:
        release.set()
    version = poll_version(SystemVersion.objects.get().id, {"ready", "failed"})
    assert version.status == "ready", version.failure_detail
    assert version.dev_count == len(BLIND_DEV)


@pytest.mark.django_db(transaction=True)
def test_a_background_validation_that_crashes_fails_its_version(hosted, settings, monkeypatch):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("a worker's crashes are test_worker_faults.py's")
    settings.SYSTEM_VALIDATION_IN_BACKGROUND = True
    cast, system = hosted

    def crash(**_):
        raise RuntimeError("the thread died")

    monkeypatch.setattr(validation, "system_version_validate", crash)
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-cnn")},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    version = poll_version(SystemVersion.objects.get().id, {"ready", "failed"})
    assert (version.status, version.failure_reason) == ("failed", "worker_lost")
    assert "upload again" in version.failure_detail


@pytest.mark.django_db(transaction=True)
def test_on_the_embedded_default_the_soft_time_limit_stops_a_slow_model(hosted, settings, tmp_path):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("a worker enforces the limits there (test_worker_faults.py)")
    cast, system = hosted
    # About twenty seconds of work on two cores; the limit is one.
    long_blind_dev(cast, 512)
    settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT = 1
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(wide_cnn(tmp_path / "wide"))},
        format="multipart",
    )
    body = response.json()
    assert (body["status"], body["failure_reason"]) == ("failed", "timeout"), body
    assert body["failure_detail"] == "Validation took longer than the limit of 1 seconds."
    assert body["counts_against_quota"] is True
    assert not list(Path(settings.MODEL_STORE).glob(f"*{SystemVersion.objects.get().uuid}*"))


def test_the_model_enters_the_store_only_once_its_results_are_committed(hosted):
    from django.db import DatabaseError, connection

    if connection.vendor != "postgresql":
        pytest.skip("a PostgreSQL trigger makes the database write fail")
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE FUNCTION refuse_predictions() RETURNS trigger AS $$ BEGIN "
            "RAISE EXCEPTION 'no space left on device'; END $$ LANGUAGE plpgsql; "
            "CREATE TRIGGER refuse_predictions BEFORE INSERT ON systems_prediction "
            "FOR EACH ROW EXECUTE FUNCTION refuse_predictions();"
        )
    cast, system = hosted
    version = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )
    # The platform's own failure: raised for the worker machinery, never blamed on the team.
    with pytest.raises(DatabaseError, match="no space left"):
        validation.system_version_validate(version_id=version.id)
    version.refresh_from_db()
    assert (version.status, version.failure_reason) == ("running", "")
    assert model_store_entries(version) == []
