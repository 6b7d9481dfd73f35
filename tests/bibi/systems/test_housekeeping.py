"""Nothing stays stuck: attempts, crashes reported by the worker's main process, housekeeping.

These call the services in-process; ``test_worker_faults.py`` does the same with real worker
processes, a broker that goes away, and children that are killed.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone

from bibi.systems import housekeeping, outcomes, services, validation
from bibi.systems.models import SystemVersion

from .conftest import TINY_MODELS, archive_upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(hosted):
    cast, system = hosted
    return services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )


def running(version: SystemVersion, *, worker: str = "gpu-1@host:4242", silent_for: float = 0):
    """Make ``version`` look claimed by ``worker``, last heard of ``silent_for`` seconds ago."""
    heard = timezone.now() - timedelta(seconds=silent_for)
    SystemVersion.objects.filter(id=version.id).update(
        status="running",
        worker=worker,
        attempts=version.attempts + 1,
        started_at=heard,
        heartbeat_at=heard,
    )
    version.refresh_from_db()
    return version


def housekeep(capture, broker) -> tuple[dict, list[int]]:
    """Run housekeeping; return what it did and the version ids it sent to the gpu queue."""
    with capture(execute=True):
        done = housekeeping.system_versions_housekeep()
    return done, [args[0] for _, args in broker.take_messages("gpu")]


@pytest.mark.parametrize(
    ("silent_for", "status"), [(90, "queued"), (30, "running")], ids=["silent", "alive"]
)
def test_a_running_version_whose_worker_went_silent_is_queued_and_sent_again(
    queued, settings, django_capture_on_commit_callbacks, private_broker, silent_for, status
):
    settings.SYSTEM_WORKER_LOST_AFTER = 60
    version = running(queued, silent_for=silent_for)
    done, sent = housekeep(django_capture_on_commit_callbacks, private_broker)
    version.refresh_from_db()
    assert (version.status, version.attempts) == (status, 1)
    if status == "queued":
        assert (done["requeued"], sent, version.worker) == (1, [version.id], "")
    else:
        assert (done["requeued"], done["failed"], sent) == (0, 0, [])


def test_a_version_lost_on_every_attempt_fails_as_worker_lost_without_counting(
    queued, settings, django_capture_on_commit_callbacks, private_broker
):
    settings.SYSTEM_WORKER_LOST_AFTER = 60
    settings.SYSTEM_VALIDATION_MAX_ATTEMPTS = 2
    SystemVersion.objects.filter(id=queued.id).update(attempts=1)
    queued.refresh_from_db()
    version = running(queued, silent_for=90)
    done, sent = housekeep(django_capture_on_commit_callbacks, private_broker)
    version.refresh_from_db()
    assert (done["failed"], sent) == (1, [])
    assert (version.status, version.failure_reason) == ("failed", "worker_lost")
    assert "lost on 2 attempts" in version.failure_detail
    assert version.counts_against_quota is False
    # The archive is kept for the operators; the model store holds nothing of it.
    assert (Path(settings.UPLOAD_ROOT) / version.archive_path).is_file()


def test_a_queued_version_is_sent_again_once_the_resend_time_has_passed(
    hosted, settings, django_capture_on_commit_callbacks, private_broker
):
    settings.SYSTEM_QUEUE_RESEND_AFTER = 300
    cast, system = hosted
    upload = archive_upload(TINY_MODELS / "tiny-cnn")
    waiting = services.system_version_upload(system=system, actor=cast.builder, archive=upload)
    recent = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )
    SystemVersion.objects.filter(id=waiting.id).update(
        sent_at=timezone.now() - timedelta(seconds=301)
    )
    done, sent = housekeep(django_capture_on_commit_callbacks, private_broker)
    assert (done["resent"], sent) == (1, [waiting.id])
    # Sent now: the next tick leaves both alone.
    assert housekeep(django_capture_on_commit_callbacks, private_broker)[1] == []
    recent.refresh_from_db()
    assert recent.status == "queued"


def test_an_upload_the_broker_never_took_is_sent_on_the_next_tick(
    queued, django_capture_on_commit_callbacks, private_broker
):
    SystemVersion.objects.filter(id=queued.id).update(sent_at=None)
    assert housekeep(django_capture_on_commit_callbacks, private_broker)[1] == [queued.id]


@pytest.mark.embedded
def test_half_unpacked_models_no_running_version_owns_are_removed(queued, hosted):
    store = Path(settings.MODEL_STORE)
    live = running(queued)
    kept = store / f".partial-{live.uuid}"
    orphans = [store / ".partial-00000000-0000-0000-0000-000000000000"]
    cast, system = hosted
    failed = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-cnn")
    )
    SystemVersion.objects.filter(id=failed.id).update(status="failed", failure_reason="timeout")
    orphans.append(store / f".partial-{failed.uuid}")
    for directory in [kept, *orphans]:
        (directory / "model").mkdir(parents=True)
        (directory / "model" / "config.json").write_text("{}")
    try:
        assert housekeeping.system_versions_housekeep()["partials_removed"] == 2
        assert kept.is_dir()
        assert not any(orphan.exists() for orphan in orphans)
    finally:
        import shutil

        shutil.rmtree(kept, ignore_errors=True)


@pytest.mark.embedded
def test_a_second_message_for_a_version_another_live_attempt_runs_does_nothing(queued):
    version = running(queued, silent_for=5)
    again = validation.system_version_validate(version_id=version.id, worker="gpu-2@host:7")
    assert (again.status, again.worker, again.attempts) == ("running", "gpu-1@host:4242", 1)
    assert not again.predictions.exists()


@pytest.mark.embedded
def test_a_message_for_a_silent_running_version_takes_it_over(queued, settings):
    settings.SYSTEM_WORKER_LOST_AFTER = 60
    version = running(queued, silent_for=90)
    again = validation.system_version_validate(version_id=version.id, worker="gpu-2@host:7")
    assert (again.status, again.worker, again.attempts) == ("ready", "gpu-2@host:7", 2)


@pytest.mark.embedded
def test_a_message_for_a_finished_version_does_nothing(queued):
    done = validation.system_version_validate(version_id=queued.id)
    assert done.status == "ready"
    again = validation.system_version_validate(version_id=queued.id)
    assert (again.status, again.attempts) == ("ready", 1)


@pytest.mark.embedded
def test_a_crash_below_the_attempt_cap_puts_the_version_back_in_the_queue(queued, settings):
    settings.SYSTEM_VALIDATION_MAX_ATTEMPTS = 3
    version = running(queued)
    outcomes.system_version_worker_died(
        version_id=version.id, worker=version.worker, cause="signal 9 (SIGKILL)"
    )
    version.refresh_from_db()
    assert (version.status, version.crashes, version.attempts) == ("queued", 1, 1)
    assert version.worker == ""


@pytest.mark.embedded
def test_a_model_that_crashed_its_worker_on_every_attempt_fails_and_counts(queued, settings):
    settings.SYSTEM_VALIDATION_MAX_ATTEMPTS = 2
    version = queued
    for _ in range(2):
        version = running(version)
        outcomes.system_version_worker_died(
            version_id=version.id, worker=version.worker, cause="signal 9 (SIGKILL)"
        )
        version.refresh_from_db()
    assert (version.status, version.failure_reason) == ("failed", "worker_crashed")
    assert version.failure_detail.startswith(
        "The model was killed while running, most likely for memory (signal 9 (SIGKILL)), "
        "on 2 of 2 attempts."
    )
    assert version.counts_against_quota is True


@pytest.mark.embedded
def test_a_crash_after_an_attempt_lost_another_way_does_not_count(queued, settings):
    settings.SYSTEM_VALIDATION_MAX_ATTEMPTS = 2
    # The first attempt's machine vanished (housekeeping queued it again); the second crashed.
    SystemVersion.objects.filter(id=queued.id).update(attempts=1)
    queued.refresh_from_db()
    version = running(queued)
    outcomes.system_version_worker_died(version_id=version.id, worker=version.worker, cause="x")
    version.refresh_from_db()
    assert (version.failure_reason, version.crashes, version.attempts) == ("worker_crashed", 1, 2)
    assert version.counts_against_quota is False
    assert "does not count" in version.failure_detail


@pytest.mark.embedded
def test_a_death_reported_by_a_process_that_does_not_hold_the_version_changes_nothing(queued):
    version = running(queued, worker="gpu-1@host:4242")
    outcomes.system_version_worker_died(version_id=version.id, worker="gpu-1@host:9999", cause="x")
    version.refresh_from_db()
    assert (version.status, version.crashes) == ("running", 0)


@pytest.mark.embedded
def test_a_child_stopped_at_the_hard_time_limit_fails_as_a_time_out(queued):
    version = running(queued)
    partial = Path(settings.MODEL_STORE) / f".partial-{version.uuid}"
    partial.mkdir(parents=True)
    outcomes.system_version_stopped_at_time_limit(
        version_id=version.id, worker=version.worker, limit=2100
    )
    version.refresh_from_db()
    assert (version.status, version.failure_reason) == ("failed", "timeout")
    assert "hard limit of 2100 seconds" in version.failure_detail
    assert version.counts_against_quota is True
    assert not partial.exists()
