"""The results API: who sees which snapshot and table, names, CSV, zip, query counts."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from bibi.evaluation import services
from bibi.evaluation.exports import TABLES, neutralized
from bibi.evaluation.models import ScoringRun, Snapshot
from bibi.sharedtasks.models import AuditLogEntry, Team

from ..conftest import query_count
from ..pairs.conftest import start_phase_now
from .conftest import OSU_PAIRS, ScoredTask, resubmit_osu, score_now, upload_self_reported_pairs

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

BASE = "/api/v1/shared-tasks/sst/"


@pytest.fixture
def scored_task(shared_scored_task: ScoredTask) -> ScoredTask:
    """One scored task for the module: each test reads it, or changes it and the change is
    undone after the test (``kept_rows``)."""
    return shared_scored_task


PUBLIC_TABLES = [name for name, table in TABLES.items() if not table.restricted]


def snapshot_now(task) -> Snapshot:
    run = score_now(task)
    assert run.status == "done", run.failure_reason
    return run.snapshot


@pytest.fixture
def snapshot(scored_task):
    upload_self_reported_pairs(scored_task)
    return snapshot_now(scored_task)


@pytest.fixture
def published(scored_task, snapshot):
    return services.snapshot_publish(snapshot=snapshot, actor=scored_task.cast.organizer)


def csv_rows(response) -> list[list[str]]:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode("utf-8"))))


# --- Who sees what ------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["breaker", "builder", "outsider", "anonymous"])
def test_before_publication_only_organizers_see_a_snapshot(scored_task, snapshot, who):
    cast = scored_task.cast
    url = f"{BASE}snapshots/{snapshot.id}/"

    assert cast.client("organizer").get(url).status_code == 200
    assert cast.client("organizer").get(f"{BASE}snapshots/").json()["count"] == 1
    assert cast.client(who).get(url).status_code == 404
    assert cast.client(who).get(f"{url}builders/").status_code == 404
    assert cast.client(who).get(f"{BASE}snapshots/").json()["count"] == 0
    assert cast.client(who).get(f"{BASE}leaderboard/").status_code == 404


@pytest.mark.parametrize("who", ["breaker", "builder", "outsider", "anonymous"])
def test_after_publication_everyone_who_sees_the_task_sees_the_leaderboards(
    scored_task, published, who
):
    client = scored_task.cast.client(who)

    summary = client.get(f"{BASE}leaderboard/")
    assert summary.status_code == 200
    assert summary.json()["id"] == published.id
    for table in PUBLIC_TABLES:
        assert client.get(f"{BASE}leaderboard/{table}/").status_code == 200, table
    assert client.get(f"{BASE}leaderboard/failures/").status_code == 404


def test_a_private_task_shows_its_leaderboard_to_no_outsider(scored_task, published):
    scored_task.shared_task.is_public = False
    scored_task.shared_task.save()

    assert scored_task.cast.client("outsider").get(f"{BASE}leaderboard/").status_code == 404
    assert scored_task.cast.client("breaker").get(f"{BASE}leaderboard/").status_code == 200


def test_the_item_table_waits_for_the_results_phase(scored_task, published):
    cast = scored_task.cast
    url = f"{BASE}leaderboard/items/"

    assert cast.client("anonymous").get(url).status_code == 404
    assert cast.client("breaker").get(f"{BASE}leaderboard/broke_every_system/").status_code == 404
    assert "items" not in cast.client("breaker").get(f"{BASE}leaderboard/").json()["tables"]
    assert cast.client("organizer").get(url).json()["count"] == 7

    start_phase_now(scored_task.shared_task, "results")

    body = cast.client("anonymous").get(url).json()
    assert body["count"] == 7
    item = body["results"][0]
    assert {p["system_id"] for p in item["predictions"]} == {
        scored_task.cnn.id,
        scored_task.bow.id,
        scored_task.by_hand.id,
    }
    assert {p["outcome"] for p in item["predictions"]} <= {"held", "broken", "both_wrong"}


def test_only_organizers_publish_and_publication_is_audited(scored_task, snapshot):
    cast = scored_task.cast
    url = f"{BASE}snapshots/{snapshot.id}/publish/"

    assert cast.client("breaker").post(url).status_code == 404
    response = cast.client("organizer").post(url)

    assert response.status_code == 200
    assert response.json()["published_at"] is not None
    assert AuditLogEntry.objects.get(action="snapshot.publish").target == f"snapshot:{snapshot.id}"


def test_the_latest_published_snapshot_is_the_leaderboard(scored_task, published):
    newer = snapshot_now(scored_task)
    client = scored_task.cast.client("anonymous")
    assert client.get(f"{BASE}leaderboard/").json()["id"] == published.id

    services.snapshot_publish(snapshot=newer, actor=scored_task.cast.organizer)

    assert client.get(f"{BASE}leaderboard/").json()["id"] == newer.id
    assert client.get(f"{BASE}snapshots/").json()["count"] == 2


def test_scoring_runs_are_the_organizers_to_ask_for_and_follow(scored_task, snapshot):
    cast = scored_task.cast
    url = f"{BASE}scoring-runs/"

    assert cast.client("breaker").post(url).status_code == 403
    assert cast.client("breaker").get(url).status_code == 403
    assert cast.client("anonymous").post(url).status_code in (401, 403)
    response = cast.client("organizer").post(url)
    assert response.status_code == 202
    assert response.json()["status"] == "waiting_for_cells"
    assert response.json()["trigger"] == "organizer"

    runs = cast.client("organizer").get(url).json()
    assert runs["count"] == 2
    detail = cast.client("organizer").get(f"{url}{snapshot.run_id}/").json()
    assert detail["status"] == "done"
    assert detail["snapshot"] == snapshot.id
    assert detail["cells_done"] == detail["cells_needed"] == 22
    assert detail["failures"] == []
    assert cast.client("breaker").get(f"{url}{snapshot.run_id}/").status_code == 403


# --- Names --------------------------------------------------------------------------------


def test_anonymous_team_names_are_honoured_in_every_table_and_file(scored_task, published):
    cast = scored_task.cast
    osu = scored_task.osu
    Team.objects.filter(id=osu.id).update(is_anonymous=True, alias="Breaker X")
    Team.objects.filter(id=scored_task.melbourne.id).update(is_anonymous=True, alias="Builder Y")
    start_phase_now(scored_task.shared_task, "results")

    def everything(who: str) -> str:
        client = cast.client(who)
        text = json.dumps(client.get(f"{BASE}leaderboard/").json())
        for table in [*PUBLIC_TABLES, "items"]:
            text += client.get(f"{BASE}leaderboard/{table}/", {"page_size": 500}).content.decode()
            text += client.get(f"{BASE}leaderboard/{table}/", {"format": "csv"}).content.decode()
        archive = zipfile.ZipFile(io.BytesIO(client.get(f"{BASE}leaderboard/export/").content))
        return text + "".join(archive.read(name).decode() for name in archive.namelist())

    for who in ("outsider", "anonymous", "breaker", "builder"):
        seen = everything(who)
        assert "OSU" not in seen and "Melbourne" not in seen, who
        assert "Breaker X" in seen and f"Builder Y / system {scored_task.bow.id}" in seen, who
        assert "Builder Y / bow" not in seen, who
    own = everything("organizer")
    assert "OSU" in own and "Melbourne / bow" in own
    breakers = scored_task.cast.client("anonymous").get(f"{BASE}leaderboard/breakers/").json()
    assert {row["team"] for row in breakers["rows"]} == {"Utrecht", "Breaker X"}


def test_a_team_sees_its_own_real_name(scored_task, published):
    Team.objects.filter(id=scored_task.osu.id).update(is_anonymous=True, alias="Breaker X")
    from rest_framework.test import APIClient

    member = APIClient()
    member.force_authenticate(scored_task.osu_breaker)

    rows = member.get(f"{BASE}leaderboard/breakers/").json()["rows"]
    assert {row["team"] for row in rows} == {"Utrecht", "OSU"}


# --- CSV and the zip ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cell", "safe"),
    [
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("-1", "-1"),
        ("+1", "+1"),
        ("a = b", "a = b"),
        (-0.5, -0.5),
    ],
)
def test_cells_that_a_spreadsheet_would_run_are_neutralised(cell, safe):
    assert neutralized(cell) == safe


def test_csv_tables_quote_texts_and_neutralise_formulas(scored_task, published):
    Team.objects.filter(id=scored_task.osu.id).update(name='=HYPERLINK("http://evil")')
    start_phase_now(scored_task.shared_task, "results")
    client = scored_task.cast.client("organizer")

    breakers = csv_rows(client.get(f"{BASE}leaderboard/breakers/", {"format": "csv"}))
    items = csv_rows(client.get(f"{BASE}leaderboard/items/", {"format": "csv"}))

    assert breakers[0][:4] == ["rank", "team", "pairs", "score"]
    assert '\'=HYPERLINK("http://evil")' in [row[1] for row in breakers[1:]]
    texts = {row[5] for row in items[1:]}
    assert 'Russell is "terrific" as coach Herb Brooks.' in texts
    assert "[Bettis] has a smoldering, humorless intensity that's hilarious." in texts
    assert len(items) == 8 and all(len(row) == len(items[0]) for row in items)
    assert items[0][-3:] == [
        "Strawman / by hand: original",
        "Strawman / by hand: variant",
        "Strawman / by hand: outcome",
    ]


def test_the_matrix_is_one_row_per_breaker_team_and_one_column_per_system(scored_task, published):
    client = scored_task.cast.client("anonymous")

    rows = csv_rows(client.get(f"{BASE}leaderboard/matrix/", {"format": "csv"}))
    body = client.get(f"{BASE}leaderboard/matrix/").json()["rows"]

    assert rows[0] == ["breaker team", "Strawman / cnn", "Melbourne / bow", "Strawman / by hand"]
    assert [row[0] for row in rows[1:]] == ["Utrecht", "OSU"]
    assert [team["team"] for team in body["teams"]] == ["Utrecht", "OSU"]
    assert len(body["broken_pct"]) == 2 and len(body["broken_pct"][0]) == 3


def test_the_zip_holds_every_table_a_viewer_may_read_and_a_readme_of_their_columns(
    scored_task, published
):
    organizer = scored_task.cast.client("organizer").get(f"{BASE}leaderboard/export/")
    public = scored_task.cast.client("anonymous").get(f"{BASE}leaderboard/export/")

    assert organizer["Content-Type"] == "application/zip"
    names = set(zipfile.ZipFile(io.BytesIO(organizer.content)).namelist())
    assert names == {"README.md", "snapshot.json"} | {f"{name}.csv" for name in TABLES}
    archive = zipfile.ZipFile(io.BytesIO(public.content))
    assert "items.csv" not in archive.namelist() and "failures.csv" not in archive.namelist()
    readme = archive.read("README.md").decode()
    assert "## builders.csv" in readme and "weight_source" in readme
    summary = json.loads(archive.read("snapshot.json"))
    assert summary["code_version"] == published.code_version
    assert summary["settings"]["weight_mode"] == "dev_accuracy"
    builders = list(csv.DictReader(io.StringIO(archive.read("builders.csv").decode())))
    assert [row["system"] for row in builders] == [
        row["system"]
        for row in scored_task.cast.client("anonymous")
        .get(f"{BASE}leaderboard/builders/")
        .json()["rows"]
    ]


def test_an_unknown_table_is_not_found(scored_task, published):
    client = scored_task.cast.client("organizer")

    assert client.get(f"{BASE}leaderboard/nothing/").status_code == 404
    assert (
        client.get(f"{BASE}snapshots/{published.id}/nothing/", {"format": "csv"}).status_code == 404
    )


# --- Query counts ---------------------------------------------------------------------------


ENDPOINTS = [
    "leaderboard/",
    "leaderboard/builders/",
    "leaderboard/breakers/",
    "leaderboard/matrix/",
    "leaderboard/tags/",
    "leaderboard/lambda_correlation/",
    "leaderboard/items/",
    "snapshots/",
    "scoring-runs/",
]


def test_every_list_endpoint_costs_the_same_queries_whatever_the_size(scored_task, published):
    start_phase_now(scored_task.shared_task, "results")
    client = scored_task.cast.client("organizer")
    small = {url: query_count(client, BASE + url) for url in ENDPOINTS}
    csv_small = query_count(client, BASE + "leaderboard/items/", format="csv")

    more = [
        {
            "original_id": "s1",
            "variant_text": f"I love this movie {word}!",
            "variant_label": "positive",
        }
        for word in ["so", "very", "truly", "really", "deeply", "madly", "quite", "wholly", "fully"]
    ]
    start_phase_now(scored_task.shared_task, "break")
    resubmit_osu(scored_task, more)
    upload_self_reported_pairs(scored_task)
    services.snapshot_publish(snapshot=snapshot_now(scored_task), actor=scored_task.cast.organizer)
    start_phase_now(scored_task.shared_task, "results")
    assert ScoringRun.objects.count() >= 2
    assert client.get(BASE + "leaderboard/items/").json()["count"] == 4 + len(OSU_PAIRS) + 9

    large = {url: query_count(client, BASE + url) for url in ENDPOINTS}
    assert large == small
    assert query_count(client, BASE + "leaderboard/items/", format="csv") == csv_small
