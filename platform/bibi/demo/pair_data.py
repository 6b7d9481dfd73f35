"""The data of the demo's sentence-pair (NLI) task: bounded slices of the shared nli-cad files.

``../shared/data/nli-cad/original/`` holds SNLI pairs in SNLI's own layout (``sentence1``,
``sentence2``, ``gold_label``; its PROVENANCE.md). The files are ordered by label, so each
slice takes every ``step``-th row of each label in file order until it has its share: the
same files always give the same slices, balanced over the three labels. Training data: from
``train.tsv``; the blind dev set: from ``dev.tsv``; the starter set: from ``test.tsv``. The
slices are written in memory in the same layout and imported through the organizers' import
(which reads SNLI's layout as it is); nothing is copied into the project.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from bibi.demo.data import slices_digest
from bibi.files.csv_out import csv_writer

LABELS = ("contradiction", "entailment", "neutral")
HEADER = ("sentence1", "sentence2", "gold_label")
# (file, pairs of each label) per split.
SLICES = {
    "train": ("train.tsv", 400),
    "blind_dev": ("dev.tsv", 20),
    "starter": ("test.tsv", 12),
}

Row = tuple[str, str, str]


@dataclass(frozen=True)
class PairSlice:
    """Some rows of one nli-cad file, as the bytes of a TSV file in SNLI's layout."""

    source: Path
    filename: str
    rows: tuple[Row, ...]

    def data(self) -> bytes:
        buffer = io.StringIO()
        # Read back by the example importer, never downloaded: written as it is.
        writer = csv_writer(buffer, neutralize=False, delimiter="\t", lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(self.rows)
        return buffer.getvalue().encode()

    def counts(self) -> str:
        return ", ".join(f"{sum(r[2] == label for r in self.rows)} {label}" for label in LABELS)


@dataclass(frozen=True)
class PairDemoData:
    """The nli-cad slices of the demo's sentence-pair task, cut from ``directory``."""

    directory: Path
    slices: dict[str, PairSlice]  # split -> slice: train, blind_dev, starter

    @classmethod
    def find(cls, directory: str | Path) -> PairDemoData | None:
        """The slices of ``directory/original/*.tsv``; None when a file is missing (the demo
        then builds its other tasks only, and says so)."""
        root = Path(directory).expanduser().resolve()
        files = {split: root / "original" / name for split, (name, _) in SLICES.items()}
        if not all(path.is_file() for path in files.values()):
            return None
        return cls(
            root,
            {
                split: PairSlice(
                    files[split],
                    f"nli-cad.{split}.tsv",
                    _balanced(_rows(files[split]), SLICES[split][1]),
                )
                for split in SLICES
            },
        )

    def digest(self, *splits: str) -> str:
        """SHA-256 over the slices of ``splits`` (default: all three)."""
        return slices_digest(self.slices, splits)

    def describe(self) -> str:
        return "; ".join(
            f"{split} {len(piece.rows)} pairs of {piece.source.name} ({piece.counts()})"
            for split, piece in self.slices.items()
        )


def _rows(path: Path) -> list[Row]:
    """The rows of an nli-cad file (its header left out). The files quote a text holding a
    quote as CSV does (``"... ""Camden""."``), so they are read with CSV quoting."""
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t")
        header = next(reader)
        if tuple(header) != HEADER:
            raise ValueError(f"{path} does not begin with the header {'/'.join(HEADER)}")
        return [(first, second, label) for first, second, label in reader]


def _balanced(rows: list[Row], each: int) -> tuple[Row, ...]:
    """``each`` rows of every label, spread over the file: every ``step``-th of the label's
    rows in file order, ``step`` the most that still gives ``each``."""
    taken: list[Row] = []
    for label in LABELS:
        mine = [row for row in rows if row[2] == label]
        step = max(1, len(mine) // each)
        taken += mine[::step][:each]
    return tuple(taken)
