"""A hosted extractive QA system on the real stack: PostgreSQL, Redis and a Celery worker
process validate its upload and compute its span cells."""

from __future__ import annotations

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction

from bibi.evaluation.chunks import message_send
from bibi.evaluation.models import CellChunk
from bibi.systems.models import Prediction, SystemVersion
from bibi.tasktypes.items import item_key

from ..spancast import QA_BLIND_DEV, QA_ITEMS, QA_STARTER, UCD, build_span_cast
from .conftest import zip_directory
from .test_worker_e2e import wait_for_outcome

pytestmark = pytest.mark.slow


def wait_until_done(chunk: CellChunk, timeout: float = 240) -> CellChunk:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        chunk.refresh_from_db()
        if chunk.done_at is not None:
            return chunk
        time.sleep(0.5)
    raise AssertionError(f"chunk {chunk.id} is still open after {timeout} s")


def test_a_qa_archive_is_validated_and_its_span_cells_computed_by_a_real_worker(
    transactional_db, celery_worker_process, qa_dir
):
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    client = cast.client("builder")
    base = f"/api/v1/shared-tasks/{cast.shared_task.slug}/systems/"
    created = client.post(base, {"name": "qa", "kind": "hosted"}, format="json")
    assert created.status_code == 201, created.json()
    system_url = f"{base}{created.json()['id']}/"
    archive = SimpleUploadedFile(
        "qa.zip", zip_directory(qa_dir, wrap="qa"), content_type="application/zip"
    )
    upload = client.post(f"{system_url}versions/", {"archive": archive}, format="multipart")
    assert upload.status_code == 201, upload.json()

    body = wait_for_outcome(client, f"{system_url}versions/1/")
    assert body["status"] == "ready", (body, celery_worker_process.log()[-3000:])
    version = SystemVersion.objects.get(system_id=created.json()["id"], number=1)
    assert version.dev_count == len(QA_BLIND_DEV)
    assert 0.0 <= version.dev_accuracy <= 1.0 and 0.0 <= version.dev_token_f1 <= 1.0
    starter = version.predictions.filter(source="starter")
    assert starter.count() == len(QA_STARTER)
    assert all(cell.lambda_max > 0 and cell.hints for cell in starter)

    variant = UCD.replace("in the final", "in the county final")
    question = QA_STARTER[0][2]
    with transaction.atomic():
        chunk = CellChunk.objects.create(
            shared_task=cast.shared_task,
            system_version=version,
            source="pairs",
            items=[[variant, question]],
            size=1,
        )
        message_send("gpu.cells_compute", chunk.id)
    chunk = wait_until_done(chunk)
    assert chunk.computed == 1, celery_worker_process.log()[-3000:]
    cell = Prediction.objects.get(system_version=version, source="pairs")
    assert cell.text_sha256 == item_key((variant, question))
    assert cell.answer_text == variant[cell.answer_start : cell.answer_end]
    assert cell.lambda_max > 0 and [w for w, _ in cell.leverage] == variant.split()
    celery_worker_process.wait_for_log("Task gpu.cells_compute[")
