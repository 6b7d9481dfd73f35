"""Scoring runs: what starts one, what it records, and that it scores what scoring says."""

from __future__ import annotations

import contextlib
from datetime import timedelta

import pytest
from django.utils import timezone

from bibi.evaluation import compute, housekeeping, services
from bibi.evaluation.models import CellChunk, ScoringRun
from bibi.pairs import services as pair_services
from bibi.pairs.models import Contest, Pair
from bibi.sharedtasks.importing import examples_import
from bibi.sharedtasks.models import Dataset, Phase
from bibi.systems import services as system_services
from bibi.systems import validation
from bibi.systems.models import System

from ..pairs.conftest import start_phase_now
from ..systems.conftest import TINY_MODELS, archive_upload
from .conftest import (
    assert_leaderboards_match,
    build_scored_task,
    cell_of,
    direct_report,
    hosted_version,
    score_now,
    upload_self_reported_pairs,
)

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


@pytest.fixture
def ready_task(scored_task):
    upload_self_reported_pairs(scored_task)
    return scored_task


def test_a_run_waits_for_its_cells_then_scores_and_is_done(ready_task):
    run = services.scoring_run_request(
        shared_task=ready_task.shared_task, trigger="organizer", send=False
    )
    assert (run.status, run.cells_needed, run.cells_done) == ("waiting_for_cells", 0, 0)

    run = services.scoring_run_advance(run_id=run.id, send=False)
    assert (run.status, run.cells_needed, run.cells_done) == ("waiting_for_cells", 22, 8)

    run = compute.scoring_run_complete(run_id=run.id)
    assert run.status == "done"
    assert run.cells_done == run.cells_needed == 22
    assert run.scoring_started_at <= run.finished_at


def test_the_snapshot_is_what_scoring_computes_directly_from_the_same_inputs(ready_task):
    run = score_now(ready_task)

    assert_leaderboards_match(run.snapshot.tables, direct_report(ready_task))


@pytest.mark.parametrize(("weight", "rate"), [("none", "sentences"), ("original_f1", "pairs")])
def test_the_tasks_weight_and_break_rate_modes_are_the_ones_used(ready_task, weight, rate):
    shared_task = ready_task.shared_task
    shared_task.weight_mode, shared_task.break_rate_mode = weight, rate
    shared_task.save()

    snapshot = score_now(ready_task).snapshot

    assert snapshot.settings_used["weight_mode"] == weight
    assert snapshot.settings_used["break_rate_mode"] == rate
    assert_leaderboards_match(snapshot.tables, direct_report(ready_task))


def test_the_snapshot_says_what_was_scored_with_what(ready_task):
    snapshot = score_now(ready_task).snapshot

    assert snapshot.code_version.startswith(("git ", "bibi "))
    assert snapshot.settings_used == {
        "task_type": "text_classification",
        "weight_mode": "dev_accuracy",
        "break_rate_mode": "pairs",
        "labels": ["negative", "positive"],
        "max_sequence_length": 128,
        "validation": {
            "mode": "off",
            "sample_fraction": 0.2,
            "validations_per_pair": 3,
            "agreement": "majority",
            "quota_per_validator": 0,
            "pending": "claimed",
        },
        # Every hosted cell (2 versions x every distinct text) in the default precision.
        "precisions": {"fp32": 2 * snapshot.counts["texts"]},
    }
    assert len(snapshot.pair_set_ids) == 2
    versions = {entry["system_id"]: entry for entry in snapshot.systems}
    assert set(versions) == {ready_task.cnn.id, ready_task.bow.id, ready_task.by_hand.id}
    assert versions[ready_task.cnn.id]["version_id"] == ready_task.cnn.active_version_id
    assert versions[ready_task.by_hand.id]["weight_source"] == "blind_dev"
    validation = snapshot.tables["validation_summary"]
    assert validation["counts"]["entry_pairs"] == validation["counts"]["not_validated"] == 7
    assert validation["alpha"] is None and validation["votes"] == 0
    assert snapshot.counts == {
        "pairs": 7,
        "teams": 2,
        "systems": 3,
        "texts": 11,
        "cells": 33,
        "cells_computed": 14,
        "failures": 0,
        "pairs_validated": 0,
        "pairs_relabelled": 0,
        "pairs_left_out": 0,
        "pairs_pending": 0,
        # Validation off: every pair is scored on the label its team claimed, unchecked.
        "pairs_claimed_unchecked": 7,
    }


