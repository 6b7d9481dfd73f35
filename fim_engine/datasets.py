"""Reading texts (for predict) and labelled texts (for training) from the formats bibi accepts.

* ``.jsonl``: one JSON object per line with a ``text`` field (and ``label`` for training);
* ``.tsv`` / ``.csv``: a header row with a ``text`` column (and ``label``);
* ``.txt``: one text per line (predict only);
* anything else is read as SST-2 ``LABEL sentence`` lines (e.g. ``stsa.binary.train``), where
  the labels 0/1 mean negative/positive.

Labels elsewhere are used as written (as strings); the label order of a training set is the
sorted list of its distinct labels.

**Sentence pairs** (:func:`read_pairs`, :func:`read_labelled_pairs`, :func:`read_items`): a
header with a premise column (``premise`` or ``sentence1``), a hypothesis column
(``hypothesis`` or ``sentence2``) and, for training, a label column (``label`` or
``gold_label``), in

* ``.tsv``: tab-separated (the nli-cad layout: ``sentence1<TAB>sentence2<TAB>gold_label``);
* ``.csv``: comma-separated;
* ``.jsonl``: one JSON object per line with those keys.

Both delimited formats use the csv module's standard quoting: a field that *starts* with ``"``
is quoted and ``""`` inside it is one ``"``; a ``"`` anywhere else is an ordinary character.
That is how the nli-cad files were written, although their PROVENANCE.md says "no quoting":
every one of their fields that holds a ``"`` is quoted so (``"... reads ""Jobs with
Justice""."``, 13 rows of original/, 34 of revised_combined/), and ``csv.QUOTE_NONE`` would keep
those outer and doubled quotes in the text. Every row must have the header's number of fields.

Example:
    >>> data = read_labelled("../shared/data/sst2/stsa.binary.dev")
    >>> data.label_names, data.texts[0], data.labels[0]
    (['negative', 'positive'], 'one long string of cliches .', 'negative')
    >>> nli = read_labelled_pairs("../shared/data/nli-cad/original/dev.tsv")
    >>> nli.label_names, nli.pairs[0].hypothesis
    (['contradiction', 'entailment', 'neutral'], 'A little boy is playing soccer outside.')
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fim_engine.sentence_pairs import SentencePair, TextItem

SST2_LABELS = {"0": "negative", "1": "positive"}
TEXT_KEYS = ("text", "sentence")
PREMISE_KEYS = ("premise", "sentence1")
HYPOTHESIS_KEYS = ("hypothesis", "sentence2")
LABEL_KEYS = ("label", "gold_label")


@dataclass(frozen=True)
class LabelledTexts:
    """Texts with one label name each; ``label_names`` fixes the label-index order."""

    texts: list[str]
    labels: list[str]
    label_names: list[str]

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def items(self) -> list[TextItem]:
        """The texts, as the items a :class:`fim_engine.System` scores."""
        return list(self.texts)


@dataclass(frozen=True)
class LabelledPairs:
    """Sentence pairs with one label name each; ``label_names`` fixes the label-index order."""

    pairs: list[SentencePair]
    labels: list[str]
    label_names: list[str]

    def __len__(self) -> int:
        return len(self.pairs)

    @property
    def items(self) -> list[TextItem]:
        """The pairs, as the items a :class:`fim_engine.System` scores."""
        return list(self.pairs)


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


def is_pair_file(path: str | Path) -> bool:
    """Whether a ``.tsv``, ``.csv`` or ``.jsonl`` file holds sentence pairs: its header (or
    first record) has a premise and a hypothesis column."""
    path = Path(path)
    if path.suffix.lower() not in {".tsv", ".csv", ".jsonl"}:
        return False
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix.lower() == ".jsonl":
            first = next((line for line in handle if line.strip()), "")
            try:
                record = json.loads(first) if first else {}
            except json.JSONDecodeError:
                return False
            keys = set(record) if isinstance(record, dict) else set()
        else:
            header = handle.readline().rstrip("\r\n")
            keys = set(header.split("\t" if path.suffix.lower() == ".tsv" else ","))
    return bool(keys & set(PREMISE_KEYS)) and bool(keys & set(HYPOTHESIS_KEYS))


def read_items(path: str | Path) -> list[TextItem]:
    """The sentence pairs of a pair file (:func:`is_pair_file`), else the texts of the file."""
    return list(read_pairs(path)) if is_pair_file(path) else list(read_texts(path))


def read_pairs(path: str | Path) -> list[SentencePair]:
    """The sentence pairs of a ``.tsv`` (no quoting), ``.csv`` or ``.jsonl`` file, in order."""
    return [pair for _, pair, _ in _pair_rows(Path(path))]


def read_labelled_pairs(path: str | Path) -> LabelledPairs:
    """Sentence pairs and their labels (e.g. nli-cad's ``sentence1 sentence2 gold_label``)."""
    path = Path(path)
    pairs, labels = [], []
    for line, pair, label in _pair_rows(path):
        if not label or label == "-":
            raise ValueError(
                f"{path.name}:{line}: no label"
                + (" ('-': the annotators did not agree; leave the pair out)" if label else "")
            )
        pairs.append(pair)
        labels.append(label)
    return LabelledPairs(pairs, labels, sorted(set(labels)))


def _pair_rows(path: Path) -> list[tuple[int, SentencePair, str]]:
    """``(line, pair, label or "")`` per record of a pair file."""
    suffix = path.suffix.lower()
    if suffix not in {".tsv", ".csv", ".jsonl"}:
        raise ValueError(f"{path.name}: sentence pairs are read from .tsv, .csv or .jsonl files")
    if suffix == ".jsonl":
        records = _records(path)
    else:
        records = _delimited_pair_records(path, tsv=suffix == ".tsv")
    rows = []
    for line, record in records:
        premise = _field(record, PREMISE_KEYS, path, line)
        hypothesis = _field(record, HYPOTHESIS_KEYS, path, line)
        label = next((record[k] for k in LABEL_KEYS if record.get(k) not in (None, "")), "")
        rows.append((line, SentencePair(premise, hypothesis), str(label)))
    return rows


def _delimited_pair_records(path: Path, *, tsv: bool) -> list[tuple[int, dict[str, Any]]]:
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t" if tsv else ",")
        header = next(reader, None)
        if (
            header is None
            or not (set(header) & set(PREMISE_KEYS))
            or not (set(header) & set(HYPOTHESIS_KEYS))
        ):
            raise ValueError(
                f"{path.name}: the header needs a premise and a hypothesis column "
                "(premise/hypothesis or sentence1/sentence2)"
            )
        records = []
        for line, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) != len(header):
                raise ValueError(
                    f"{path.name}:{line}: {len(row)} fields where the header has {len(header)}"
                    + (" (a tab inside a sentence?)" if tsv else "")
                )
            records.append((line, dict(zip(header, row, strict=True))))
        return records


def _field(record: dict[str, Any], keys: tuple[str, ...], path: Path, line: int) -> str:
    for key in keys:
        if isinstance(record.get(key), str):
            return str(record[key])
    raise ValueError(f"{path.name}:{line}: no '{keys[0]}' (or '{keys[1]}') field")
