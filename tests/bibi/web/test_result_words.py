"""Results that say what they show: units that follow the break-rate mode, the weights the
breaker scores applied, the settings each snapshot was scored with, a confirmation before an
older snapshot is published, and a λmax page that explains the systems without λmax."""

from __future__ import annotations

import re

import pytest

from bibi.evaluation.models import Snapshot
from bibi.sharedtasks import services as task_services

from ..conftest import ROLES
from ..evaluation.conftest import build_scored_task, score_now, upload_self_reported_pairs
from .conftest import TASK, page_client
from .test_result_pages import get, page_text, publish

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES
SCORING = f"{TASK}organize/scoring/"


def set_modes(task, **modes) -> None:
    task_services.shared_task_update(
        shared_task=task.shared_task, actor=task.cast.organizer, **modes
    )


@pytest.fixture
def per_sentence(db):
    """The scored task with the 2017 modes (per sentence, original-F1 weights), published."""
    task = build_scored_task()
    set_modes(task, weight_mode="original_f1", break_rate_mode="sentences")
    assert score_now(task).status == "done"
    publish(task)
    return task


def test_per_sentence_rates_are_called_per_sentence_everywhere(per_sentence):
    board = page_text(get(per_sentence, ANON, ""))
    assert "Broken per sentence (%)" in board and "Pairs broken (%)" not in board
    assert "breaks ÷ sentences, two sentences a pair" in board
    matrix = page_text(get(per_sentence, ANON, "matrix/"))
    assert "Breaks per sentence (%) of each breaker team" in matrix
    assert "% of each breaker team's pairs" not in matrix
    assert "% broken by strategy tag, per sentence" in matrix


def test_per_pair_rates_keep_their_pair_wording(scored_and_published):
    board = page_text(get(scored_and_published, ANON, ""))
    assert "Pairs broken (%)" in board and "per sentence" not in board
    matrix = page_text(get(scored_and_published, ANON, "matrix/"))
    assert "% of each breaker team's pairs (rows)" in matrix


@pytest.fixture
def scored_and_published(db):
    task = build_scored_task()
    assert score_now(task).status == "done"
    publish(task)
    return task


def builder_weight_cells(response) -> dict[str, str]:
    table = response.content.decode().split('id="builders-caption"')[1].split("</tbody>")[0]
    cells = {}
    for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]:
        system = re.search(r"<td>((?:Strawman|Melbourne) / \w+)</td>", row).group(1)
        cells[system] = re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)[-1]
    return cells


def test_the_weight_column_shows_the_per_team_weights_the_scores_applied(per_sentence):
    snapshot = Snapshot.objects.get()
    applied = {
        (breaker["team_id"], cell["system_id"]): cell["weight"]
        for breaker in snapshot.tables["breakers"]
        for cell in breaker["by_system"]
    }
    dev = {row["system_id"]: row["weight"] for row in snapshot.tables["builders"]}
    cells = builder_weight_cells(get(per_sentence, ANON, ""))
    teams = {per_sentence.cast.breaker_team.id: "Utrecht", per_sentence.osu.id: "OSU"}
    named = [(per_sentence.cnn, "Strawman / cnn"), (per_sentence.bow, "Melbourne / bow")]
    for system, name in named:
        cell = html_text(cells[name])
        weights = [applied[(team, system.id)] for team in teams]
        # Per-team original-F1 weights differ from the dev-accuracy weight the row stores.
        assert weights != [dev[system.id]] * len(weights)
        mean = sum(weights) / len(weights)
        assert cell.startswith(f"{mean:.3f}"), cell
        for team, label in teams.items():
            assert f"{label} {applied[(team, system.id)]:.3f}" in cell, cell
    assert "F1 on each team's originals (mean)" in page_text(get(per_sentence, ANON, ""))


def html_text(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment)).strip()


