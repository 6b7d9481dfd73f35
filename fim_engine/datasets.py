"""Reading texts (for predict) and labelled texts (for training) from the formats bibi accepts.

* ``.jsonl``: one JSON object per line with a ``text`` field (and ``label`` for training);
* ``.tsv`` / ``.csv``: a header row with a ``text`` column (and ``label``);
* ``.txt``: one text per line (predict only);
* anything else is read as SST-2 ``LABEL sentence`` lines (e.g. ``stsa.binary.train``), where
  the labels 0/1 mean negative/positive.

Labels elsewhere are used as written (as strings); the label order of a training set is the
sorted list of its distinct labels.

Example:
    >>> data = read_labelled("../shared/data/sst2/stsa.binary.dev")
    >>> data.label_names, data.texts[0], data.labels[0]
    (['negative', 'positive'], 'one long string of cliches .', 'negative')
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SST2_LABELS = {"0": "negative", "1": "positive"}
TEXT_KEYS = ("text", "sentence")


@dataclass(frozen=True)
class LabelledTexts:
    """Texts with one label name each; ``label_names`` fixes the label-index order."""

    texts: list[str]
    labels: list[str]
    label_names: list[str]

    def __len__(self) -> int:
        return len(self.texts)


def read_texts(path: str | Path) -> list[str]:
    """The texts of a ``.jsonl``, ``.tsv``, ``.csv`` or ``.txt`` file (or an SST-2 file), in order."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".txt":
        return path.read_text(encoding="utf-8").splitlines()
    if suffix in {".jsonl", ".tsv", ".csv"}:
        return [_text_of(record, path, line) for line, record in _records(path)]
    return read_labelled(path).texts


def read_labelled(path: str | Path) -> LabelledTexts:
    """Texts and labels of a ``.jsonl``, ``.tsv`` or ``.csv`` file, or of an SST-2 file."""
    path = Path(path)
    suffix = path.suffix.lower()
    texts: list[str] = []
    labels: list[str] = []
    if suffix in {".jsonl", ".tsv", ".csv"}:
        for line, record in _records(path):
            if record.get("label") in (None, ""):
                raise ValueError(f"{path.name}:{line}: no label")
            texts.append(_text_of(record, path, line))
            labels.append(str(record["label"]))
        return LabelledTexts(texts, labels, sorted(set(labels)))
    if suffix == ".txt":
        raise ValueError(
            f"{path.name}: a .txt file holds texts only; use .jsonl, .tsv, .csv or LABEL sentence lines"
        )
    for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        label, _, text = raw.partition(" ")
        if label not in SST2_LABELS or not text:
            raise ValueError(f"{path.name}:{line}: expected 'LABEL sentence' with LABEL 0 or 1")
        texts.append(text)
        labels.append(SST2_LABELS[label])
    return LabelledTexts(texts, labels, ["negative", "positive"])


def _records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if path.suffix.lower() == ".jsonl":
        records = []
        for line, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not raw.strip():
                continue
            record = json.loads(raw)
            if not isinstance(record, dict):
                raise ValueError(f"{path.name}:{line}: expected a JSON object")
            records.append((line, record))
        return records
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        if reader.fieldnames is None or not set(TEXT_KEYS) & set(reader.fieldnames):
            raise ValueError(f"{path.name}: the header needs a 'text' column")
        return [(line, dict(row)) for line, row in enumerate(reader, start=2)]


def _text_of(record: dict[str, Any], path: Path, line: int) -> str:
    for key in TEXT_KEYS:
        if isinstance(record.get(key), str):
            return str(record[key])
    raise ValueError(f"{path.name}:{line}: no 'text' field")
