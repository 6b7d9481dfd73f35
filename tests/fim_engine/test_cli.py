"""``python -m fim_engine predict / train / bench`` end to end on tiny models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fim_engine import load_system
from fim_engine.cli import main

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "fim_engine"
TEXTS = ["a gorgeous , witty film", "flat and tedious", "unbelievably dull !"]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("model", ["tiny-cnn", "tiny-bert"])
def test_predict_writes_one_object_per_text_in_input_order(tmp_path, model):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    assert (
        main(
            [
                "predict",
                "--model",
                str(FIXTURES / "models" / model),
                "--input",
                str(source),
                "--output",
                str(output),
            ]
        )
        == 0
    )
    records = read_jsonl(output)
    system = load_system(FIXTURES / "models" / model)
    expected = system.predict(TEXTS)
    assert [r["text"] for r in records] == TEXTS
    assert [r["label"] for r in records] == expected.labels
    for record, row in zip(records, expected.probabilities, strict=True):
        assert list(record["probabilities"]) == ["negative", "positive"]
        np.testing.assert_allclose(list(record["probabilities"].values()), row, atol=1e-6)
        assert record["truncated"] is False
        assert "lambda_max" not in record and "hints" not in record


def test_predict_with_fisher_and_hints(tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"text": t}) + "\n" for t in TEXTS), encoding="utf-8")
    output = tmp_path / "out.jsonl"
    model = FIXTURES / "models" / "tiny-bert"
    main(
        [
            "predict",
            "--model",
            str(model),
            "--input",
            str(source),
            "--output",
            str(output),
            "--fisher",
            "--hints",
        ]
    )
    records = read_jsonl(output)
    expected = load_system(model).fisher(TEXTS)
    for record, result in zip(records, expected, strict=True):
        assert record["lambda_max"] == pytest.approx(result.lambda_max, rel=1e-5)
        assert [word for word, _ in record["hints"]] == [word for word, _ in result.hints]


def test_predict_with_fisher_only_has_no_hints(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("text\n" + "\n".join(f'"{t}"' for t in TEXTS) + "\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    main(
        [
            "predict",
            "--model",
            str(FIXTURES / "models" / "tiny-bilstm"),
            "--input",
            str(source),
            "--output",
            str(output),
            "--fisher",
        ]
    )
    records = read_jsonl(output)
    assert [r["text"] for r in records] == TEXTS
    assert all("lambda_max" in r and "hints" not in r for r in records)


def test_predict_reports_truncation(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("good\nthe film is good and fun\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    main(
        [
            "predict",
            "--model",
            str(FIXTURES / "models" / "tiny-bow"),
            "--input",
            str(source),
            "--output",
            str(output),
            "--max-length",
            "3",
        ]
    )
    assert [r["truncated"] for r in read_jsonl(output)] == [False, True]
    assert "1 text(s) exceeded 3 tokens" in capsys.readouterr().out


@pytest.mark.parametrize("arch", ["bow", "cnn", "bilstm"])
def test_train_writes_an_uploadable_directory_and_prints_dev_accuracy(tmp_path, capsys, arch):
    train = tmp_path / "train.tsv"
    rows = [
        ("a great fun film", "pos"),
        ("dull and awful", "neg"),
        ("great , witty", "pos"),
        ("awful mess", "neg"),
    ] * 8
    train.write_text(
        "text\tlabel\n" + "".join(f"{t}\t{label}\n" for t, label in rows), encoding="utf-8"
    )
    out = tmp_path / "model"
    status = main(
        [
            "train",
            "--arch",
            arch,
            "--train",
            str(train),
            "--dev",
            str(train),
            "--out",
            str(out),
            "--epochs",
            "3",
            "--batch-size",
            "8",
        ]
    )
    assert status == 0
    printed = capsys.readouterr().out
    accuracy = float(printed.split("dev accuracy: ")[1].split()[0])
    system = load_system(out)
    assert system.labels == ["neg", "pos"]
    predicted = system.predict([t for t, _ in rows]).labels
    assert accuracy == pytest.approx(
        np.mean([p == g for p, (_, g) in zip(predicted, rows, strict=True)])
    )
    assert accuracy == 1.0, "four distinct sentences repeated eight times must be learnt"


def test_bench_runs_on_a_model_directory(tmp_path):
    figures_file = tmp_path / "bench.json"
    model = FIXTURES / "models" / "tiny-bert"
    status = main(
        [
            "bench",
            "--model",
            str(model),
            "--sentences",
            "8",
            "--alg1-sentences",
            "2",
            "--repeats",
            "1",
            "--json",
            str(figures_file),
        ]
    )
    assert status == 0
    figures = json.loads(figures_file.read_text())["systems"]["tiny-bert"]
    assert figures["alg1_sentences"] == 2
    assert figures["alg1_max_relative_difference"] < 1e-3
    for key in ("forward_ms", "lambda_max_ms", "bare_loop_ms", "alg1_ms"):
        assert figures[key] > 0
    # A BERT classifier: λmax on its own pass, timed against the same model on autograd.
    assert figures["lambda_max_pass"] == "bert_pass"
    assert figures["lambda_max_autograd_ms"] > 0
    assert figures["lambda_max_autograd_over_forward"] > 0


def test_python_dash_m_runs_the_cli(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "fim_engine", "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    for command in ("predict", "suggest", "train", "bench", "bench-suggest", "bench-gpu"):
        assert command in result.stdout


def test_the_library_never_imports_django_and_loads_transformers_lazily():
    code = "import sys, fim_engine; print('django' in sys.modules, 'transformers' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]


def test_suggest_writes_one_verified_report_per_text(tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    output = tmp_path / "out.jsonl"
    models = [FIXTURES / "models" / "tiny-cnn", FIXTURES / "models" / "tiny-bert"]
    status = main(
        [
            "suggest",
            "--model",
            str(models[0]),
            "--model",
            str(models[1]),
            "--guide",
            str(models[1]),
            "--input",
            str(source),
            "--output",
            str(output),
            "--top-k",
            "2",
        ]
    )
    assert status == 0
    records = read_jsonl(output)
    assert [r["text"] for r in records] == TEXTS
    systems = {path.name: load_system(path) for path in models}
    for record in records:
        assert record["guide"] == "tiny-bert"
        kinds = ["probe" if s["probe"] else s["keeps_label"] for s in record["suggestions"]]
        assert all(kinds.count(kind) <= 2 for kind in (True, False, "probe"))
        assert all(s["label_unverified"] is (kind is False) for s, kind in
                   zip(record["suggestions"], kinds, strict=True))  # fmt: skip
        for probe in (s for s in record["suggestions"] if s["probe"]):
            # The output claims nothing for a probe: no kept label, no "meant to keep".
            assert probe["keeps_label"] is None and not probe["label_unverified"]
            assert "meant to" not in probe["rationale"], probe["rationale"]
        for suggestion in record["suggestions"]:
            for name, system in systems.items():
                outcome = suggestion["outcomes"][name]
                alone = system.predict([suggestion["text"]])
                assert outcome["label"] == alone.labels[0]
                np.testing.assert_allclose(
                    list(outcome["probabilities"].values()), alone.probabilities[0], atol=1e-6
                )


def test_suggest_gives_the_same_output_whatever_the_hash_seed(tmp_path):
    # Ties (in leverage, in projection, between embedding neighbours) are broken by position
    # and text, never by set or dict order: two interpreters with different hash seeds agree.
    source = tmp_path / "in.txt"
    source.write_text(
        "\n".join([*TEXTS, "The jokes are stale .", "The acting is weak .", "It has its flaws ."])
        + "\n",
        encoding="utf-8",
    )
    models = [FIXTURES / "models" / "tiny-cnn", FIXTURES / "models" / "tiny-bert"]
    outputs = []
    for seed in ("1", "2"):
        output = tmp_path / f"out-{seed}.jsonl"
        command = [sys.executable, "-m", "fim_engine", "suggest", "--input", str(source)]
        command += ["--model", str(models[0]), "--model", str(models[1])]
        command += ["--output", str(output), "--top-k", "3", "--words", "4", "--device", "cpu"]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(command, env=env, check=True, capture_output=True)
        outputs.append(output.read_bytes())
    assert outputs[0] == outputs[1]
    assert any(record["suggestions"] for record in map(json.loads, outputs[0].splitlines()))


def test_suggest_refuses_a_guide_that_is_not_a_model(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("a fine film\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        main(
            [
                "suggest",
                "--model",
                str(FIXTURES / "models" / "tiny-cnn"),
                "--guide",
                str(FIXTURES / "models" / "tiny-bow"),
                "--input",
                str(source),
                "--output",
                str(tmp_path / "out.jsonl"),
            ]
        )
    assert exited.value.code == 2
    assert "--guide" in capsys.readouterr().err


def test_suggest_without_wordnet_files_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("BIBI_WORDNET_DIR", str(tmp_path))
    source = tmp_path / "in.txt"
    source.write_text("a fine film\n", encoding="utf-8")
    arguments = [
        "suggest",
        "--model",
        str(FIXTURES / "models" / "tiny-cnn"),
        "--input",
        str(source),
        "--output",
        str(tmp_path / "out.jsonl"),
    ]
    with pytest.raises(SystemExit) as exited:
        main(arguments)
    assert exited.value.code == 2
    assert "wordnet-base" in capsys.readouterr().err
    assert not (tmp_path / "out.jsonl").exists()
    assert main([*arguments, "--source", "neighbour"]) == 0
    assert read_jsonl(tmp_path / "out.jsonl")[0]["text"] == "a fine film"


def test_importing_the_library_loads_neither_torch_nor_transformers():
    code = (
        "import sys, fim_engine, fim_engine.errors, fim_engine.datasets, fim_engine.qasrl\n"
        "assert 'torch' not in sys.modules and 'transformers' not in sys.modules\n"
        "assert issubclass(fim_engine.ModelFormatError, ValueError)\n"
        "assert 'torch' not in sys.modules\n"
        "fim_engine.load_system\n"
        "assert 'torch' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_type_checking_imports_name_every_public_name():
    import ast

    import fim_engine

    tree = ast.parse(Path(fim_engine.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"
    )
    imported = {
        (node.module, alias.name)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert {name for _, name in imported} == set(fim_engine.__all__)
    for module, name in imported:
        assert getattr(fim_engine, name) is getattr(__import__(module, fromlist=[name]), name)


def test_bench_suggest_trains_once_and_reports_flip_rates_by_lambda_decile(tmp_path):
    data = tmp_path / "sst2"
    data.mkdir()
    # Each has a word with a synonym that passes the fluency gate (movie, jokes).
    rows = [
        "1 i love this movie",
        "0 the jokes are stale",
        "1 a great movie",
        "0 the movie is dull",
    ]
    for split in ("train", "dev", "test"):
        (data / f"stsa.binary.{split}").write_text("\n".join(rows * 5) + "\n", encoding="utf-8")
    figures_file = tmp_path / "figures.json"
    arguments = ["bench-suggest", "--data-dir", str(data), "--models-dir", str(tmp_path / "m")]
    arguments += ["--arch", "bow", "--json", str(figures_file)]
    assert main(arguments) == 0
    figures = json.loads(figures_file.read_text())
    assert 0.0 <= figures["systems"]["bow"]["dev_accuracy"] <= 1.0
    assert "latency" not in figures, "latency is measured with a MiniLM guide only"
    for decile in ("bottom", "top"):
        row = figures["flips"]["bow"][decile]
        assert row["originals"] == 2
        assert row["preserving"] > 0
        assert 0.0 <= row["preserving_flip_any"] <= 1.0
        assert row["preserving_flip_guide"] == row["preserving_flip_any"]
    trained = (tmp_path / "m" / "bow" / "model.safetensors").stat().st_mtime
    assert main(arguments) == 0
    assert (tmp_path / "m" / "bow" / "model.safetensors").stat().st_mtime == trained


def test_predict_runs_in_the_precision_asked_for(tmp_path, capsys):
    source = tmp_path / "in.txt"
    source.write_text("\n".join(TEXTS) + "\n", encoding="utf-8")
    model = FIXTURES / "models" / "tiny-bert"
    arguments = ["predict", "--model", str(model), "--input", str(source), "--fisher"]
    main([*arguments, "--output", str(tmp_path / "bf16.jsonl"), "--precision", "bf16"])
    expected = load_system(model, precision="bf16").fisher(TEXTS, hints=False)
    records = read_jsonl(tmp_path / "bf16.jsonl")
    assert [r["lambda_max"] for r in records] == [e.lambda_max for e in expected]
    with pytest.raises(SystemExit):
        main([*arguments, "--output", str(tmp_path / "x.jsonl"), "--precision", "fp16"])
    assert "invalid choice: 'fp16'" in capsys.readouterr().err


def test_bench_times_baselines_with_more_labels(tmp_path, capsys):
    figures_file = tmp_path / "bench.json"
    arguments = ["bench", "--arch", "cnn", "--sentences", "8", "--repeats", "1"]
    assert (
        main([*arguments, "--labels", "3", "--alg1-sentences", "1", "--json", str(figures_file)])
        == 0
    )
    figures = json.loads(figures_file.read_text())
    assert figures["labels"] == 3
    assert figures["systems"]["cnn"]["alg1_max_relative_difference"] < 1e-3
    assert "3 labels" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*arguments, "--labels", "1"])
    assert "--labels must be at least 2, got 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*arguments, "--labels", "2;3"])
    assert "counts separated by commas (e.g. 2,3,5), got '2;3'" in capsys.readouterr().err


def test_bench_times_several_label_counts_in_one_run(tmp_path, capsys):
    figures_file = tmp_path / "bench.json"
    arguments = ["bench", "--arch", "cnn", "--sentences", "8", "--repeats", "2"]
    assert (
        main([*arguments, "--labels", "2,3", "--alg1-sentences", "0", "--json", str(figures_file)])
        == 0
    )
    figures = json.loads(figures_file.read_text())
    assert figures["labels"] == [2, 3]
    assert [(name, row["labels"]) for name, row in figures["systems"].items()] == [
        ("cnn/2", 2),
        ("cnn/3", 3),
    ]
    assert all(row["lambda_max_over_forward"] > 0 for row in figures["systems"].values())
    assert {row["lambda_max_pass"] for row in figures["systems"].values()} == {"autograd"}
    assert figures["load_average_before"] >= 0 and figures["repeats"] == 2
    out = capsys.readouterr().out
    ratios = [figures["systems"][f"cnn/{c}"]["lambda_max_over_forward"] for c in (2, 3)]
    assert f"cnn: C=2 {ratios[0]:.2f}x, C=3 {ratios[1]:.2f}x" in out
    assert "median of 2 interleaved repeats, load average" in out
