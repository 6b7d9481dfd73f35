"""The data a demo task is built from: this project's fixture set, or a real data directory."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

# A directory in this layout: the project's own small set (fixtures/demo/).
FIXTURE_FILES = {
    "train": "train.tsv",
    "blind_dev": "blind_dev.tsv",
    "starter": "starter.tsv",
}
# The SST-2 sentence splits (../shared/data/sst2/): train, dev as the blind dev, test as starter.
SST2_FILES = {
    "train": "stsa.binary.train",
    "blind_dev": "stsa.binary.dev",
    "starter": "stsa.binary.test",
}
PAIRS_FILE = "pairs.tsv"


@dataclass(frozen=True)
class DemoData:
    """Where the demo's splits are, and a digest of their contents (to know when they change)."""

    directory: Path
    layout: str  # "fixtures" or "sst2"
    files: dict[str, Path]  # split → file: train, blind_dev, starter
    pairs: Path | None  # a sample breaker pair set over this starter set, when there is one

    @classmethod
    def find(cls, directory: str | Path) -> DemoData:
        """The splits in ``directory``, in either layout; CommandError saying what is missing."""
        root = Path(directory).expanduser().resolve()
        if not root.is_dir():
            raise CommandError(f"The demo data directory {root} does not exist.")
        for layout, names in (("fixtures", FIXTURE_FILES), ("sst2", SST2_FILES)):
            files = {split: root / name for split, name in names.items()}
            if all(path.is_file() for path in files.values()):
                pairs = root / PAIRS_FILE
                return cls(root, layout, files, pairs if pairs.is_file() else None)
        wanted = " ".join(FIXTURE_FILES.values())
        sst2 = " ".join(SST2_FILES.values())
        raise CommandError(
            f"{root} holds neither the demo layout ({wanted}) nor the SST-2 splits ({sst2})."
        )

    @property
    def name(self) -> str:
        return "SST-2" if self.layout == "sst2" else "the demo's fixture set"

    def digest(self) -> str:
        """SHA-256 over every file the demo reads: the same data gives the same demo."""
        sha = hashlib.sha256()
        for path in [*self.files.values(), *([self.pairs] if self.pairs else [])]:
            sha.update(path.name.encode())
            sha.update(path.read_bytes())
        return sha.hexdigest()

    def split_digest(self, *splits: str) -> str:
        sha = hashlib.sha256()
        for split in splits:
            sha.update(self.files[split].read_bytes())
        return sha.hexdigest()


def slices_digest(slices: Mapping[str, Any], splits: Sequence[str]) -> str:
    """SHA-256 over the slices of ``splits`` (each slice's ``data()``; default: all of them):
    the span and sentence-pair tasks' data say they changed by it."""
    sha = hashlib.sha256()
    for split in splits or tuple(slices):
        sha.update(split.encode())
        sha.update(slices[split].data())
    return sha.hexdigest()
