"""``python -m fim_engine train --arch minilm-span`` and ``bench-span`` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
import torch

from fim_engine.cli import main
from fim_engine.span_model import check_span_model_dir, load_span_system

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "qasrl"


@pytest.fixture(scope="module")
def qa_dir(tmp_path_factory: pytest.TempPathFactory, builders: ModuleType) -> Path:
    from transformers import BertForQuestionAnswering

    torch.manual_seed(5)
    out = tmp_path_factory.mktemp("tiny-qa")
    BertForQuestionAnswering(builders.tiny_bert_config(2)).save_pretrained(out)
    builders.tiny_tokenizer().save_pretrained(out)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("suffix", ["qa", "tsv"])
def test_train_minilm_span_writes_an_uploadable_qa_directory_and_its_dev_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    data = FIXTURES / f"sample.{suffix}"
    out = tmp_path / "minilm-span"
    arguments = ["train", "--arch", "minilm-span", "--train", str(data), "--dev", str(data)]
    options = ["--out", str(out), "--max-steps", "2", "--batch-size", "4", "--max-length", "64"]
    assert main([*arguments, *options]) == 0
    printed = capsys.readouterr().out
    assert "exact" in printed and "2017 overlap" in printed and "after 2 steps" in printed
    assert check_span_model_dir(out) == "BertForQuestionAnswering"
    system = load_span_system(out, device="cpu")
    answer = system.predict(["who finished something ?"], ["UCD finished the championship ."])[0]
    assert (
        answer.text and answer.text == "UCD finished the championship ."[answer.start : answer.end]
    )


def test_train_minilm_span_refuses_a_file_without_a_record(tmp_path: Path) -> None:
    empty = tmp_path / "empty.qa"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "train",
                "--arch",
                "minilm-span",
                "--train",
                str(empty),
                "--dev",
                str(empty),
                "--out",
                str(tmp_path / "out"),
            ]
        )
    assert exit_info.value.code == 2


def test_bench_span_times_lambda_max_against_a_forward_pass(
    qa_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    figures_path = tmp_path / "span.json"
    arguments = ["bench-span", "--model", str(qa_dir), "--data", str(FIXTURES / "sample.qa")]
    options = ["--pairs", "3", "--batch-size", "2", "--device", "cpu", "--json", str(figures_path)]
    assert main([*arguments, *options]) == 0
    figures = json.loads(figures_path.read_text(encoding="utf-8"))
    assert figures == json.loads(capsys.readouterr().out)
    assert figures["pairs"] == 3 and figures["device"] == "cpu" and figures["batch_size"] == 2
    assert figures["forward_s"] > 0 and figures["lambda_s"] > 0
    assert figures["ratio"] == pytest.approx(figures["lambda_s"] / figures["forward_s"])
    assert figures["mean_steps"] >= 1
