"""Span tasks through the API: chosen at creation, with their answer rule as settings; the
type never changes; imports of the QA-SRL formats over HTTP."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.sharedtasks import services
from bibi.sharedtasks.models import SharedTask
from bibi.tasktypes import SPAN_EXTRACTION

from ...conftest import REPO_ROOT
from ..spancast import build_span_cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(db):
    return build_span_cast(current_phase="build")


def test_a_span_task_is_created_with_its_answer_rule(cast):
    answer = cast.client("outsider").post(
        "/api/v1/shared-tasks/",
        {
            "slug": "qasrl-2",
            "name": "QA-SRL again",
            "task_type": "span_extraction",
            "answer_mode": "overlap_2017",
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["task_type"], body["answer_mode"], body["answer_f1_threshold"]) == (
        "span_extraction",
        "overlap_2017",
        0.5,
    )


def test_the_answer_rule_changes_and_a_bad_threshold_is_refused(cast):
    client = cast.client("organizer")
    changed = client.patch(
        "/api/v1/shared-tasks/qasrl/",
        {"answer_mode": "token_f1", "answer_f1_threshold": 0.75},
        format="json",
    )
    assert changed.status_code == 200, changed.json()
    assert SharedTask.objects.get(slug="qasrl").answer_f1_threshold == 0.75
    refused = client.patch("/api/v1/shared-tasks/qasrl/", {"answer_f1_threshold": 0}, format="json")
    assert refused.status_code == 400
    assert "answer_f1_threshold" in str(refused.json())
    unknown = client.patch("/api/v1/shared-tasks/qasrl/", {"answer_mode": "fuzzy"}, format="json")
    assert unknown.status_code == 400


def test_the_2017_qasrl_preset_uses_the_overlap_over_the_longer_span(cast):
    client = cast.client("organizer")
    applied = client.patch(
        "/api/v1/shared-tasks/qasrl/", {"answer_mode": "token_f1"}, format="json"
    )
    assert applied.status_code == 200, applied.json()
    services.shared_task_preset_apply(
        shared_task=SharedTask.objects.get(slug="qasrl"),
        actor=cast.organizer,
        key="2017-qasrl-replay",
    )
    task = SharedTask.objects.get(slug="qasrl")
    # The literal reading would credit the whole sentence: the preset takes the longer span.
    assert task.answer_mode == "overlap_longer"
    assert "true answer" in SharedTask.AnswerMode.OVERLAP_2017.label
    assert "longer" in SharedTask.AnswerMode.OVERLAP_LONGER.label


def test_tasks_on_the_old_overlap_rule_keep_it_under_its_new_name(cast):
    migration = importlib.import_module("bibi.sharedtasks.migrations.0012_qcount_overlap_readings")
    SharedTask.objects.filter(slug="qasrl").update(answer_mode="overlap_2017")
    migration.keep_the_rule_they_were_scored_with(django_apps, None)
    assert SharedTask.objects.get(slug="qasrl").answer_mode == "overlap_longer"
    migration.back_to_the_old_name(django_apps, None)
    assert SharedTask.objects.get(slug="qasrl").answer_mode == "overlap_2017"


def test_the_task_type_never_changes(cast):
    refused = cast.client("organizer").patch(
        "/api/v1/shared-tasks/qasrl/", {"task_type": "text_classification"}, format="json"
    )
    assert refused.status_code == 400, refused.json()
    assert SharedTask.objects.get(slug="qasrl").kind is SPAN_EXTRACTION


def test_an_organizer_imports_a_qa_file_over_http(cast):
    data = (REPO_ROOT / "fixtures" / "qasrl" / "sample.qa").read_bytes()
    answer = cast.client("organizer").post(
        "/api/v1/shared-tasks/qasrl/datasets/train/import/",
        {"file": SimpleUploadedFile("sample.qa", data)},
        format="multipart",
    )
    assert answer.status_code == 201, answer.json()
    assert (answer.json()["created"], answer.json()["format"]) == (4, "qa")


def test_a_bad_qa_file_is_refused_with_its_lines_over_http(cast):
    data = (REPO_ROOT / "fixtures" / "qasrl" / "bad.tsv").read_bytes()
    answer = cast.client("organizer").post(
        "/api/v1/shared-tasks/qasrl/datasets/train/import/",
        {"file": SimpleUploadedFile("bad.tsv", data), "format": "qasrl_tsv"},
        format="multipart",
    )
    assert answer.status_code == 400, answer.json()
    assert answer.json()["error_count"] == 4


def test_snapshots_scored_on_the_old_overlap_rule_name_it_as_it_was(cast):
    from bibi.evaluation.models import ScoringRun, Snapshot

    migration = importlib.import_module(
        "bibi.evaluation.migrations.0007_qcount_snapshot_overlap_name"
    )
    task = SharedTask.objects.get(slug="qasrl")
    run = ScoringRun.objects.create(shared_task=task, trigger="command")
    old = Snapshot.objects.create(
        shared_task=task, run=run, settings_used={"answer_mode": "overlap_2017", "labels": []},
        code_version="test", pair_set_ids=[], systems=[], tables={}, counts={},
    )  # fmt: skip
    migration.name_the_rule_they_were_scored_with(django_apps, None)
    old.refresh_from_db()
    assert old.settings_used == {"answer_mode": "overlap_longer", "labels": []}
    migration.back_to_the_old_name(django_apps, None)
    old.refresh_from_db()
    assert old.settings_used["answer_mode"] == "overlap_2017"
