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


def wide_cnn(
    directory: Path, *, num_filters: int = 4096, embedding_dim: int = 8, width: int = 2
) -> Path:
    """A bibi-native CNN with thousands of filters: a few hundred KB on disk, but slow and
    memory-hungry on long texts (its feature maps hold filters × words × texts in a batch:
    about 10 MB per 250-word text). With ``width=64, embedding_dim=128, num_filters=512``
    each convolution of a batch of long texts is one native call of several seconds."""
    import torch

    from fim_engine.native import NativeConfig, Vocabulary, build_native_model, save_native_model

    config = NativeConfig(
        architecture="cnn",
        labels=["negative", "positive"],
        embedding_dim=embedding_dim,
        filter_widths=(width,),
        num_filters=num_filters,
    )
    vocab = Vocabulary.build([["good", "bad", "film"]])
    torch.manual_seed(0)
    return save_native_model(build_native_model(config, len(vocab)), config, vocab, directory)


def long_blind_dev(cast, count: int, *, words: int = 250) -> None:
    """Make the cast's blind dev set ``count`` reviews of ``words`` words each."""
    from bibi.sharedtasks.models import Example

    cast.blind_dev.examples.all().delete()
    Example.objects.bulk_create(
        Example(
            dataset=cast.blind_dev,
            external_id=f"long{i}",
            text=f"review {i} : "
            + " ".join(["a good film", "a bad film"][i % 2] for _ in range(words // 3)),
            label=["positive", "negative"][i % 2],
            position=i,
        )
        for i in range(count)
    )


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
