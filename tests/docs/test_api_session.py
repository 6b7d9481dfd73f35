"""docs/api.md's curl session, run as written against a fresh site on the embedded default."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys

import pytest

from .conftest import REPO_ROOT, code_blocks

pytestmark = pytest.mark.slow


def _block(option: str) -> str:
    (block,) = [b for b in code_blocks("api.md") if b.options.get(option) == "session"]
    return block.text


def _csv_rows(lines: list[str], header_start: str) -> list[dict[str, str]]:
    """The CSV table whose header line begins with ``header_start``, up to the next table."""
    start = next(i for i, line in enumerate(lines) if line.startswith(header_start))
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].startswith("rank,")), len(lines)
    )
    return list(csv.DictReader(io.StringIO("\n".join(lines[start:end]))))


@pytest.mark.skipif(
    not (shutil.which("curl") and shutil.which("jq")), reason="the session needs curl and jq"
)
def test_the_api_session_runs_a_task_to_a_published_leaderboard(embedded_site):
    result = subprocess.run(
        ["bash", "-c", _block("run")],
        cwd=REPO_ROOT,
        env={**os.environ, "BIBI": embedded_site.url, "PYTHON": sys.executable},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, (
        f"{result.stdout}\n{result.stderr}\n{embedded_site.log()[-3000:]}"
    )
    printed = result.stdout.splitlines()
    shown = _block("output").splitlines()

    # Every step's answer is as the page shows it; the hosted model's figures depend on its
    # training, so its rows are compared on their names and counts only.
    steps = [line for line in shown if not line.startswith(("1,", "2,"))]
    assert [line for line in printed if not line.startswith(("1,", "2,"))] == steps

    builders = _csv_rows(printed, "rank,system,")
    assert sorted((r["system"], r["kind"], r["pairs"]) for r in builders) == [
        ("Lexicon Lab / bow", "hosted", "5"),
        ("Lexicon Lab / lexicon", "self_reported", "5"),
    ]
    lexicon = next(r for r in builders if r["system"] == "Lexicon Lab / lexicon")
    shown_lexicon = next(
        r for r in _csv_rows(shown, "rank,system,") if r["system"] == "Lexicon Lab / lexicon"
    )
    assert {k: v for k, v in lexicon.items() if k != "rank"} == {
        k: v for k, v in shown_lexicon.items() if k != "rank"
    }
    # The word list knows no negation: two of the five pairs break it, one it gets wrong twice.
    assert (lexicon["breaks"], lexicon["both_wrong"], lexicon["weight_source"]) == (
        "2",
        "1",
        "blind_dev",
    )
    (breakers,) = _csv_rows(printed, "rank,team,")
    assert (breakers["rank"], breakers["team"], breakers["pairs"]) == ("1", "Negators", "5")
