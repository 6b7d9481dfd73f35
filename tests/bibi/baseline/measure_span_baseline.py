"""A measurement, not a test (pytest does not collect it; no assertion on time): where
``manage.py baseline_breaker`` spends its time on a span task. Run it alone, on a quiet
machine:

    pytest tests/bibi/baseline/measure_span_baseline.py -s -p no:randomly

The task is the span cast over its starter items and the 13 sentences of the demo's QA-SRL
pairs (``fixtures/demo-qasrl/pairs.jsonl``, one question each), with the suite's tiny QA
model, so the models cost little and what is left shows. Two runs in one process: the first
as a fresh worker's (its one-time table loads included), then a warm worker's. Each prints
its wall time and the calls and cumulative seconds of the functions that matter; the figures
are in ``platform/bibi/baseline/README.md``.
"""

from __future__ import annotations

import cProfile
import json
import pstats
import time
from io import StringIO

from django.core.management import call_command

from edits.wordnet import load_wordnet

from ...conftest import REPO_ROOT
from ..pairs.conftest import start_phase_now
from ..spancast import QA_BLIND_DEV, QA_STARTER, build_span_cast, upload_and_validate

WATCHED = "span_candidates_make|span_perturbations|answer_scores|lemma_count|predict|fisher"


def test_measure_the_span_baseline_breaker(db, qa_dir):
    rows = list(QA_STARTER)
    with open(REPO_ROOT / "fixtures" / "demo-qasrl" / "pairs.jsonl") as lines:
        for n, line in enumerate(lines):
            pair = json.loads(line)
            text, answer = pair["variant_text"], pair["variant_answers"][0]
            rows.append((f"demo{n}", text, "what ?", None, "", [answer]))
    cast = build_span_cast(current_phase="build", starter=rows, blind_dev=QA_BLIND_DEV)
    upload_and_validate(cast, qa_dir)
    start_phase_now(cast.shared_task, "break")
    load_wordnet()  # a worker opens it once, whatever it runs
    for run in ("fresh worker", "warm worker"):
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        call_command("baseline_breaker", "qasrl", "--team", "Baseline", stdout=StringIO())
        profile.disable()
        print(f"\n{run}: {time.perf_counter() - started:.2f} s over {len(rows)} starter items")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(WATCHED)