def test_scoring_again_with_every_cell_known_sends_no_cell_to_compute(ready_task):
    first = score_now(ready_task)
    chunks = CellChunk.objects.count()

    run = services.scoring_run_request(
        shared_task=ready_task.shared_task, trigger="organizer", send=False
    )
    run = services.scoring_run_advance(run_id=run.id, send=False)

    assert run.status == "scoring"
    assert CellChunk.objects.count() == chunks
    run = services.scoring_run_score(run_id=run.id, send=False)
    assert run.snapshot.tables == first.snapshot.tables


def test_a_relabel_after_the_break_phase_asks_for_a_run_that_needs_no_new_cell(
    ready_task, django_capture_on_commit_callbacks
):
    before = score_now(ready_task)
    chunks = CellChunk.objects.count()
    pair = Pair.objects.get(variant_text="I loved this movie!")
    contest = Contest.objects.create(
        pair=pair, team=ready_task.cast.breaker_team, created_by=ready_task.cast.breaker, reason="x"
    )

    pair_services.contest_adjudicate(
        contest=contest,
        actor=ready_task.cast.organizer,
        decision="relabel",
        note="Loved is past, the label stands... no: it is negative here.",
        new_label="negative",
    )

    run = ScoringRun.objects.get(trigger="adjudication")
    run = compute.scoring_run_complete(run_id=run.id)
    assert CellChunk.objects.count() == chunks
    item = run.snapshot.items.get(pair_id=pair.id)
    assert item.variant_label == "negative"
    assert before.snapshot.items.get(pair_id=pair.id).variant_label == "positive"
    assert_leaderboards_match(run.snapshot.tables, direct_report(ready_task))


def test_a_version_ready_after_the_break_phase_asks_for_a_run(db):
    task = build_scored_task()
    start_phase_now(task.shared_task, "build")
    system = system_services.system_create(
        team=task.melbourne, actor=task.melbourne_builder, name="late", kind="hosted"
    )
    version = system_services.system_version_upload(
        system=system,
        actor=task.melbourne_builder,
        archive=archive_upload(TINY_MODELS / "tiny-cnn"),
    )
    assert not ScoringRun.objects.exists()

    start_phase_now(task.shared_task, "contest")
    validation.system_version_validate(version_id=version.id)

    assert ScoringRun.objects.get().trigger == "version_ready"


def test_pair_predictions_of_a_self_reported_system_ask_for_a_run(scored_task):
    upload_self_reported_pairs(scored_task)

    assert ScoringRun.objects.get().trigger == "version_ready"


def test_a_version_ready_during_the_build_phase_asks_for_nothing(db):
    build_scored_task()

    assert not ScoringRun.objects.exists()


def test_housekeeping_starts_one_run_when_the_break_phase_has_closed(scored_task):
    first = housekeeping.evaluation_housekeep()
    second = housekeeping.evaluation_housekeep()

    assert first["runs_started"] == 1 and second["runs_started"] == 0
    assert ScoringRun.objects.get().trigger == "break_closed"


def test_housekeeping_leaves_a_task_whose_break_phase_is_running(scored_task):
    start_phase_now(scored_task.shared_task, "break")

    assert housekeeping.evaluation_housekeep()["runs_started"] == 0


@pytest.fixture
def empty_gpu_queue():
    """No message waits in the test broker's gpu queue (housekeeping counts them)."""
    from amqp.exceptions import ChannelError

    from bibi.celery import GPU_QUEUE, app

    def purge() -> None:
        with app.connection_for_write() as connection, contextlib.suppress(ChannelError):
            connection.default_channel.queue_purge(GPU_QUEUE)

    purge()
    yield
    purge()


def test_housekeeping_sends_again_a_chunk_that_made_no_progress(
    ready_task, settings, empty_gpu_queue
):
    settings.EVALUATION_STALL_TIMEOUT = 60
    run = services.scoring_run_request(
        shared_task=ready_task.shared_task, trigger="organizer", send=True
    )
    services.scoring_run_advance(run_id=run.id)
    chunk = CellChunk.objects.first()
    assert chunk.sends == 1

    assert housekeeping.evaluation_housekeep()["chunks_resent"] == 0
    CellChunk.objects.filter(id=chunk.id).update(sent_at=timezone.now() - timedelta(minutes=5))
    assert housekeeping.evaluation_housekeep()["chunks_resent"] == 1
    chunk.refresh_from_db()
    assert chunk.sends == 2 and chunk.sent_at > timezone.now() - timedelta(minutes=1)