def test_unweighted_scores_show_a_weight_of_one(db):
    task = build_scored_task()
    set_modes(task, weight_mode="none")
    assert score_now(task).status == "done"
    publish(task)
    cells = builder_weight_cells(get(task, ANON, ""))
    assert {html_text(cell) for cell in cells.values()} == {"1.000"}


def test_each_snapshot_shows_the_settings_it_was_scored_with(scored_and_published):
    task = scored_and_published
    first = Snapshot.objects.get()
    set_modes(task, weight_mode="original_f1", break_rate_mode="sentences")
    second = score_now(task).snapshot
    old = html_text(page_text(get(task, ORG, "matrix/", snapshot=first.id)))
    assert "Scored with: breaker weight Dev accuracy" in old and "( pairs )" in old
    new = html_text(page_text(get(task, ORG, "lambda/", snapshot=second.id)))
    assert "Macro-F1 on the team's originals ( original_f1 )" in new and "( sentences )" in new
    scoring = html_text(page_text(page_client(task.cast, ORG).get(SCORING)))
    assert "Scored with dev_accuracy weights, break rate per pair" in scoring
    assert "Scored with original_f1 weights, break rate per sentence" in scoring
    assert second.id != first.id


def test_publishing_an_older_snapshot_asks_first(scored_and_published):
    task = scored_and_published
    client = page_client(task.cast, ORG)
    older = score_now(task).snapshot
    newest = score_now(task).snapshot
    scoring = client.get(SCORING).content.decode()
    # Only the newest has a publish button; the older one a link to a confirmation.
    assert f"Publish snapshot {newest.id}</button>" in scoring
    assert f"Publish snapshot {older.id}</button>" not in scoring
    assert f"publish snapshot {older.id} instead of the newest" in scoring

    address = f"{TASK}organize/snapshots/{older.id}/publish/"
    asked = page_text(client.get(address))
    assert f"Snapshot {older.id} is older than snapshot {newest.id}" in asked
    assert "Yes, publish this older snapshot" in asked
    refused = client.post(address)
    assert refused.status_code == 400 and 'aria-invalid="true"' in refused.content.decode()
    older.refresh_from_db()
    assert older.published_at is None

    done = client.post(address, {"confirm": "on"}, follow=True)
    assert f"Snapshot {older.id} is published" in page_text(done)
    older.refresh_from_db()
    assert older.published_at is not None


@pytest.mark.parametrize("role", [OTHER, BUILDER, BREAKER, OUTSIDER])
def test_nobody_else_sees_the_older_snapshot_confirmation(scored_and_published, role):
    older = Snapshot.objects.get()
    score_now(scored_and_published)
    address = f"{TASK}organize/snapshots/{older.id}/publish/"
    assert page_client(scored_and_published.cast, role).get(address).status_code == 403


def test_the_lambda_page_explains_the_self_reported_system_and_draws_only_real_charts(db):
    task = build_scored_task()
    upload_self_reported_pairs(task)
    assert score_now(task).status == "done"
    snapshot = Snapshot.objects.get()
    assert task.by_hand.id in {entry["system_id"] for entry in snapshot.systems}
    page = get(task, ORG, "lambda/").content.decode()
    text = page_text(get(task, ORG, "lambda/"))
    assert "No λmax for Strawman / by hand (self-reported)" in text
    # The system is not offered in the chooser, and asking for it is refused.
    chooser = page.split('name="system"')[1].split("</select>")[0]
    assert f'value="{task.by_hand.id}"' not in chooser
    assert f'value="{task.cnn.id}"' in chooser
    asked = page_text(get(task, ORG, "lambda/", system=task.by_hand.id))
    assert "Select a valid choice" in asked
    # Every chart drawn has points: no empty plot.
    assert page.count('role="img"') == 3
    for chart in page.split("<svg")[1:]:
        drawn = chart.split("</svg>")[0]
        assert "<circle" in drawn or "<rect" in drawn, drawn[:200]
