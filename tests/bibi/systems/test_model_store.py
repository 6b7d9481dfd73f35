"""A worker gets a model by its archive's digest (the upload, the bucket or the platform),
checks the digest, unpacks it with the upload's checks and keeps a bounded local cache; the
platform serves archives to the worker credential alone."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
from django.core.files.storage import storages

from bibi.systems import model_store, runner, services
from bibi.systems.model_store import ArchiveUnavailable
from bibi.systems.models import SystemVersion

from .conftest import TINY_MODELS
from .test_validation import upload_and_validate

TOKEN = "worker-credential-for-the-tests"
ARCHIVES = "/api/v1/worker/archives/"


@pytest.fixture(autouse=True)
def nothing_loaded(monkeypatch):
    monkeypatch.setattr(runner, "_LOADED", type(runner._LOADED)())


@pytest.fixture
def ready(hosted) -> SystemVersion:
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert version.status == "ready", version.failure_detail
    return version


def elsewhere(settings, tmp_path: Path, name: str = "other-machine") -> Path:
    """Act as a worker on another machine: its own model store, no upload on its disk."""
    settings.MODEL_STORE = tmp_path / name / "models"
    settings.UPLOAD_ROOT = tmp_path / name / "uploads"
    return settings.MODEL_STORE


def test_a_model_missing_here_is_unpacked_from_the_archive_by_its_digest(ready, settings):
    shutil.rmtree(Path(settings.MODEL_STORE) / str(ready.uuid))
    with model_store.model_files(ready) as path:
        assert path == Path(settings.MODEL_STORE) / ready.model_dir
        assert (path / "config.json").is_file()
    assert not list(Path(settings.MODEL_STORE).glob(".fetch-*"))


def test_an_archive_whose_bytes_do_not_match_the_digest_is_refused(ready, settings):
    shutil.rmtree(Path(settings.MODEL_STORE) / str(ready.uuid))
    stored = Path(settings.UPLOAD_ROOT) / ready.archive_path
    stored.write_bytes(stored.read_bytes() + b"tampered")
    with (
        pytest.raises(ArchiveUnavailable, match="upload: the bytes have digest"),
        model_store.model_files(ready),
    ):
        pass
    assert not (Path(settings.MODEL_STORE) / str(ready.uuid)).exists()
    assert not list(Path(settings.MODEL_STORE).glob(".fetch-*"))


def test_a_worker_with_no_source_says_so(ready, settings, tmp_path):
    elsewhere(settings, tmp_path)
    settings.WORKER_PLATFORM_URL = ""
    with pytest.raises(ArchiveUnavailable, match="no source is configured"):
        runner.version_system(ready)


def test_the_archives_bucket_serves_workers_on_other_machines(hosted, settings, tmp_path):
    settings.STORAGES = settings.STORAGES | {
        "archives": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "bucket")},
        }
    }
    storages._storages.pop("archives", None)
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-bow")
    key = model_store.archive_key(version.archive_sha256)
    assert (tmp_path / "bucket" / key).is_file()

    elsewhere(settings, tmp_path)
    settings.WORKER_PLATFORM_URL = ""
    loaded = runner.version_system(version)
    assert loaded.predict(["a good film"]).labels[0] in {"negative", "positive"}
    assert (Path(settings.MODEL_STORE) / version.model_dir / "config.json").is_file()
    storages._storages.pop("archives", None)


def test_the_store_keeps_its_bound_least_recently_used_out(settings, tmp_path):
    store = tmp_path / "store"
    for name, age in (("old", 300), ("recent", 100), ("in-use", 200)):
        (store / name).mkdir(parents=True)
        (store / name / "weights").write_bytes(b"x" * 1000)
        os.utime(store / name, (1_000_000 - age, 1_000_000 - age))
    settings.SYSTEM_MODEL_STORE_MAX_BYTES = 1500
    removed = model_store.store_evict(store, keep={"in-use"})
    assert removed == ["old", "recent"]
    assert sorted(entry.name for entry in store.iterdir()) == ["in-use"]
    settings.SYSTEM_MODEL_STORE_MAX_BYTES = 10_000
    assert model_store.store_evict(store, keep=set()) == []


def test_using_a_model_makes_it_the_most_recently_used(ready, settings):
    store = Path(settings.MODEL_STORE)
    (store / "another").mkdir()
    (store / "another" / "weights").write_bytes(b"x" * 10)
    os.utime(store / str(ready.uuid), (1, 1))
    with model_store.model_files(ready):
        pass
    assert (store / str(ready.uuid)).stat().st_mtime > (store / "another").stat().st_mtime
    settings.SYSTEM_MODEL_STORE_MAX_BYTES = 1
    with model_store.model_files(ready):
        pass
    assert not (store / "another").exists() and (store / str(ready.uuid)).is_dir()


# --- The platform's endpoint --------------------------------------------------------------


def test_the_endpoint_is_off_without_a_worker_credential(ready, client, settings):
    settings.WORKER_TOKEN = ""
    response = client.get(
        f"{ARCHIVES}{ready.archive_sha256}/", HTTP_AUTHORIZATION="Worker anything"
    )
    assert response.status_code == 404


@pytest.mark.parametrize("header", [None, "Worker wrong", f"Token {TOKEN}", f"Bearer {TOKEN}"])
def test_only_the_worker_credential_gets_an_archive(ready, client, settings, header):
    settings.WORKER_TOKEN = TOKEN
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get(f"{ARCHIVES}{ready.archive_sha256}/", **extra)
    assert response.status_code == 403
    assert "gpu workers only" in response.json()["detail"]


def test_a_signed_in_member_or_organizer_gets_no_archive(hosted, settings):
    cast, system = hosted
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    settings.WORKER_TOKEN = TOKEN
    for role in ("builder", "organizer"):
        response = cast.client(role).get(f"{ARCHIVES}{version.archive_sha256}/")
        assert response.status_code == 403, role


def test_the_worker_credential_gets_the_archive_by_digest(ready, client, settings):
    settings.WORKER_TOKEN = TOKEN
    response = client.get(
        f"{ARCHIVES}{ready.archive_sha256}/", HTTP_AUTHORIZATION=f"Worker {TOKEN}"
    )
    assert response.status_code == 200
    body = b"".join(response.streaming_content)
    assert hashlib.sha256(body).hexdigest() == ready.archive_sha256
    unknown = client.get(f"{ARCHIVES}{'0' * 64}/", HTTP_AUTHORIZATION=f"Worker {TOKEN}")
    assert unknown.status_code == 404


def test_a_worker_on_another_machine_fetches_from_the_platform(
    transactional_db, live_server, settings, tmp_path, monkeypatch
):
    from ..conftest import build_cast

    cast = build_cast(current_phase="build")
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="cnn", kind="hosted"
    )
    version = upload_and_validate(cast, system, TINY_MODELS / "tiny-cnn")
    assert version.status == "ready", version.failure_detail
    settings.WORKER_TOKEN = TOKEN
    settings.WORKER_PLATFORM_URL = live_server.url

    # The platform runs in this process and reads its uploads from UPLOAD_ROOT: the worker's
    # side leaves its own uploads out instead (test_workers_e2e runs separate processes).
    monkeypatch.setattr(model_store, "SOURCES", [("platform", model_store._from_platform)])
    store = settings.MODEL_STORE = tmp_path / "other-machine" / "models"
    loaded = runner.version_system(version)
    assert loaded.labels == ["negative", "positive"]
    assert (store / version.model_dir / "config.json").is_file()


def test_a_redirect_is_refused_so_the_credential_goes_nowhere_else(ready, settings, tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    seen: list[str | None] = []

    class Redirecting(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (the name http.server calls)
            seen.append(self.headers.get("Authorization"))
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/elsewhere")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Redirecting)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        elsewhere(settings, tmp_path)
        settings.WORKER_TOKEN = TOKEN
        settings.WORKER_PLATFORM_URL = f"http://127.0.0.1:{server.server_port}"
        with pytest.raises(ArchiveUnavailable, match="platform: HTTP Error 302"):
            runner.version_system(ready)
    finally:
        server.shutdown()
        server.server_close()
    assert seen == [f"Worker {TOKEN}"]  # asked once, never followed


def test_a_source_that_sends_more_than_any_upload_is_cut_off(ready, settings):
    shutil.rmtree(Path(settings.MODEL_STORE) / str(ready.uuid))
    settings.SYSTEM_UPLOAD_MAX_BYTES = 100
    with pytest.raises(ArchiveUnavailable, match="more bytes than any upload may have"):
        runner.version_system(ready)
    assert not list(Path(settings.MODEL_STORE).glob(".fetch-*"))