def test_housekeeping_wakes_a_waiting_run_that_has_no_chunk_at_work(ready_task):
    services.scoring_run_request(shared_task=ready_task.shared_task, trigger="organizer", send=True)

    assert housekeeping.evaluation_housekeep()["runs_woken"] == 1


def test_a_run_without_pairs_fails_and_says_why(db):
    task = build_scored_task()
    Pair.objects.all().delete()

    run = score_now(task)

    assert run.status == "failed"
    assert run.failure_reason == "There are no pairs to score: no breaker team has an entry."


def test_a_run_without_systems_fails_and_says_why(db):
    task = build_scored_task()
    System.objects.update(active_version=None)

    run = score_now(task)

    assert (run.status, run.failure_reason) == (
        "failed",
        "There is no system to score: no system has a ready version.",
    )


def test_a_self_reported_system_without_pair_predictions_is_left_out_and_says_why(scored_task):
    run = score_now(scored_task)

    assert run.status == "done"
    assert [entry["system_id"] for entry in run.snapshot.systems] == [
        scored_task.cnn.id,
        scored_task.bow.id,
    ]
    assert run.snapshot.excluded_systems == [
        {
            "system_id": scored_task.by_hand.id,
            "name": "by hand",
            "team_id": scored_task.cast.builder_team.id,
            "reason": "no predictions for the pair texts yet",
        }
    ]


def test_a_system_without_blind_dev_predictions_is_weighted_by_its_accuracy_on_the_originals(db):
    def validate_without_blind_dev(cast, team, user, name, model):
        Dataset.objects.filter(shared_task=cast.shared_task, split="blind_dev").delete()
        return hosted_version(cast, team, user, name, model)

    task = build_scored_task(validate=validate_without_blind_dev, self_reported_dev=False)

    run = score_now(task)

    builders = {row["system_id"]: row for row in run.snapshot.tables["builders"]}
    cnn = builders[task.cnn.id]
    assert cnn["dev_accuracy"] is None
    assert cnn["weight_source"] == "originals"
    originals = {
        item.original_id: cell_of(item, task.cnn)["original"] == item.original_label
        for item in run.snapshot.items.all()
    }
    assert cnn["weight"] == pytest.approx(sum(originals.values()) / len(originals))
    detail = {
        cell["system_id"]: cell
        for row in run.snapshot.tables["breakers"]
        for cell in row["by_system"]
    }
    assert detail[task.cnn.id]["weight"] == pytest.approx(cnn["weight"])


