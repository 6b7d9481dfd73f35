"""Published system names follow the teams' anonymity: a distinctive system name of an
anonymous team appears in no table, file or results page outside the organizers and the
team (issue 20.2)."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from bibi.evaluation import services
from bibi.evaluation.exports import TABLES
from bibi.evaluation.selectors import system_published_name
from bibi.sharedtasks.models import Team
from bibi.systems.models import System

from ..pairs.conftest import start_phase_now
from ..web.conftest import TASK, page_client
from .conftest import build_scored_task, score_now

pytestmark = pytest.mark.django_db

API = "/api/v1/shared-tasks/sst/"
RESULTS = f"{TASK}results/"
# Melbourne's hosted system (scored) and Strawman's self-reported one (left out of the run:
# it reported no pair predictions), both of anonymous teams.
SCORED_NAME, EXCLUDED_NAME = "Zebrafish-9000", "Okapi-Deluxe"


@pytest.fixture
def planted(db):
    task = build_scored_task()
    System.objects.filter(id=task.bow.id).update(name=SCORED_NAME)
    System.objects.filter(id=task.by_hand.id).update(name=EXCLUDED_NAME)
    Team.objects.filter(id=task.melbourne.id).update(is_anonymous=True, alias="Builder Y")
    Team.objects.filter(id=task.cast.builder_team.id).update(is_anonymous=True, alias="Builder Z")
    run = score_now(task)
    assert run.status == "done", run.failure_reason
    assert {entry["name"] for entry in run.snapshot.excluded_systems} == {EXCLUDED_NAME}
    services.snapshot_publish(snapshot=run.snapshot, actor=task.cast.organizer)
    start_phase_now(task.shared_task, "results")
    return task


def _zip_text(content: bytes) -> str:
    archive = zipfile.ZipFile(io.BytesIO(content))
    assert {"README.md", "snapshot.json", "builders.csv"} <= set(archive.namelist())
    return "".join(archive.read(name).decode() for name in archive.namelist())


def everything_through_the_api(task, who: str) -> str:
    client = task.cast.client(who)
    snapshot_id = client.get(f"{API}leaderboard/").json()["id"]
    text = ""
    for base in (f"{API}leaderboard/", f"{API}snapshots/{snapshot_id}/"):
        summary = client.get(base)
        assert summary.status_code == 200
        text += json.dumps(summary.json())
        for table in summary.json()["tables"]:
            rows = client.get(f"{base}{table}/", {"page_size": 500})
            assert rows.status_code == 200, table
            text += rows.content.decode()
            text += client.get(f"{base}{table}/", {"format": "csv"}).content.decode()
        text += _zip_text(client.get(f"{base}export/").content)
    return text


def everything_on_the_pages(task, who: str) -> str:
    client = page_client(task.cast, who)
    text = ""
    for path in ["", "matrix/", "items/", "lambda/"]:
        page = client.get(RESULTS + path)
        assert page.status_code == 200, path
        text += page.content.decode()
    for table in TABLES:
        for fmt in ("csv", "json"):
            download = client.get(f"{RESULTS}download/{table}.{fmt}")
            if download.status_code == 200:
                text += download.content.decode()
    return text + _zip_text(client.get(f"{RESULTS}download/results.zip").content)


@pytest.mark.parametrize("who", ["outsider", "anonymous", "breaker"])
def test_no_table_file_or_page_names_an_anonymous_teams_system(planted, who):
    bow = planted.bow

    for seen in (everything_through_the_api(planted, who), everything_on_the_pages(planted, who)):
        assert SCORED_NAME not in seen and EXCLUDED_NAME not in seen
        assert "Melbourne" not in seen
        assert f"Builder Y / system {bow.id}" in seen


def test_a_team_reads_its_own_systems_names_and_no_other_anonymous_teams(planted):
    for seen in (
        everything_through_the_api(planted, "builder"),
        everything_on_the_pages(planted, "builder"),
    ):
        assert EXCLUDED_NAME in seen and f"{planted.cast.builder_team.name} / cnn" in seen
        assert SCORED_NAME not in seen


def test_the_organizers_read_every_name(planted):
    for seen in (
        everything_through_the_api(planted, "organizer"),
        everything_on_the_pages(planted, "organizer"),
    ):
        assert f"Melbourne / {SCORED_NAME}" in seen and EXCLUDED_NAME in seen


def test_a_team_that_is_not_anonymous_keeps_its_system_names_public():
    assert system_published_name(system_id=7, name="bow", sees_team=True) == "bow"
    assert system_published_name(system_id=7, name="bow", sees_team=False) == "system 7"
