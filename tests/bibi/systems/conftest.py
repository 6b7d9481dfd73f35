from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.systems import services

from ..conftest import build_cast

REPO_ROOT = Path(__file__).resolve().parents[3]
FIM_FIXTURES = REPO_ROOT / "fixtures" / "fim_engine"
TINY_MODELS = FIM_FIXTURES / "models"
BAD_MODELS = FIM_FIXTURES / "bad_models"


def zip_directory(directory: Path, *, wrap: str | None = None) -> bytes:
    """A .zip of a model directory, as a builder would make it (optionally inside a folder)."""
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file():
                name = path.relative_to(directory).as_posix()
                archive.write(path, f"{wrap}/{name}" if wrap else name)
    return buffer.getvalue()


def archive_upload(directory: Path, name: str = "model.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, zip_directory(directory), content_type="application/zip")


@pytest.fixture
def build_cast_fixture(db):
    """The cast with the build phase running: builders may upload."""
    return build_cast(current_phase="build")


@pytest.fixture
def hosted(build_cast_fixture):
    cast = build_cast_fixture
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="cnn", kind="hosted"
    )
    return cast, system


@pytest.fixture
def self_reported(build_cast_fixture):
    cast = build_cast_fixture
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="by hand", kind="self_reported"
    )
    return cast, system