def test_a_starter_import_before_the_break_phase_computes_the_ready_systems_new_cells(ready_cnn):
    cast, system = ready_cnn
    version = system.active_version
    client = cast.client("organizer")
    rows = "id,text,label\ns9,A long and dull movie .,negative\ns10,A witty film .,positive\n"
    from django.core.files.uploadedfile import SimpleUploadedFile

    response = client.post(
        "/api/v1/shared-tasks/sst/datasets/starter/import/",
        {"file": SimpleUploadedFile("more.csv", rows.encode())},
        format="multipart",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["cells_to_compute"] == 2
    (chunk,) = CellChunk.objects.all()
    assert chunk.run is None and chunk.source == "starter"
    compute.cell_chunk_compute(chunk_id=chunk.id)
    added = version.predictions.filter(source="starter", example__external_id__in=["s9", "s10"])
    assert added.count() == 2 and all(p.lambda_max is not None and p.hints for p in added)


def test_a_blind_dev_import_recomputes_the_dev_scores_of_ready_systems(ready_cnn):
    cast, system = ready_cnn
    report = examples_import(
        shared_task=cast.shared_task,
        split="blind_dev",
        actor=cast.organizer,
        data=b"id,text,label\nd4,a gorgeous film .,positive\nd5,flat and tedious .,negative\n",
        filename="more.csv",
    )

    assert report.cells_to_compute == 2
    for chunk in CellChunk.objects.all():
        compute.cell_chunk_compute(chunk_id=chunk.id)
    version = system.versions.get()
    rows = list(
        version.predictions.filter(source="blind_dev").values_list("example__label", "label")
    )
    assert version.dev_count == len(rows) == 5
    assert version.dev_accuracy == pytest.approx(sum(g == p for g, p in rows) / 5)


def test_a_training_import_computes_nothing(ready_cnn):
    cast, _ = ready_cnn

    report = examples_import(
        shared_task=cast.shared_task,
        split="train",
        actor=cast.organizer,
        data=b"id,text,label\nt9,fine .,positive\n",
        filename="train.csv",
    )

    assert report.cells_to_compute == 0 and not CellChunk.objects.exists()


def test_phases_without_a_break_phase_never_start_a_run(scored_task):
    Phase.objects.filter(kind="break").delete()

    assert housekeeping.evaluation_housekeep()["runs_started"] == 0


def test_housekeeping_leaves_chunks_queued_behind_others_of_their_task_that_move(
    ready_task, settings, empty_gpu_queue
):
    settings.EVALUATION_STALL_TIMEOUT = 60
    settings.EVALUATION_CHUNK_SIZE = 1
    run = services.scoring_run_request(
        shared_task=ready_task.shared_task, trigger="organizer", send=True
    )
    services.scoring_run_advance(run_id=run.id)
    long_ago = timezone.now() - timedelta(minutes=5)
    CellChunk.objects.update(sent_at=long_ago)
    first = CellChunk.objects.order_by("id").first()
    # A worker is at work on one chunk of the task: the queue moves, nothing is lost.
    CellChunk.objects.filter(id=first.id).update(started_at=timezone.now())

    assert housekeeping.evaluation_housekeep()["chunks_resent"] == 0

    CellChunk.objects.filter(id=first.id).update(started_at=long_ago)
    assert housekeeping.evaluation_housekeep()["chunks_resent"] == CellChunk.objects.count()


def test_housekeeping_sends_nothing_again_while_messages_wait_for_a_gpu_worker(
    ready_task, settings, empty_gpu_queue
):
    from django.conf import settings as live

    from bibi.evaluation.tasks import cells_compute_task
    from bibi.queue import enqueue, waiting

    if live.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("in-process tasks never wait in a queue")
    settings.EVALUATION_STALL_TIMEOUT = 60
    run = services.scoring_run_request(shared_task=ready_task.shared_task, trigger="organizer")
    services.scoring_run_advance(run_id=run.id)
    CellChunk.objects.update(sent_at=timezone.now() - timedelta(minutes=5))
    # A message no worker has taken yet (no worker consumes the test broker's gpu queue).
    assert enqueue(cells_compute_task, CellChunk.objects.first().id)
    assert waiting("gpu") == 1

    assert housekeeping.evaluation_housekeep()["chunks_resent"] == 0


def test_a_version_made_active_after_the_break_phase_asks_for_a_run(scored_task):
    from bibi.systems.services import system_version_activate

    system_version_activate(version=scored_task.cnn.versions.get(), actor=scored_task.cast.builder)

    assert ScoringRun.objects.get().trigger == "version_ready"


def test_the_lambda_analysis_of_a_run_has_the_confidence_baseline_of_hosted_systems(ready_task):
    tables = score_now(ready_task).snapshot.tables

    auc = {row["system_id"]: row for row in tables["lambda_auc"] if row["kind"] == "all"}
    assert auc[ready_task.cnn.id]["pairs"] == auc[ready_task.cnn.id]["confidence_pairs"] == 7
    assert (
        auc[ready_task.by_hand.id]["pairs"] == auc[ready_task.by_hand.id]["confidence_pairs"] == 0
    )
    kinds = {(row["kind"], row["outcome"]) for row in tables["lambda_correlation"]}
    assert kinds == {
        (k, o) for k in ("all", "same_label", "flipped") for o in ("changed", "broken")
    }


def test_the_beats_housekeeping_task_does_the_evaluations_too(scored_task):
    from bibi.housekeeping import housekeeping_task

    done = housekeeping_task()

    assert done["evaluation"]["runs_started"] == 1
    assert ScoringRun.objects.get().trigger == "break_closed"
