"""The results pages as each role sees them: the leaderboards (sortable), the heat map, the
item explorer (filters, pages, word diffs), the λmax evidence, the downloads; and the
organizers' scoring page, where runs are asked for and snapshots published."""

from __future__ import annotations

import copy
import csv
import html
import io
import json
import re
import zipfile

import pytest
from django.http import QueryDict

from bibi.evaluation.models import ScoringRun, Snapshot
from bibi.evaluation.services import snapshot_publish
from bibi.sharedtasks import services as task_services
from bibi.web.diff import word_diff
from bibi.web.sorting import Column, sort_table

from ..conftest import BLIND_DEV, ROLES
from ..evaluation.conftest import OSU_PAIRS, ScoredTask, build_scored_task, score_now
from ..pairs.conftest import GOOD_PAIRS, start_phase_now
from .conftest import TASK, page_client

ORG, OTHER, BUILDER, BREAKER, OUTSIDER, ANON = ROLES
RESULTS = f"{TASK}results/"
PAGES = ["", "matrix/", "items/", "lambda/"]
DOWNLOADS = ["download/builders.csv", "download/breakers.json", "download/results.zip"]
# The word a Utrecht variant adds (shown in the word diff of its pair).
UTRECHT_VARIANT = "hilarious."
assert GOOD_PAIRS[1]["variant_text"].endswith(UTRECHT_VARIANT)


def build_scored() -> ScoredTask:
    task = build_scored_task()
    run = score_now(task)
    assert run.status == "done", run.failure_reason
    return task


@pytest.fixture(scope="module")
def module_scored(kept_rows) -> ScoredTask:
    return kept_rows(build_scored)


@pytest.fixture
def scored(module_scored, db) -> ScoredTask:
    """The evaluation's scored task (hosted tiny-cnn and tiny-bow, a self-reported system
    left out, the Utrecht and OSU pairs) in its contest phase, scored once: its snapshot
    is not published yet. Built once for the module (``kept_rows``); each test has a copy
    of its own, and what it changes is undone after it."""
    return copy.deepcopy(module_scored)


def publish(task) -> Snapshot:
    return snapshot_publish(snapshot=Snapshot.objects.get(), actor=task.cast.organizer)


def page_text(response) -> str:
    return html.unescape(re.sub(r"\s+", " ", response.content.decode()))


def get(task, role: str, path: str, **params):
    return page_client(task.cast, role).get(RESULTS + path, params)


# --- Who sees what -------------------------------------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_before_publication_only_organizers_see_the_results(scored, role):
    for path in PAGES:
        response = get(scored, role, path)
        assert response.status_code == 200
        text = page_text(response)
        if role == ORG:
            assert "not published" in text and "Strawman / cnn" in text, path
        else:
            assert "No results are published" in text, path
            assert "Strawman / cnn" not in text and "data-snapshot" not in text, path
    for path in DOWNLOADS:
        assert get(scored, role, path).status_code == (200 if role == ORG else 404), path


@pytest.mark.embedded
@pytest.mark.parametrize("role", ROLES)
def test_after_publication_everyone_reads_the_leaderboards(scored, role):
    publish(scored)
    text = page_text(get(scored, role, ""))
    assert "Strawman / cnn" in text and "Melbourne / bow" in text
    assert "not published" not in text
    # The settings the scores were computed with.
    assert "dev_accuracy" in text and "Breaks per pair" in text
    matrix = page_text(get(scored, role, "matrix/"))
    assert re.search(r"<th scope=\"row\">OSU</th>", matrix)
    # Break rates by strategy tag and by kind of edit, under the heat map.
    assert re.search(r"<td>morphosyntax</td><td class=\"num\">\d+</td>", matrix)
    assert "<td>label kept</td>" in matrix and "<td>label changed</td>" in matrix


@pytest.mark.parametrize("role", ROLES)
def test_the_pairs_wait_for_the_results_phase_except_for_organizers(scored, role):
    publish(scored)
    before = page_text(get(scored, role, "items/"))
    if role == ORG:
        assert UTRECHT_VARIANT in before
    else:
        assert "shown once the results phase has started" in before
        assert UTRECHT_VARIANT not in before
        assert get(scored, role, "download/items.csv").status_code == 404
        with zipfile.ZipFile(io.BytesIO(get(scored, role, "download/results.zip").content)) as z:
            assert "items.csv" not in z.namelist()
    start_phase_now(scored.shared_task, "results")
    assert UTRECHT_VARIANT in page_text(get(scored, role, "items/"))
    assert get(scored, role, "download/items.csv").status_code == 200


