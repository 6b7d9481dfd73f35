"""Reading predict inputs and training data in every accepted format."""

from __future__ import annotations

import json

import pytest

from fim_engine.datasets import read_labelled, read_texts

TEXTS = ["a fine film", 'it said "no", twice', "tabs\tand, commas"]


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_texts_from_jsonl_keep_their_order(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [{"text": t, "id": i} for i, t in enumerate(TEXTS)])
    assert read_texts(path) == TEXTS


@pytest.mark.parametrize(("suffix", "delimiter"), [(".tsv", "\t"), (".csv", ",")])
def test_texts_from_delimited_files(tmp_path, suffix, delimiter):
    import csv

    path = tmp_path / f"in{suffix}"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, delimiter=delimiter)
        writer.writerow(["id", "text"])
        writer.writerows([i, t] for i, t in enumerate(TEXTS))
    assert read_texts(path) == TEXTS


def test_texts_from_txt_are_lines(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("first\n\nthird\n", encoding="utf-8")
    assert read_texts(path) == ["first", "", "third"]


def test_a_jsonl_line_without_text_is_reported_with_its_line_number(tmp_path):
    path = write_jsonl(tmp_path / "in.jsonl", [{"text": "ok"}, {"sentence_id": 3}])
    with pytest.raises(ValueError, match=r"in.jsonl:2"):
        read_texts(path)


def test_sst2_lines_map_0_and_1_to_negative_and_positive(tmp_path):
    path = tmp_path / "stsa.binary.dev"
    path.write_text("0 one long string of cliches .\n1 a gem .\n", encoding="utf-8")
    data = read_labelled(path)
    assert data.texts == ["one long string of cliches .", "a gem ."]
    assert data.labels == ["negative", "positive"]
    assert data.label_names == ["negative", "positive"]


def test_the_shared_sst2_dev_file_reads(sst2_dev):
    data = read_labelled(sst2_dev)
    assert len(data) == 872
    assert set(data.labels) == {"negative", "positive"}


def test_labelled_jsonl_uses_labels_as_written(tmp_path):
    path = write_jsonl(
        tmp_path / "train.jsonl", [{"text": "a", "label": "pos"}, {"text": "b", "label": "neg"}]
    )
    data = read_labelled(path)
    assert data.labels == ["pos", "neg"]
    assert data.label_names == ["neg", "pos"]


def test_a_missing_label_is_an_error(tmp_path):
    path = tmp_path / "train.csv"
    path.write_text("text,label\nfine,1\nbad,\n", encoding="utf-8")
    with pytest.raises(ValueError, match="train.csv:3: no label"):
        read_labelled(path)


def test_a_malformed_sst2_line_is_an_error(tmp_path):
    path = tmp_path / "data.train"
    path.write_text("positive a gem .\n", encoding="utf-8")
    with pytest.raises(ValueError, match="LABEL sentence"):
        read_labelled(path)
