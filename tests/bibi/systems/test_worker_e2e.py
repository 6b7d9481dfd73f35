"""End to end on the real stack: PostgreSQL, Redis, a Celery worker process, MiniLM weights."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fim_engine.datasets import LabelledTexts
from fim_engine.training import train_system

from ..conftest import BLIND_DEV, STARTER, TRAIN, build_cast
from .conftest import zip_directory

pytestmark = pytest.mark.slow

LABELS = ["negative", "positive"]


@pytest.fixture(scope="session")
def minilm_model_dir(request) -> Path:
    """A MiniLM classifier fine-tuned a few steps from the real checkpoint, cached between runs."""
    cache = Path(request.config.cache.mkdir("bibi-minilm-hosted"))
    model = cache / "model"
    if not (model / "model.safetensors").is_file():
        rows = TRAIN + STARTER
        train = LabelledTexts([t for _, t, _ in rows], [label for _, _, label in rows], LABELS)
        dev = LabelledTexts(
            [t for _, t, _ in BLIND_DEV], [label for _, _, label in BLIND_DEV], LABELS
        )
        train_system(
            "minilm", train, dev, model, max_steps=3, batch_size=4, max_length=32, progress=False
        )
    return model


def wait_for_outcome(client, url: str, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] in {"ready", "failed"}:
            return body
        time.sleep(0.5)
    raise AssertionError(f"the version is still {body['status']} after {timeout} s")


def test_a_minilm_archive_is_validated_by_a_real_worker(
    transactional_db, celery_worker_process, minilm_model_dir
):
    cast = build_cast(current_phase="build")
    client = cast.client("builder")
    base = "/api/v1/shared-tasks/sst/systems/"
    created = client.post(base, {"name": "minilm", "kind": "hosted"}, format="json")
    assert created.status_code == 201, created.json()
    system_url = f"{base}{created.json()['id']}/"

    archive = zip_directory(minilm_model_dir, wrap="minilm")
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = client.post(
        f"{system_url}versions/",
        {"archive": SimpleUploadedFile("minilm.zip", archive, content_type="application/zip")},
        format="multipart",
    )
    assert upload.status_code == 201, upload.json()
    assert upload.json()["status"] == "queued"

    version = wait_for_outcome(client, f"{system_url}versions/1/")
    assert version["status"] == "ready", (version, celery_worker_process.log()[-3000:])
    assert version["model_format"] == "transformers"
    assert version["dev_count"] == len(BLIND_DEV)
    assert 0.0 <= version["dev_accuracy"] <= 1.0

    fisher = client.get(f"{system_url}versions/1/starter-fisher/").json()["results"]
    assert sorted(row["id"] for row in fisher) == sorted(eid for eid, _, _ in STARTER)
    assert all(row["lambda_max"] > 0 for row in fisher)
    assert all(
        row["hints"] and all(isinstance(word, str) for word, _ in row["hints"]) for row in fisher
    )
    celery_worker_process.wait_for_log("Task gpu.system_validate[")

    # The organizers see it too; the breaker does not know it exists.
    assert cast.client("organizer").get(f"{system_url}versions/1/").status_code == 200
    assert cast.client("breaker").get(f"{system_url}versions/1/").status_code == 404