@pytest.mark.parametrize("role", ROLES)
def test_a_private_task_has_no_results_page_for_outsiders(scored, role):
    publish(scored)
    scored.shared_task.is_public = False
    scored.shared_task.save()
    sees = role in {ORG, BUILDER, BREAKER}
    for path in [*PAGES, *DOWNLOADS]:
        assert (get(scored, role, path).status_code == 404) is not sees, path


@pytest.mark.parametrize("role", [OTHER, BUILDER, OUTSIDER, ANON])
def test_an_anonymous_team_is_named_by_its_alias_on_every_results_page(scored, role):
    task_services.team_update(
        team=scored.cast.breaker_team, actor=scored.cast.breaker, is_anonymous=True
    )
    alias = scored.cast.breaker_team.public_name
    publish(scored)
    start_phase_now(scored.shared_task, "results")
    for path in PAGES:
        text = page_text(get(scored, role, path))
        assert "Utrecht" not in text, path
    assert alias in page_text(get(scored, role, ""))
    for path in ["download/breakers.csv", "download/items.json", "download/matrix.csv"]:
        assert "Utrecht" not in get(scored, role, path).content.decode(), path
    archive = zipfile.ZipFile(io.BytesIO(get(scored, role, "download/results.zip").content))
    assert all("Utrecht" not in archive.read(name).decode() for name in archive.namelist())


def test_an_anonymous_team_reads_its_own_name(scored):
    task_services.team_update(
        team=scored.cast.breaker_team, actor=scored.cast.breaker, is_anonymous=True
    )
    publish(scored)
    assert "Utrecht" in page_text(get(scored, BREAKER, ""))


@pytest.mark.parametrize("role", ROLES)
def test_no_results_page_shows_a_blind_dev_text(scored, role):
    publish(scored)
    start_phase_now(scored.shared_task, "results")
    for path in [*PAGES, "download/results.zip"]:
        body = get(scored, role, path).content
        if path.endswith(".zip"):
            body = b"".join(zipfile.ZipFile(io.BytesIO(body)).read(n) for n in ["items.csv"])
        for _, text, _ in BLIND_DEV:
            assert text not in html.unescape(body.decode()), path


def test_an_organizer_looks_at_any_snapshot_and_others_at_published_ones(scored):
    first = publish(scored)
    second = score_now(scored).snapshot
    organizer = page_text(get(scored, ORG, "", snapshot=second.id))
    assert f'data-snapshot="{second.id}"' in organizer and "not published" in organizer
    # The leaderboard is still the published one, for organizers too.
    assert f'data-snapshot="{first.id}"' in page_text(get(scored, ORG, ""))
    assert get(scored, ANON, "", snapshot=second.id).status_code == 404
    assert get(scored, ANON, "items/", snapshot=first.id).status_code == 200
    assert get(scored, ORG, "download/builders.csv", snapshot=second.id).status_code == 200


# --- The leaderboards ------------------------------------------------------------------------


def builder_order(response) -> list[str]:
    body = response.content.decode().split('id="builders-caption"')[1].split("</tbody>")[0]
    return re.findall(r"<td>((?:Strawman|Melbourne) / \w+)</td>", body)


def test_leaderboard_columns_sort_on_the_server_both_ways(scored):
    publish(scored)
    by_f1 = get(scored, ANON, "", builders="-f1")
    snapshot = Snapshot.objects.get()
    f1 = {row["system_id"]: row["f1"] for row in snapshot.tables["builders"]}
    names = {scored.cnn.id: "Strawman / cnn", scored.bow.id: "Melbourne / bow"}
    expected = [names[s] for s in sorted(f1, key=lambda s: -f1[s])]
    assert builder_order(by_f1) == expected
    assert builder_order(get(scored, ANON, "", builders="f1")) == expected[::-1]
    page = by_f1.content.decode()
    header = re.search(
        r'<th scope="col" class="num" aria-sort="descending">\s*<a href="([^"]+)">F1', page
    )
    assert header, "the sorted column says so"
    # Its link sorts the other way; the breakers' order is kept in every link.
    assert "builders=f1" in header.group(1)
    both = get(scored, ANON, "", builders="-f1", breakers="team").content.decode()
    builders_table = both.split('id="builders-caption"')[1].split("</thead>")[0]
    links = re.findall(r'href="(\?[^"]+)"', builders_table)
    assert len(links) == 11 and all("breakers=team" in href for href in links)


