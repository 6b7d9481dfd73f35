"""The pair-set benchmark (``make bench``) as a check of what it measures, not of its time:
one request checks and stores a big file in bulk, and leaves nothing behind."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from bibi.bench.management.commands.bench_pair_sets import pair_file, run_benchmark
from bibi.pairs.models import Pair, PairSet
from bibi.tasktypes.pair_files import read_pair_file

pytestmark = pytest.mark.django_db


def test_the_benchmark_upload_costs_the_same_queries_for_200_pairs_as_for_2000():
    small = run_benchmark(pairs=200, starter=100)
    large = run_benchmark(pairs=2_000, starter=500)
    assert small.status_code == large.status_code == 201
    # Bulk writes: the query count does not grow with the number of pairs.
    assert large.queries == small.queries
    assert not PairSet.objects.exists() and not Pair.objects.exists()


def test_the_benchmark_file_repeats_no_variant():
    _, data = pair_file(pairs=3_000, starter=500)
    pairs = read_pair_file(data, filename="bench.csv").pairs
    assert len({pair.variant_text for pair in pairs}) == 3_000


def test_the_command_prints_the_figure(capsys):
    call_command("bench_pair_sets", "--pairs", "200", "--starter", "50")
    assert "200 pairs" in capsys.readouterr().out
