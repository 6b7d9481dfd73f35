"""The 10,000-pair benchmark: one request checks and stores it, in bulk, in a few seconds."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from bibi.pairs.layouts import read_pair_file
from bibi.pairs.management.commands.bench_pair_sets import pair_file, run_benchmark
from bibi.pairs.models import Pair, PairSet

pytestmark = pytest.mark.django_db

# Generous: the figure on the project's PostgreSQL is well under this (see the README).
SECONDS = 15


def test_a_10000_pair_file_is_checked_and_stored_in_one_request_in_a_few_seconds():
    result = run_benchmark(pairs=10_000, starter=2_000)
    assert result.status_code == 201
    assert result.seconds < SECONDS
    # Bulk writes: the query count does not grow with the number of pairs.
    assert result.queries < 60
    assert not PairSet.objects.exists() and not Pair.objects.exists()


def test_the_benchmark_file_repeats_no_variant():
    _, data = pair_file(pairs=3_000, starter=500)
    pairs = read_pair_file(data, filename="bench.csv").pairs
    assert len({pair.variant_text for pair in pairs}) == 3_000


def test_the_command_prints_the_figure(capsys):
    call_command("bench_pair_sets", "--pairs", "200", "--starter", "50")
    assert "200 pairs" in capsys.readouterr().out