@pytest.mark.parametrize(
    "sort", ["nope", "", "-", "--f1", "rank;drop table", "f1" * 500, "__class__", "-system"]
)
def test_any_sort_key_gives_a_page(scored, sort):
    publish(scored)
    response = get(scored, ANON, "", builders=sort, breakers=sort)
    assert response.status_code == 200
    assert len(builder_order(response)) == 2


@pytest.mark.parametrize(
    ("snapshot", "status"),
    [("", 200), ("abc", 404), ("-1", 404), ("9" * 30, 404), ("999999", 404), ("1.0", 404)],
)
def test_an_odd_snapshot_number_is_not_found_or_ignored(scored, snapshot, status):
    publish(scored)
    for path in ["", "items/", "download/builders.csv"]:
        assert get(scored, ANON, path, snapshot=snapshot).status_code == status, path


def test_a_nul_in_the_query_string_is_refused_not_an_error(scored):
    publish(scored)
    for path in ["", "items/", "lambda/"]:
        assert get(scored, ANON, path, builders="\x00", team="\x00").status_code == 400


def test_sorting_puts_undefined_values_last_either_way():
    rows = [{"v": 2.0}, {"v": None}, {"v": 1.0}]
    columns = [Column("v", "V")]
    up = sort_table(rows, columns, QueryDict("s=v"), "s")
    down = sort_table(rows, columns, QueryDict("s=-v"), "s")
    assert [row["v"] for row in up.rows] == [1.0, 2.0, None]
    assert [row["v"] for row in down.rows] == [2.0, 1.0, None]
    assert up.headers[0].aria_sort == "ascending" and down.headers[0].aria_sort == "descending"


# --- The item explorer -------------------------------------------------------------------------


def pair_ids(response) -> list[int]:
    return [int(i) for i in re.findall(r'<h3 id="pair-(\d+)"', response.content.decode())]


@pytest.fixture
def results_out(scored):
    publish(scored)
    start_phase_now(scored.shared_task, "results")
    return scored


@pytest.mark.embedded
def test_the_items_filter_by_team_tag_label_and_what_broke(results_out):
    task = results_out
    items = list(Snapshot.objects.get().items.order_by("position"))
    assert len(pair_ids(get(task, ANON, "items/"))) == len(GOOD_PAIRS) + len(OSU_PAIRS)

    osu = [item.pair_id for item in items if item.team_id == task.osu.id]
    assert pair_ids(get(task, ANON, "items/", team=task.osu.id)) == osu
    tagged = [item.pair_id for item in items if "morphosyntax" in item.tags]
    assert tagged and pair_ids(get(task, ANON, "items/", tag="morphosyntax")) == tagged
    kept = [item.pair_id for item in items if not item.flipped]
    assert pair_ids(get(task, ANON, "items/", label="kept")) == kept
    changed = [item.pair_id for item in items if item.flipped]
    assert pair_ids(get(task, ANON, "items/", label="changed")) == changed
    unbroken = [item.pair_id for item in items if item.broken == 0]
    assert pair_ids(get(task, ANON, "items/", broken="no")) == unbroken

    from ..evaluation.conftest import cell_of

    broke_cnn = [item.pair_id for item in items if cell_of(item, task.cnn)["outcome"] == "broken"]
    held_cnn = [item.pair_id for item in items if item.pair_id not in broke_cnn]
    response = get(task, ANON, "items/", system=task.cnn.id, broken="yes")
    assert broke_cnn and pair_ids(response) == broke_cnn
    assert pair_ids(get(task, ANON, "items/", system=task.cnn.id, broken="no")) == held_cnn
    # Filtered by a system, a pair lists that system's predictions only.
    assert "Melbourne / bow" not in response.content.decode().split("pairs-heading")[1]


