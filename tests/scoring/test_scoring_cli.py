"""`python -m scoring`: files in, JSON or Markdown out, exit status 2 on bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from scoring import read_predictions, read_table
from scoring.cli import main

REPO_ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path, overview_2017):
    pairs, predictions = overview_2017
    paths = {
        "pairs": tmp_path / "pairs.csv",
        "predictions": tmp_path / "predictions.tsv",
        "weights": tmp_path / "weights.csv",
    }
    pairs.to_csv(paths["pairs"], index=False)
    predictions.to_csv(paths["predictions"], sep="\t", index=False)
    systems = sorted(predictions["system"].unique())
    pd.DataFrame({"system": systems, "weight": [0.8] * len(systems)}).to_csv(
        paths["weights"], index=False
    )
    return paths


def arguments(files, *extra: str) -> list[str]:
    return ["--pairs", str(files["pairs"]), "--predictions", str(files["predictions"]), *extra]


def test_it_prints_the_report_as_json(files, capsys):
    assert main(arguments(files, "--weights", str(files["weights"]))) == 0

    document = json.loads(capsys.readouterr().out)
    assert {"builders", "breakers", "matrix", "items", "tags"} <= set(document)
    assert document["settings"] == {"weight": "dev_accuracy", "break_rate": "pairs"}
    osu = next(row for row in document["breakers"] if row["team"] == "OSU")
    assert osu["score"] == pytest.approx(0.8 * 500 / 6)


def test_it_writes_markdown_to_a_file(files, tmp_path):
    out = tmp_path / "report.md"

    status = main(
        arguments(
            files,
            "--weight",
            "none",
            "--break-rate",
            "sentences",
            "--format",
            "markdown",
            "--out",
            str(out),
        )
    )

    assert status == 0
    text = out.read_text()
    assert text.startswith("# Scoring report") and "break rate per `sentences`" in text


def test_a_label_set_can_be_given(files, capsys):
    assert main(arguments(files, "--weight", "none", "--labels=-1,0,1")) == 0

    document = json.loads(capsys.readouterr().out)
    assert document["labels"] == ["-1", "0", "1"]
    assert document["outside_label_set"] == []


def test_bad_input_exits_with_2_and_a_clear_message(files, capsys):
    assert main(arguments(files)) == 2

    error = capsys.readouterr().err
    assert error.startswith("python -m scoring: error: weight mode 'dev_accuracy' needs weights")


def test_a_missing_prediction_is_reported_with_its_system_and_text(files, capsys):
    predictions = pd.read_csv(files["predictions"], sep="\t")
    predictions.iloc[1:].to_csv(files["predictions"], sep="\t", index=False)

    assert main(arguments(files, "--weight", "none")) == 2

    assert (
        "system 'Strawman' has no prediction for text 'Through elliptical"
        in capsys.readouterr().err
    )


def test_a_missing_or_unknown_file_is_reported(files, tmp_path, capsys):
    assert (
        main(["--pairs", str(tmp_path / "nope.csv"), "--predictions", str(files["predictions"])])
        == 2
    )
    assert "pairs file" in (error := capsys.readouterr().err) and "does not exist" in error
    assert (
        main(["--pairs", str(tmp_path / "pairs.xlsx"), "--predictions", str(files["predictions"])])
        == 2
    )
    assert "name it .csv or .tsv" in capsys.readouterr().err


def test_an_unknown_mode_is_refused_by_the_command_line(files, capsys):
    with pytest.raises(SystemExit) as exit:
        main(arguments(files, "--weight", "f1"))

    assert exit.value.code == 2
    assert "invalid choice: 'f1'" in capsys.readouterr().err


def test_python_dash_m_scoring_runs_as_a_module(files):
    completed = subprocess.run(
        [sys.executable, "-m", "scoring", *arguments(files, "--weight", "original_f1")],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
    )

    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["settings"]["weight"] == "original_f1"


def test_the_library_never_imports_django():
    code = "import sys, scoring, scoring.cli, scoring.bench; print('django' in sys.modules)"

    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )

    assert completed.stdout.strip() == "False"


def test_the_bench_subcommand_times_a_small_synthetic_task(capsys):
    assert main(["bench", "--systems", "3", "--pairs", "40", "--teams", "2"]) == 0

    output = capsys.readouterr().out
    assert output.startswith("3 systems × 40 pairs (2 teams")
    for phase in (
        "read CSV files",
        "score()",
        "to_dict()",
        "json.dumps()",
        "end to end",
        "peak RSS",
    ):
        assert phase in output


def test_cells_are_read_as_written(tmp_path):
    path = tmp_path / "predictions.csv.gz"
    frame = pd.DataFrame(
        {"system": ["S"], "text": ['NA, said "the critic"'], "label": ["+1"], "lambda_max": [""]}
    )
    frame.to_csv(path, index=False)

    read = read_predictions(path)

    assert read.loc[0, "text"] == 'NA, said "the critic"'
    assert read.loc[0, "label"] == "+1"
    assert pd.isna(read.loc[0, "lambda_max"])


def test_a_number_column_that_does_not_parse_is_read_as_text_for_the_scorer_to_name(tmp_path):
    path = tmp_path / "predictions.tsv"
    path.write_text("system\ttext\tlabel\tlambda_max\nS\tgood\t1\tsteep\n")

    assert read_predictions(path).loc[0, "lambda_max"] == "steep"
    assert read_table(path).loc[0, "label"] == "1"


def test_it_leaves_out_the_pairs_of_an_unseen_file(files, tmp_path, capsys):
    unseen = tmp_path / "unseen.csv"
    pd.DataFrame({"system": ["RNTN"], "pair_id": ["OSU 1"]}).to_csv(unseen, index=False)

    assert main(arguments(files, "--weight", "none", "--unseen", str(unseen))) == 0

    document = json.loads(capsys.readouterr().out)
    rntn = next(row for row in document["builders"] if row["system"] == "RNTN")
    assert rntn["unseen"] == 1
    item = next(row for row in document["items"] if row["pair_id"] == "OSU 1")
    assert item["unseen"] == ["RNTN"]
