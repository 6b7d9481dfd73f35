"""Counts of the machine-made edits on the tuning sentences of issue 32 (not collected by pytest).

    .venv/bin/python scripts/language_sets.py tune
    .venv/bin/python scripts/measure_language.py OUT.tsv [LIMIT]

Reads ``var/language/tune-*.tsv`` only (never the sealed files), runs ``name_swaps``,
``negation_edits`` (probes=True where the generator offers probes) and ``synonym_swaps`` on
each sentence (SST-2 sentences, NLI hypotheses, QA-SRL sentences), prints the edits per 100
sentences of each set and writes every edit, one a line, to OUT.tsv for judging by hand.
"""

from __future__ import annotations

import csv
import inspect
import sys
from pathlib import Path

from edits.perturbations import name_swaps, negation_edits, synonym_swaps

ROOT = Path(__file__).resolve().parents[1] / "var" / "language"
TEXT_COLUMN = {"sst2": 2, "nli": 3, "qasrl": 2}


def main() -> None:
    out = Path(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 10**9
    probes = "probes" in inspect.signature(negation_edits).parameters
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t")
        for name, column in TEXT_COLUMN.items():
            with (ROOT / f"tune-{name}.tsv").open(encoding="utf-8", newline="") as f:
                rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[:limit]
            counts = {"name": 0, "negation": 0, "negation-probe": 0, "synonym": 0}
            for row in rows:
                text = row[column]
                made = name_swaps(text) + synonym_swaps(text)
                made += negation_edits(text, probes=True) if probes else negation_edits(text)
                for p in made:
                    key = p.source + ("-probe" if p.probe else "")
                    counts[key] = counts.get(key, 0) + 1
                    writer.writerow([name, row[0], row[1], key, text, p.text, p.rationale])
            per100 = {k: round(100 * v / len(rows), 1) for k, v in counts.items()}
            print(name, len(rows), "sentences; per 100:", per100)


if __name__ == "__main__":
    main()
