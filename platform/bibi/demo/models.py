"""The demo's baseline builder systems: trained once with fim_engine, then cached.

The sentiment tasks' three (bow, cnn, MiniLM), the span task's fine-tuned MiniLM span
model (``minilm-span``) and the sentence-pair task's two (``bow-pair``, ``minilm-pair``). A model lives in ``VAR_DIR/demo-models/<arch>-<key>/``, where the key digests the training and
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.demo.data import DemoData
from bibi.demo.pair_data import PairDemoData
from bibi.demo.span_data import SpanDemoData

ARCHITECTURES = ("bow", "cnn", "minilm")
SPAN_ARCHITECTURE = "minilm-span"
# The span model's training (fim_engine.span_training.train_span_system's arguments): a bounded
# run over the demo's training slice. Measured 2026-11-26 on this project's 2-core machine: at a
# load average of 3 to 4, 4 min 44 s of wall time and 198 s of CPU time for the whole run (100
# steps, 265 s, then scoring the 301 blind-dev questions); at a load of 9 to 13, 14 min 33 s and
# 352 s of CPU time. On two idle cores, estimated from that CPU time (never measured idle), 2-3
# minutes. The run is deterministic (seed 0): blind dev exact 11.6%, token F1 >= 0.5 27.9%,
# overlap over the longer span (overlap_longer, then called overlap_2017) 14.6%, mean token F1
# 0.31.
SPAN_TRAINING: dict[str, Any] = {
    "epochs": 1,
    "max_steps": 100,
    "batch_size": 8,
    "max_length": 96,
    "learning_rate": 1e-4,
}
# The sentence-pair models' training (fim_engine.train_system's arguments) on the demo's
# 1,200 training pairs: bow-pair with fim_engine's defaults; MiniLM fine-tuned for a bounded run
# (fim_engine/README.md "Sentence pairs": 150 steps of 16 reached 60.5% on nli-cad's dev set in
# 109 s on one thread of this machine).
PAIR_TRAINING: dict[str, dict[str, Any]] = {
    "bow-pair": {"max_length": 128},
    "minilm-pair": {"max_steps": 150, "batch_size": 16, "max_length": 128},
}
# The demo's own report in a cached model's directory (left out of the uploaded archive).
REPORT_FILE = "demo-training.json"
# Below this many training sentences, a model sees its data more often.
SMALL_TRAIN = 2000


@dataclass(frozen=True)
class TrainedModel:
    architecture: str
    directory: Path
    dev_accuracy: float
    cached: bool


@dataclass(frozen=True)
class TrainedSpanModel:
    """The span model and the figures of its training run on the blind dev slice:
    ``dev_scores`` maps each answer mode (scoring.answers) to its accuracy, and
    ``mean_token_f1`` to the mean best token F1."""

    architecture: str
    directory: Path
    dev_scores: dict[str, float]
    dev_questions: int
    seconds: float
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

    def fit(out: Path) -> dict[str, Any]:
        dev = datasets.read_labelled(data.files["blind_dev"])
        report = training.train_system(architecture, train, dev, out, progress=progress, **options)
        return {"dev_accuracy": report.dev_accuracy, "steps": report.steps, **options}

    key = [architecture, data.split_digest("train", "blind_dev"), options]
    target, report, cached = _cached_model(architecture, key, fit)
    return TrainedModel(architecture, target, report["dev_accuracy"], cached=cached)


def span_model_train(data: SpanDemoData, *, progress: bool = True) -> TrainedSpanModel:
    """The demo's MiniLM span model for ``data``'s training slice (``SPAN_TRAINING``), scored
    on its blind dev slice: from the cache, or fine-tuned now and cached."""

    def fit(out: Path) -> dict[str, Any]:
        from fim_engine.span_training import train_span_system

        train, dev = (_span_records(data, split) for split in ("train", "blind_dev"))
        report = train_span_system(train, dev, out, progress=progress, **SPAN_TRAINING)
        return {
            "dev_scores": report.dev_scores,
            "dev_questions": report.dev_questions,
            "steps": report.steps,
            "seconds": round(report.seconds, 1),
            **SPAN_TRAINING,
        }

    key = [SPAN_ARCHITECTURE, data.digest("train", "blind_dev"), SPAN_TRAINING]
    target, report, cached = _cached_model(SPAN_ARCHITECTURE, key, fit)
    return TrainedSpanModel(
        SPAN_ARCHITECTURE,
        target,
        report["dev_scores"],
        report["dev_questions"],
        report["seconds"],
        cached=cached,
    )


def pair_model_train(
    architecture: str, data: PairDemoData, *, progress: bool = True
) -> TrainedModel:
    """The demo's ``architecture`` (``PAIR_TRAINING``) for ``data``'s training pairs, scored on
    its blind dev pairs: from the cache, or trained now and cached."""
    options = PAIR_TRAINING[architecture]

    def fit(out: Path) -> dict[str, Any]:
        from fim_engine.datasets import read_labelled_pairs
        from fim_engine.training import train_system

        train, dev = (_pairs(data, split, read_labelled_pairs) for split in ("train", "blind_dev"))
        report = train_system(architecture, train, dev, out, progress=progress, **options)
        return {"dev_accuracy": report.dev_accuracy, "steps": report.steps, **options}

    key = [architecture, data.digest("train", "blind_dev"), options]
    target, report, cached = _cached_model(architecture, key, fit)
    return TrainedModel(architecture, target, report["dev_accuracy"], cached=cached)


def _pairs(data: PairDemoData, split: str, read: Callable[[Path], Any]) -> Any:
    """A slice read by fim_engine's pair reader (from a temporary file: it reads paths)."""
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / data.slices[split].filename
        path.write_bytes(data.slices[split].data())
        return read(path)


def _span_records(data: SpanDemoData, split: str) -> list[Any]:
    from fim_engine.qasrl import read_qa

    return list(read_qa(data.slices[split].lines()).records)


def _cached_model(
    name: str, key: list[Any], fit: Callable[[Path], dict[str, Any]]
) -> tuple[Path, dict[str, Any], bool]:
    """The model directory cached under ``name`` and ``key``, its report and whether it was
    cached: ``fit(directory)`` trains into a temporary directory and returns the report, then
    the directory is renamed into place."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16]
    target = cache_dir() / f"{name}-{digest}"
    report_file = target / REPORT_FILE
    if report_file.is_file():
        return target, json.loads(report_file.read_text()), True
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    report = fit(partial)
    (partial / REPORT_FILE).write_text(json.dumps(report))
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target, report, False


def model_archive(directory: Path, name: str) -> SimpleUploadedFile:
    """A zip of the model directory, as a builder uploads it (the demo's own report left out)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(directory.rglob("*")):
            if path.is_file() and path.name != REPORT_FILE:
                archive.write(path, path.relative_to(directory).as_posix())
    return SimpleUploadedFile(name, buffer.getvalue(), content_type="application/zip")
