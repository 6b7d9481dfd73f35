"""docs/builders.md's worked example: fine-tune MiniLM as the guide does, package it as the
guide does, and validate the archive with the service the gpu worker runs."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.systems import services, validation
from bibi.systems.archives import ArchiveLimits, ArchiveRejected, unpack_archive
from bibi.systems.models import Prediction

from ..bibi.conftest import STARTER, build_cast
from .conftest import DOCS, code_blocks

pytestmark = [pytest.mark.embedded, pytest.mark.django_db, pytest.mark.slow]


def _guide(language: str) -> str:
    (block,) = [
        b
        for b in code_blocks("builders.md")
        if b.options.get("run") == "guide" and b.language == language
    ]
    return block.text


def test_the_worked_example_packages_an_archive_the_worker_accepts(tmp_path):
    trained = subprocess.run(
        [sys.executable, "-c", _guide("python")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1", "HOME": str(tmp_path)},
    )
    assert trained.returncode == 0, trained.stderr[-3000:]
    # The guide shows the directory's files as the example prints them.
    shown = [b.text for b in code_blocks("builders.md") if b.language == "text"]
    files = trained.stdout.splitlines()[-1]
    assert f"{files}\n" in shown
    assert "model.safetensors" in ast.literal_eval(files)

    packaged = subprocess.run(
        ["bash", "-c", _guide("sh")], cwd=tmp_path, capture_output=True, text=True
    )
    assert packaged.returncode == 0, packaged.stderr
    archive = tmp_path / "minilm-sentiment.tar.gz"

    cast = build_cast(current_phase="build")
    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="minilm", kind="hosted"
    )
    version = services.system_version_upload(
        system=system,
        actor=cast.builder,
        archive=SimpleUploadedFile(archive.name, archive.read_bytes()),
    )
    version = validation.system_version_validate(version_id=version.id)

    assert version.status == "ready", (version.failure_reason, version.failure_detail)
    assert version.model_format == "transformers"
    assert version.label_mapping == {"negative": "negative", "positive": "positive"}
    starter = version.predictions.filter(source=Prediction.Source.STARTER)
    assert starter.count() == len(STARTER)
    assert all(p.lambda_max is not None and p.lambda_max >= 0 for p in starter)


def test_an_archive_of_the_folders_contents_made_with_tar_c_dot_unpacks_as_the_guide_says(
    tmp_path,
):
    model = tmp_path / "model"
    (model / "sub").mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "sub" / "vocab.txt").write_text("a")
    archive = tmp_path / "model.tar.gz"
    subprocess.run(["tar", "-czf", str(archive), "-C", str(model), "."], check=True)
    limits = ArchiveLimits(max_files=200, max_bytes=2**20, max_ratio=50)

    root = unpack_archive(archive, tmp_path / "unpacked", limits=limits)

    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "config.json",
        "sub",
        "sub/vocab.txt",
    ]
    assert "`tar -czf model.tar.gz -C model .`" in (DOCS / "builders.md").read_text(
        encoding="utf-8"
    )


def test_a_file_member_named_dot_is_still_refused(tmp_path):
    import io
    import tarfile

    archive = tmp_path / "dot.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo(".")
        info.size = 1
        tar.addfile(info, io.BytesIO(b"x"))
    limits = ArchiveLimits(max_files=200, max_bytes=2**20, max_ratio=50)
    with pytest.raises(ArchiveRejected, match="an empty member name is refused"):
        unpack_archive(archive, tmp_path / "unpacked", limits=limits)
