"""The demo's three baseline builder systems: trained once with fim_engine, then cached.

A model lives in ``VAR_DIR/demo-models/<arch>-<key>/``, where the key digests the training and
dev files and the training settings: a second ``make demo`` finds it and trains nothing. A
model is written to a temporary directory and renamed into place, so an interrupted run never
leaves half a model in the cache.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.demo.data import DemoData

ARCHITECTURES = ("bow", "cnn", "minilm")
# Below this many training sentences, a model sees its data more often.
SMALL_TRAIN = 2000


@dataclass(frozen=True)
class TrainedModel:
    architecture: str
    directory: Path
    dev_accuracy: float
    cached: bool


def training_settings(architecture: str, train_size: int) -> dict[str, Any]:
    """fim_engine.train_system's arguments for ``architecture`` on ``train_size`` sentences."""
    small = train_size < SMALL_TRAIN
    if architecture == "minilm":
        # Fine-tuning a pretrained encoder: a few passes over a small set, one over a large.
        return {"epochs": 8 if small else 1, "batch_size": 16 if small else 32, "max_length": 64}
    if small:
        return {"epochs": 30, "batch_size": 16, "max_length": 64}
    # On SST-2, bow's dev accuracy stops rising after three epochs (fim_engine's default is 8).
    return {"epochs": 3 if architecture == "bow" else None, "batch_size": 32, "max_length": 64}


def cache_dir() -> Path:
    return Path(settings.VAR_DIR) / "demo-models"


def model_train(architecture: str, data: DemoData, *, progress: bool = True) -> TrainedModel:
    """The model of ``architecture`` for ``data``: from the cache, or trained now (a progress
    bar on stderr) and cached."""
    from fim_engine import datasets, training

    train = datasets.read_labelled(data.files["train"])
    options = training_settings(architecture, len(train))
    key = hashlib.sha256(
        json.dumps(
            [architecture, data.split_digest("train", "blind_dev"), options], sort_keys=True
        ).encode()
    ).hexdigest()[:16]
    target = cache_dir() / f"{architecture}-{key}"
    report_file = target / "demo-training.json"
    if report_file.is_file():
        report = json.loads(report_file.read_text())
        return TrainedModel(architecture, target, report["dev_accuracy"], cached=True)
    dev = datasets.read_labelled(data.files["blind_dev"])
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    report = training.train_system(architecture, train, dev, partial, progress=progress, **options)
    (partial / "demo-training.json").write_text(
        json.dumps({"dev_accuracy": report.dev_accuracy, "steps": report.steps, **options})
    )
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return TrainedModel(architecture, target, report.dev_accuracy, cached=False)


def model_archive(directory: Path, name: str) -> SimpleUploadedFile:
    """A zip of the model directory, as a builder uploads it (the demo's own report left out)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file() and path.name != "demo-training.json":
                archive.write(path, path.relative_to(directory).as_posix())
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")
