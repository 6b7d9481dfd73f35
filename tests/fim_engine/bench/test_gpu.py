"""``python -m fim_engine bench-gpu`` in its small CPU form: the tables' columns and figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from fim_engine.bench.gpu import COLUMNS, agreement, generated_sentences, grid_for, spearman
from fim_engine.cli import main

pytestmark = pytest.mark.slow


def test_the_small_cpu_form_prints_every_cell_and_writes_json(tmp_path, capsys):
    figures_file = tmp_path / "bench-gpu.json"
    arguments = ["bench-gpu", "--small", "--sentences", "8", "--device", "cpu"]
    # A budget no run on any machine reaches: nothing is skipped, so every cell is checked.
    assert main([*arguments, "--budget-s", "86400", "--json", str(figures_file)]) == 0
    out = capsys.readouterr().out
    assert "| " + " | ".join(COLUMNS) + " |" in out
    figures = json.loads(figures_file.read_text())
    assert figures["skipped"] == []
    grid = grid_for("small", torch.device("cpu"))
    cells = len(grid.sizes) * len(grid.labels) * len(grid.batch_sizes) * len(grid.precisions)
    assert len(figures["rows"]) == cells
    for row in figures["rows"]:
        assert row["forward_per_s"] > 0 and row["lambda_max_per_s"] > 0
        assert f"| {row['model']} | {row['labels']} | {row['batch']} | {row['precision']} |" in out
        if row["precision"] == "fp32":
            assert "spearman" not in row
        elif row["precision"] == "tf32":  # a no-op on CPU
            assert row["p99_relative_error"] == 0.0 and row["spearman"] == pytest.approx(1.0)
        else:
            assert 0 < row["p50_relative_error"] <= row["p99_relative_error"] < 0.1
    assert [d["model"] for d in figures["dense"]] == list(grid.sizes)
    assert all(d["max_relative_difference"] < 1e-5 for d in figures["dense"])


def test_agreement_and_spearman():
    reference = np.array([1.0, 2.0, 3.0, 4.0])
    assert spearman(reference, reference * 10) == pytest.approx(1.0)
    assert spearman(reference, -reference) == pytest.approx(-1.0)
    figures = agreement(np.array([1.1, 2.0, 3.0, 4.0]), reference)
    assert figures["p50_relative_error"] == 0.0
    assert figures["p99_relative_error"] == pytest.approx(0.1 * 0.97, rel=1e-6)


def test_generated_sentences_are_repeatable_and_bounded():
    sentences = generated_sentences(50)
    assert sentences == generated_sentences(50)
    assert all(3 <= len(s.split()) <= 45 for s in sentences)


def test_a_bad_budget_or_size_is_refused(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["bench-gpu", "--small", "--budget-s", "0"])
    assert exit_info.value.code == 2
    assert "--budget-s must be positive" in capsys.readouterr().err
