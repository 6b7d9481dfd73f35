"""The 2017 task's structure replayed on this project's fixtures with the "2017 sentiment
replay" preset: hosted builders and a self-reported one, two breaker teams with tagged pairs
that keep or change the label, scored per sentence with original-F1 weights. The platform's
snapshot and its pages give the tables ``scoring`` computes directly with those modes."""

from __future__ import annotations

import re

import pytest

from bibi.evaluation.models import Snapshot
from bibi.sharedtasks.services.presets import shared_task_preset_apply

from ..evaluation.conftest import (
    assert_leaderboards_match,
    build_scored_task,
    direct_report,
    score_now,
    upload_self_reported_pairs,
)
from .test_result_pages import get, page_text, publish

ANON = "anonymous"


@pytest.fixture
def replayed(db):
    task = build_scored_task()
    shared_task_preset_apply(
        shared_task=task.shared_task, actor=task.cast.organizer, key="2017-sentiment-replay"
    )
    task.shared_task.refresh_from_db()
    assert (task.shared_task.weight_mode, task.shared_task.break_rate_mode) == (
        "original_f1",
        "sentences",
    )
    upload_self_reported_pairs(task)
    run = score_now(task)
    assert run.status == "done", run.failure_reason
    publish(task)
    return task


def test_the_snapshot_has_the_tables_scoring_computes_with_the_2017_modes(replayed):
    snapshot = Snapshot.objects.get()
    expected = direct_report(replayed)
    assert (expected.weight, expected.break_rate) == ("original_f1", "sentences")
    assert snapshot.settings_used["weight_mode"] == "original_f1"
    assert snapshot.settings_used["break_rate_mode"] == "sentences"
    # Every system was scored, the self-reported one included.
    assert len(snapshot.tables["builders"]) == 3
    assert_leaderboards_match(snapshot.tables, expected)

    applied = {
        (breaker["team_id"], cell["system_id"]): cell
        for breaker in snapshot.tables["breakers"]
        for cell in breaker["by_system"]
    }
    for row in expected.breaker_systems.to_dict("records"):
        mine = applied[(int(row["team"]), int(row["system"]))]
        assert mine["weight"] == pytest.approx(row["weight"]), row
        assert mine["broken_pct"] == pytest.approx(row["broken_pct"]), row

    matrix = snapshot.tables["matrix"]
    for team, values in zip(matrix["team_ids"], matrix["broken_pct"], strict=True):
        for system, value in zip(matrix["system_ids"], values, strict=True):
            assert value == pytest.approx(expected.matrix.loc[str(team), str(system)])

    for key, column in (("tags", "tag"), ("flips", "kind")):
        mine = {row[column]: row for row in snapshot.tables[key]}
        frame = getattr(expected, key)
        assert set(mine) == set(frame[column])
        for row in frame.to_dict("records"):
            assert mine[row[column]]["breaks"] == row["breaks"], (key, row)
            assert mine[row[column]]["broken_pct"] == pytest.approx(row["broken_pct"]), (key, row)


def table_rows(page: str, caption_id: str) -> list[list[str]]:
    """The text of each body cell of the table captioned ``caption_id``, row by row."""
    body = page.split(f'id="{caption_id}"')[1].split("<tbody>")[1].split("</tbody>")[0]
    return [
        [
            re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", cell)).strip()
            for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row, flags=re.S)
        ]
        for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)
    ]


def test_the_pages_print_the_direct_scores_in_per_sentence_units(replayed):
    expected = direct_report(replayed)
    names = {
        replayed.cnn.id: "Strawman / cnn",
        replayed.bow.id: "Melbourne / bow",
        replayed.by_hand.id: "Strawman / by hand",
    }
    board = get(replayed, ANON, "").content.decode()
    assert "Broken per sentence (%)" in board
    printed = {row[1]: row[3] for row in table_rows(board, "builders-caption")}
    assert printed == {
        names[int(row["system"])]: f"{row['broken_pct']:.1f}"
        for row in expected.builders.to_dict("records")
    }
    scores = {row[1]: row[2] for row in table_rows(board, "breakers-caption")}
    teams = {replayed.cast.breaker_team.id: "Utrecht", replayed.osu.id: "OSU"}
    assert scores == {
        teams[int(row["team"])]: f"{row['score']:.2f}"
        for row in expected.breakers.to_dict("records")
    }

    matrix = get(replayed, ANON, "matrix/").content.decode()
    assert "Breaks per sentence (%)" in page_text(get(replayed, ANON, "matrix/"))
    heat = {row[0]: row[1:] for row in table_rows(matrix, "matrix-caption")}
    assert heat == {
        teams[int(team)]: [f"{value:.1f}" for value in values]
        for team, values in zip(expected.matrix.index, expected.matrix.to_numpy(), strict=True)
    }
