"""One writer for every CSV the platform writes (``bibi.files.csv_out``): a cell starting like
a formula is neutralised in every file a person downloads, and the prefix comes off again."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest

from bibi.evaluation import exports
from bibi.files import RowError, csv_text, neutralized, refused_rows_csv, restored

PLATFORM = Path(__file__).resolve().parents[2] / "platform"
FORMULAS = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "@SUM(1+1)", "-2+3+cmd"]


def refused_csv(cell: str) -> str:
    return refused_rows_csv([RowError(2, cell, "label")], f"h\n{cell}\n")


WRITERS = {
    "refused rows": refused_csv,
    "exports": lambda cell: exports.csv_text(["column"], [[cell]]),
    "csv_text": lambda cell: csv_text(["column"], [[cell]]),
}


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("formula", FORMULAS)
def test_every_writer_neutralises_formulas(writer, formula):
    cells = [cell for row in csv.reader(io.StringIO(WRITERS[writer](formula))) for cell in row]
    assert formula not in cells
    assert "'" + formula in cells


def test_csv_writer_is_the_only_csv_writer_of_the_platform():
    writers = re.compile(r"\bcsv\.(writer|DictWriter)\(")
    found = [
        str(path.relative_to(PLATFORM))
        for path in PLATFORM.rglob("*.py")
        if writers.search(path.read_text(encoding="utf-8"))
    ]
    assert found == ["bibi/files/csv_out.py"]


@pytest.mark.parametrize(
    "text",
    [*FORMULAS, "-1", "'=1", "''-x", "'quoted'", "- a sentence", "= a sentence", "plain", ""],
)
def test_neutralising_is_undone_on_upload(text):
    assert restored(neutralized(text)) == text


def test_plain_numbers_are_left_as_they_are():
    assert neutralized("-1") == "-1"
    assert neutralized("+1.5e3") == "+1.5e3"
