"""``manage.py score`` and ``manage.py export_results``."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.management import CommandError, call_command

from bibi.evaluation.models import Snapshot

from .conftest import assert_leaderboards_match, direct_report, upload_self_reported_pairs

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def test_score_computes_the_missing_cells_here_then_scores_and_publishes(scored_task):
    upload_self_reported_pairs(scored_task)
    out = io.StringIO()

    call_command("score", "sst", "--publish", stdout=out, stderr=io.StringIO())

    snapshot = Snapshot.objects.get()
    assert snapshot.published_at is not None
    assert "14 cells computed" in out.getvalue()
    assert f"Published snapshot {snapshot.id}" in out.getvalue()
    assert_leaderboards_match(snapshot.tables, direct_report(scored_task))


def test_score_says_which_systems_it_left_out(scored_task):
    out = io.StringIO()

    call_command("score", "sst", stdout=out, stderr=io.StringIO())

    assert "Not scored: system by hand: no predictions for the pair texts yet." in out.getvalue()
    assert Snapshot.objects.get().published_at is None


def test_score_refuses_an_unknown_task(db):
    with pytest.raises(CommandError, match="No shared task has the slug 'nope'"):
        call_command("score", "nope")


def test_export_results_writes_every_table_with_real_names(scored_task, tmp_path):
    from bibi.sharedtasks.models import Team

    Team.objects.filter(id=scored_task.osu.id).update(is_anonymous=True, alias="Breaker X")
    upload_self_reported_pairs(scored_task)
    call_command("score", "sst", "--publish", stdout=io.StringIO(), stderr=io.StringIO())

    call_command("export_results", "sst", str(tmp_path / "out"), stdout=io.StringIO())

    written = {path.name for path in (tmp_path / "out").iterdir()}
    assert {"README.md", "snapshot.json", "builders.csv", "items.csv", "failures.csv"} <= written
    breakers = list(csv.DictReader((tmp_path / "out" / "breakers.csv").open()))
    assert {row["team"] for row in breakers} == {"Utrecht", "OSU"}


def test_export_results_needs_a_published_snapshot_or_a_named_one(scored_task, tmp_path):
    with pytest.raises(CommandError, match="Nothing is published"):
        call_command("export_results", "sst", str(tmp_path))
    with pytest.raises(CommandError, match="The task has no snapshot 999"):
        call_command("export_results", "sst", str(tmp_path), "--snapshot", "999")