def test_each_pair_is_a_word_diff_with_every_systems_predictions(results_out):
    text = get(results_out, ANON, "items/").content.decode()
    assert '<ins><span class="visually-hidden">[added: </span>hilarious.' in text
    assert '<del><span class="visually-hidden">[removed: </span>unnerving.' in text
    assert text.count("Strawman / cnn</td>") == len(GOOD_PAIRS) + len(OSU_PAIRS)


def test_the_word_diff_marks_what_changed_and_keeps_the_spacing():
    original, variant = word_diff(
        "It's harmless, sure, but it's also charmless.",
        "It's not harmless, sure, but it's also not charmless.",
    )
    assert [(p.text, p.change) for p in original] == [
        ("It's harmless, sure, but it's also charmless.", "")
    ]
    assert [p.text for p in variant if p.change == "added"] == ["not", "not"]
    assert (
        "".join(p.text for p in variant) == "It's not harmless, sure, but it's also not charmless."
    )
    original, variant = word_diff("a  b c", "a c")
    assert [(p.text, p.change) for p in original] == [("a  ", ""), ("b", "removed"), (" c", "")]


@pytest.mark.parametrize(
    "params",
    [
        {"team": "abc"},
        {"team": "999999"},
        {"system": "-1"},
        {"tag": "<script>"},
        {"broken": "maybe"},
        {"label": "both"},
        {"page": "abc"},
        {"page": "-1"},
        {"page": "99999"},
        {"page": "1e9"},
        {"snapshot": "1 OR 1=1"},
    ],
)
def test_odd_filters_and_page_numbers_give_a_clean_page(results_out, params):
    response = get(results_out, ANON, "items/", **params)
    if "snapshot" in params:
        assert response.status_code == 404
        return
    assert response.status_code == 200
    text = response.content.decode()
    if "page" not in params:
        assert "Select a valid choice" in text
        # The other filters (none here) still apply: every pair is listed.
    assert pair_ids(response)


@pytest.mark.embedded
def test_the_items_are_paginated_and_filters_survive_the_pages(results_out, monkeypatch):
    from bibi.web.views import results

    monkeypatch.setattr(results, "ITEMS_PER_PAGE", 2)
    first = get(results_out, ANON, "items/", label="changed")
    assert len(pair_ids(first)) == 2
    assert "label=changed&amp;page=2" in first.content.decode()
    second = get(results_out, ANON, "items/", label="changed", page=2)
    assert not set(pair_ids(first)) & set(pair_ids(second))


# --- λmax and the downloads ----------------------------------------------------------------------


def test_the_lambda_evidence_is_drawn_with_its_numbers_beside_it(results_out):
    text = get(results_out, ANON, "lambda/").content.decode()
    assert text.count('role="img"') == 3
    assert "label kept" in text and "label changed" in text
    assert "Δλmax per breaker team" in text and "Confidence AUC" in text
    other = get(results_out, ANON, "lambda/", system=results_out.bow.id).content.decode()
    assert "λmax and breaks: Melbourne / bow" in html.unescape(other)
    odd = get(results_out, ANON, "lambda/", system="nope")
    assert odd.status_code == 200 and "Select a valid choice" in odd.content.decode()


def test_downloads_are_the_evaluation_exports(results_out):
    rows = list(
        csv.reader(io.StringIO(get(results_out, ANON, "download/builders.csv").content.decode()))
    )
    assert rows[0][:3] == ["rank", "system", "team"] and len(rows) == 3
    items = json.loads(get(results_out, ANON, "download/items.json").content)
    assert items["table"] == "items" and len(items["rows"]) == len(GOOD_PAIRS) + len(OSU_PAIRS)
    archive = zipfile.ZipFile(io.BytesIO(get(results_out, ANON, "download/results.zip").content))
    assert {"README.md", "snapshot.json", "builders.csv", "items.csv"} <= set(archive.namelist())
    # A label task keeps its label tables and columns (a span task's are in test_span_flow).
    assert {"flips.csv", "outside_label_set.csv", "validation.csv"} <= set(archive.namelist())
    assert (
        "outside_label_set" in rows[0]
        and "unvalidated_score" in archive.read("breakers.csv").decode().splitlines()[0]
    )
    item_header = archive.read("items.csv").decode().splitlines()[0]
    assert item_header.startswith("pair_id,team,original_id,original_text,original_label,")
    assert "question" not in item_header and "answer to" not in item_header
    lambda_kinds = {row["kind"] for row in Snapshot.objects.get().tables["lambda_auc"]}
    assert "same_label" in lambda_kinds and "same_label" in archive.read("lambda_auc.csv").decode()
    assert "A span task" not in archive.read("README.md").decode()
    assert "failures.csv" not in archive.namelist()
    response = get(results_out, ANON, "download/builders.csv")
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="sst-results-{Snapshot.objects.get().id}-builders.csv"'
    )
    for path in ["download/failures.csv", "download/nope.csv", "download/builders.zip"]:
        assert get(results_out, ANON, path).status_code == 404, path
    assert get(results_out, ORG, "download/failures.csv").status_code == 200


