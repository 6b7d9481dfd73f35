"""Training pair baselines (bow-pair, minilm-pair) and the CLI on sentence-pair files."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np
import pytest

from fim_engine import (
    LabelledPairs,
    SentencePair,
    check_model_dir,
    load_system,
    read_labelled_pairs,
    train_system,
)
from fim_engine.cli import main
from fim_engine.training import accuracy

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fim_engine"
WORDS = ["dog", "cat", "man", "woman", "runs", "sleeps", "eats", "sings", "park", "house"]


def synthetic_pairs(count: int, seed: int) -> LabelledPairs:
    """A hypothesis that repeats its premise entails it, one that negates it contradicts it,
    one about something else is neutral: learnable from [u, v, |u − v|, u ∗ v] alone."""
    rng = random.Random(seed)
    pairs, labels = [], []
    for i in range(count):
        premise = " ".join(rng.sample(WORDS, 3))
        label = ["entailment", "contradiction", "neutral"][i % 3]
        hypothesis = {
            "entailment": premise,
            "contradiction": f"no {premise} not",
            "neutral": " ".join(rng.sample(WORDS, 3)),
        }[label]
        pairs.append(SentencePair(premise, hypothesis))
        labels.append(label)
    return LabelledPairs(pairs, labels, sorted(set(labels)))


def write_tsv(path: Path, data: LabelledPairs) -> Path:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["sentence1", "sentence2", "gold_label"])
        writer.writerows(
            (p.premise, p.hypothesis, y) for p, y in zip(data.pairs, data.labels, strict=True)
        )
    return path


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_bow_pair_trains_into_an_uploadable_pair_model(tmp_path):
    train, dev = synthetic_pairs(240, seed=0), synthetic_pairs(60, seed=1)
    report = train_system("bow-pair", train, dev, tmp_path / "bow-pair", epochs=6, progress=False)
    assert report.architecture == "bow-pair"
    assert check_model_dir(report.out_dir, inputs="pair").labels == train.label_names
    saved = load_system(report.out_dir, device="cpu")
    assert report.dev_accuracy == accuracy(saved, dev) > 0.6  # chance is 1/3
    np.testing.assert_allclose(
        saved.predict(dev.pairs).probabilities, report.dev_probabilities, atol=1e-6
    )
    (result,) = saved.fisher(dev.pairs[:1], editable="hypothesis")
    assert result.lambda_max > 0 and set(result.word_segments or []) == {"hypothesis"}


def test_a_seed_makes_a_run_repeatable(tmp_path):
    train, dev = synthetic_pairs(60, seed=0), synthetic_pairs(30, seed=1)

    def weights(seed: int, name: str) -> bytes:
        report = train_system(
            "bow-pair", train, dev, tmp_path / name, max_steps=4, seed=seed, progress=False
        )
        return (report.out_dir / "model.safetensors").read_bytes()

    assert weights(3, "a") == weights(3, "b")
    assert weights(3, "a") != weights(4, "c")


def test_a_pair_model_needs_pairs_and_a_text_model_texts(tmp_path):
    from fim_engine.datasets import LabelledTexts

    pairs = synthetic_pairs(9, seed=0)
    texts = LabelledTexts(["a fine film"] * 2, ["positive", "negative"], ["negative", "positive"])
    with pytest.raises(ValueError, match="bow-pair trains on sentence pairs; the training set"):
        train_system("bow-pair", texts, texts, tmp_path / "x", progress=False)
    with pytest.raises(ValueError, match="cnn trains on single texts; the dev set"):
        train_system("cnn", texts, pairs, tmp_path / "y", progress=False)


def test_the_cli_trains_bow_pair_on_the_nli_layout_and_predicts_with_hypothesis_hints(
    tmp_path, capsys
):
    train = write_tsv(tmp_path / "train.tsv", synthetic_pairs(120, seed=0))
    dev = write_tsv(tmp_path / "dev.tsv", synthetic_pairs(30, seed=1))
    out = tmp_path / "model"
    command = ["train", "--arch", "bow-pair", "--train", str(train), "--dev", str(dev)]
    assert main([*command, "--out", str(out), "--epochs", "2", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert "120 training and 30 dev pairs" in printed and "dev accuracy: " in printed
    output = tmp_path / "out.jsonl"
    predict = ["predict", "--model", str(out), "--input", str(dev), "--output", str(output)]
    assert main([*predict, "--hints", "--editable", "hypothesis"]) == 0
    records = read_jsonl(output)
    data = read_labelled_pairs(dev)
    assert [(r["premise"], r["hypothesis"]) for r in records] == [tuple(p) for p in data.pairs]
    system = load_system(out, device="cpu")
    expected = system.fisher(data.pairs, editable="hypothesis")
    for record, result, pair in zip(records, expected, data.pairs, strict=True):
        assert "text" not in record
        assert record["label"] == result.label
        assert record["lambda_max"] == pytest.approx(result.lambda_max, rel=1e-6)
        assert [w for w, _ in record["hints"]] == pair.hypothesis.split()
        assert record["word_segments"] == ["hypothesis"] * len(pair.hypothesis.split())


def test_the_cli_predicts_pairs_from_jsonl_with_a_transformers_model(tmp_path):
    source = tmp_path / "in.jsonl"
    pairs = [SentencePair("the film is good", "it was dull"), SentencePair("a mess", "fun")]
    source.write_text("".join(json.dumps(p._asdict()) + "\n" for p in pairs))
    output = tmp_path / "out.jsonl"
    model = FIXTURES / "models" / "tiny-bert"
    args = ["predict", "--model", str(model), "--input", str(source), "--output", str(output)]
    assert main([*args, "--fisher"]) == 0
    records = read_jsonl(output)
    expected = load_system(model, device="cpu").fisher(pairs, hints=False)
    assert [r["lambda_max"] for r in records] == pytest.approx(
        [r.lambda_max for r in expected], rel=1e-6
    )
    assert all("hints" not in r for r in records)


def test_suggest_reads_a_pair_file_in_the_nli_cad_layout(tmp_path, capsys):
    source = write_tsv(tmp_path / "pairs.tsv", synthetic_pairs(3, seed=0))
    model = FIXTURES / "models" / "tiny-bow-pair"
    output = tmp_path / "out.jsonl"
    assert (
        main(
            ["suggest", "--model", str(model), "--input", str(source), "--output", str(output)]
            + ["--source", "neighbour"]
        )
        == 0
    )
    assert "for 3 items" in capsys.readouterr().out
    records = read_jsonl(output)
    pairs = read_labelled_pairs(source).pairs
    assert [(r["premise"], r["hypothesis"]) for r in records] == [tuple(p) for p in pairs]
    # Without --editable a pair's words are both sides', premise first.
    for record, pair in zip(records, pairs, strict=True):
        words = len(pair.premise.split())
        assert record["word_segments"][:words] == ["premise"] * words
        assert set(record["word_segments"][words:]) == {"hypothesis"}


@pytest.mark.slow
def test_minilm_pair_fine_tunes_into_a_transformers_pair_model(tmp_path):
    train, dev = synthetic_pairs(48, seed=0), synthetic_pairs(12, seed=1)
    report = train_system(
        "minilm-pair", train, dev, tmp_path / "minilm-pair", max_steps=3, batch_size=8,
        max_length=32, progress=False, device="cpu",
    )  # fmt: skip
    assert report.steps == 3
    fmt = check_model_dir(report.out_dir, inputs="pair")
    assert fmt.architecture == "BertForSequenceClassification"
    saved = load_system(report.out_dir, device="cpu", max_length=32)
    np.testing.assert_allclose(
        saved.predict(dev.pairs).probabilities, report.dev_probabilities, atol=1e-5
    )
    assert saved.contrast_pass() is not None
    (result,) = saved.fisher(dev.pairs[:1], editable="hypothesis")
    assert result.word_segments == ["hypothesis"] * len(result.hints)
