"""Reading sentence pairs: the nli-cad TSV layout, CSV and JSONL, with and without labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fim_engine import SentencePair, read_items, read_labelled_pairs, read_pairs
from fim_engine.datasets import is_pair_file

NLI_CAD = Path(__file__).resolve().parents[3] / "shared" / "data" / "nli-cad"
ROWS = [
    ("A man plays a guitar.", "Nobody plays music.", "contradiction"),
    ('A sign reads "No Parking".', "There is a sign.", "entailment"),
    ("Two dogs, one black, run.", "Animals are outside", "neutral"),
]


def write(path: Path, header: list[str], rows: list[tuple[str, ...]], delimiter: str) -> Path:
    import csv

    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


@pytest.mark.parametrize(
    ("suffix", "delimiter", "header"),
    [
        (".tsv", "\t", ["sentence1", "sentence2", "gold_label"]),
        (".csv", ",", ["premise", "hypothesis", "label"]),
    ],
)
def test_labelled_pairs_from_delimited_files(tmp_path, suffix, delimiter, header):
    path = write(tmp_path / f"pairs{suffix}", header, ROWS, delimiter)
    data = read_labelled_pairs(path)
    assert data.pairs == [SentencePair(p, h) for p, h, _ in ROWS]
    assert data.labels == ["contradiction", "entailment", "neutral"]
    assert data.label_names == ["contradiction", "entailment", "neutral"]
    assert data.items == data.pairs and len(data) == 3
    assert is_pair_file(path) and read_items(path) == data.pairs


def test_labelled_pairs_from_jsonl(tmp_path):
    path = tmp_path / "pairs.jsonl"
    path.write_text(
        "".join(json.dumps({"premise": p, "hypothesis": h, "label": y}) + "\n" for p, h, y in ROWS)
    )
    assert read_labelled_pairs(path).labels == [y for _, _, y in ROWS]
    assert read_pairs(path)[1].premise == 'A sign reads "No Parking".'


def test_a_pair_file_without_labels_is_read_for_predict(tmp_path):
    path = write(tmp_path / "in.tsv", ["premise", "hypothesis"], [r[:2] for r in ROWS], "\t")
    assert read_pairs(path) == [SentencePair(p, h) for p, h, _ in ROWS]
    with pytest.raises(ValueError, match="in.tsv:2: no label"):
        read_labelled_pairs(path)


def test_a_text_file_is_no_pair_file(tmp_path):
    path = tmp_path / "texts.tsv"
    path.write_text("text\tlabel\na fine film\tpositive\n")
    assert not is_pair_file(path)
    assert read_items(path) == ["a fine film"]
    with pytest.raises(ValueError, match="header needs a premise and a hypothesis column"):
        read_pairs(path)


def test_a_row_with_a_stray_tab_is_refused_with_its_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("sentence1\tsentence2\tgold_label\na\tb\tneutral\nc\td\te\tneutral\n")
    with pytest.raises(ValueError, match=r"bad.tsv:3: 4 fields where the header has 3 \(a tab"):
        read_pairs(path)


def test_an_snli_pair_without_a_gold_label_is_refused(tmp_path):
    path = write(
        tmp_path / "snli.tsv", ["sentence1", "sentence2", "gold_label"], [("a", "b", "-")], "\t"
    )
    with pytest.raises(ValueError, match="annotators did not agree"):
        read_labelled_pairs(path)


def test_other_suffixes_hold_no_pairs(tmp_path):
    path = tmp_path / "pairs.txt"
    path.write_text("premise\thypothesis\n")
    with pytest.raises(ValueError, match=r"read from .tsv, .csv or .jsonl"):
        read_pairs(path)


def test_the_nli_cad_files_read_whole_with_their_quoted_fields_decoded():
    if not NLI_CAD.is_dir():
        pytest.skip(f"nli-cad data not found in {NLI_CAD}")
    counts = {"original/train.tsv": 1666, "original/dev.tsv": 200, "original/test.tsv": 400}
    counts["revised_combined/train.tsv"] = 6664
    for name, count in counts.items():
        data = read_labelled_pairs(NLI_CAD / name)
        assert len(data) == count
        assert data.label_names == ["contradiction", "entailment", "neutral"]
    dev = read_labelled_pairs(NLI_CAD / "original" / "dev.tsv")
    # Line 13 is written CSV-style ("...""Camden""."); its text has one pair of quotes.
    assert dev.pairs[11].hypothesis == 'The man works for the campy supply company "Camden".'
    assert [dev.labels.count(y) for y in ("entailment", "neutral", "contradiction")] == [74, 75, 51]