# --- The organizers' scoring page ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "status"),
    [(ORG, 200), (OTHER, 403), (BUILDER, 403), (BREAKER, 403), (OUTSIDER, 403), (ANON, 302)],
)
def test_the_scoring_page_is_the_organizers(scored, role, status):
    response = page_client(scored.cast, role).get(f"{TASK}organize/scoring/")
    assert response.status_code == status
    if role == ORG:
        text = page_text(response)
        assert "Run scoring now" in text and "Publish snapshot" in text
        assert re.search(r'<progress [^>]*max="\d+" value="\d+"', text)


def test_an_organizer_runs_scoring_and_publishes_from_the_page(scored):
    client = page_client(scored.cast, ORG)
    before = ScoringRun.objects.count()
    response = client.post(f"{TASK}organize/scoring/run/", follow=True)
    assert ScoringRun.objects.count() == before + 1
    assert "is under way" in page_text(response)
    snapshot = Snapshot.objects.order_by("-id").first()
    response = client.post(f"{TASK}organize/snapshots/{snapshot.id}/publish/", follow=True)
    snapshot.refresh_from_db()
    assert snapshot.published_at is not None
    assert "is published" in page_text(response)
    assert "the leaderboard" in page_text(client.get(f"{TASK}organize/scoring/"))
    assert "The latest scoring run" in page_text(client.get(f"{TASK}organize/"))


@pytest.mark.parametrize("role", [OTHER, BUILDER, BREAKER, OUTSIDER, ANON])
def test_nobody_else_runs_scoring_or_publishes(scored, role):
    snapshot = Snapshot.objects.get()
    client = page_client(scored.cast, role)
    runs = ScoringRun.objects.count()
    expected = 302 if role == ANON else 403
    assert client.post(f"{TASK}organize/scoring/run/").status_code == expected
    assert client.post(f"{TASK}organize/snapshots/{snapshot.id}/publish/").status_code == expected
    snapshot.refresh_from_db()
    assert snapshot.published_at is None and ScoringRun.objects.count() == runs


def test_publishing_takes_a_post_and_a_snapshot_of_this_task(scored):
    client = page_client(scored.cast, ORG)
    snapshot = Snapshot.objects.get()
    # The newest snapshot has nothing to confirm: a GET goes back to the scoring page.
    response = client.get(f"{TASK}organize/snapshots/{snapshot.id}/publish/")
    assert response.status_code == 302 and response["Location"].endswith("/organize/scoring/")
    snapshot.refresh_from_db()
    assert snapshot.published_at is None
    assert client.post(f"{TASK}organize/snapshots/999999/publish/").status_code == 404


def test_charts_show_names_as_text_and_leave_gaps_for_missing_values():
    from bibi.web import charts

    bars = charts.bar_chart(
        title='<b onload="x">',
        labels=["<script>alert(1)</script>", "b"],
        values=[-1.5, None],
        x_label="Δ",
    )
    assert "<script>" not in bars and "&lt;script&gt;" in bars and "<b " not in bars
    assert "no value" in bars
    lines = charts.line_chart(
        title="t",
        categories=["Q1", "Q2", "Q3"],
        series=[
            charts.Series("kept", [10.0, None, 30.0]),
            charts.Series("changed", [1.0, 2.0, 3.0]),
        ],
        y_label="%",
        x_label="q",
    )
    # A gap splits the first line: no polyline of its own, three of the second's points.
    assert lines.count("<polyline") == 1 and lines.count("<circle") == 2 + 1
