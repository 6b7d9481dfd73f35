"""The tuning and the sealed sentences of the machine-made edits (issue 32), fixed before any
rule is tuned: a sentence belongs to one side by a keyed hash of its own text, so a repeated
sentence never lands on both sides and the split does not depend on file order.

    .venv/bin/python scripts/language_sets.py tune   # writes var/language/tune-*.tsv
    .venv/bin/python scripts/language_sets.py sealed # writes var/language/sealed-*.tsv (judging only)

Rules are tuned on the ``tune`` files alone. The ``sealed`` files are written once, when the
rules are final, read by the judge, and reported; nobody who tunes reads them. Each side is
drawn from text no earlier rule was tuned on, as far as the project knows:

- ``sst2``: SST-2 *train* sentences (the earlier rules read the dev and test splits and the
  demo's fixtures), with their labels; the sealed sample is 300 sentences;
- ``nli``: hypotheses of nli-cad ``revised_combined/train.tsv`` (crowd revisions; the demo and
  the tests read ``original/``) with their premise and label; the sealed sample is 100 pairs;
- ``qasrl``: sentences of ``wiki1.train.qa`` after the first 400 (the demo reads the first
  361), with one question each; the sealed sample is 100 sentences.

The files hold the shared data's text only under ``var/`` (ignored by git), never in the
project. The judged samples kept as regression data name each item by its file and line.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import random
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT.parent / "shared" / "data"
OUT = REPO_ROOT / "var" / "language"
KEY = "bibi-language-sets-2026-11-29"
SEALED_SIZES = {"sst2": 300, "nli": 100, "qasrl": 100}
SAMPLE_SEED = 20261129


def side(text: str) -> str:
    """``"tune"`` or ``"sealed"``: the first byte of a keyed SHA-256 of the text, by parity."""
    digest = hashlib.sha256(f"{KEY}\n{text}".encode()).digest()
    return "sealed" if digest[0] % 2 else "tune"


def sst2_rows() -> list[tuple[str, str, str]]:
    """(source line, label, sentence) of SST-2 train."""
    path = SHARED / "sst2" / "stsa.binary.train"
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        label, _, sentence = line.partition(" ")
        rows.append((f"stsa.binary.train:{number}", label, sentence))
    return rows


def nli_rows() -> list[tuple[str, str, str, str]]:
    """(source line, label, premise, hypothesis) of the revised hypotheses, keyed on the
    hypothesis (those of ``original/`` left out)."""
    originals: set[str] = set()
    for name in ("train.tsv", "dev.tsv", "test.tsv"):
        with (SHARED / "nli-cad" / "original" / name).open(encoding="utf-8", newline="") as f:
            originals.update(row["sentence2"] for row in csv.DictReader(f, delimiter="\t"))
    rows = []
    path = SHARED / "nli-cad" / "revised_combined" / "train.tsv"
    with path.open(encoding="utf-8", newline="") as f:
        for number, row in enumerate(csv.DictReader(f, delimiter="\t"), start=2):
            if row["sentence2"] not in originals:
                rows.append(
                    (
                        f"revised_combined/train.tsv:{number}",
                        row["gold_label"],
                        row["sentence1"],
                        row["sentence2"],
                    )
                )
    return rows


def qasrl_rows() -> list[tuple[str, str, str, str]]:
    """(source line, predicate, sentence, first question) of wiki1.train after its first 400
    sentences."""
    sys.path.insert(0, str(REPO_ROOT))
    from fim_engine.qasrl import read_qa

    reading = read_qa(SHARED / "qasrl" / "wiki1.train.qa")
    seen: dict[str, tuple[str, str, str, str]] = {}
    for record in reading.records:
        if record.sentence_id not in seen:
            seen[record.sentence_id] = (
                f"wiki1.train.qa:{record.line}",
                record.predicate,
                record.text,
                record.question,
            )
    return list(seen.values())[400:]


def write(which: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    sources: dict[str, list[tuple[str, ...]]] = {
        "sst2": list(sst2_rows()),
        "nli": list(nli_rows()),
        "qasrl": list(qasrl_rows()),
    }
    for name, rows in sources.items():
        text_at = 3 if name == "nli" else 2  # the text that is edited decides the side
        mine = [row for row in rows if side(row[text_at]) == which]
        if which == "sealed":
            mine = random.Random(SAMPLE_SEED).sample(mine, SEALED_SIZES[name])
        path = OUT / f"{which}-{name}.tsv"
        with path.open("w", encoding="utf-8", newline="") as f:
            csv.writer(f, delimiter="\t", lineterminator="\n").writerows(mine)
        print(f"{path}: {len(mine)} rows")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", choices=["tune", "sealed"])
    write(parser.parse_args(argv).which)
    return 0


if __name__ == "__main__":
    sys.exit(main())
