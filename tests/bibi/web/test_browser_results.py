"""Results in a real browser: the organizer runs scoring and publishes it; then a logged-out
visitor reads the leaderboard, sorts it, filters the item explorer and downloads the CSV.

On the services backend a real Celery worker computes the missing predictions and scores;
on the embedded default the run goes in the live server's process, as in the demo.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from bibi.evaluation.models import ScoringRun, Snapshot

from ..evaluation.conftest import OSU_PAIRS, build_scored_task
from ..pairs.conftest import start_phase_now
from .conftest import PHONE, WORKER_BOUND_MS

pytestmark = [pytest.mark.browser, pytest.mark.embedded, pytest.mark.slow]


def test_the_organizer_publishes_and_a_visitor_explores_the_results(
    transactional_db, worker, screen
):
    task = build_scored_task()
    page = screen.page

    screen.log_in("olga", "pw-olga-123")
    screen.goto("/")
    page.get_by_role("link", name="SST sentiment").click()
    page.get_by_role("navigation", name="This shared task").get_by_role(
        "link", name="Organize"
    ).click()
    page.get_by_role("link", name="Scoring runs, snapshots and publication").click()
    expect(page.get_by_text("No scoring run yet.")).to_be_visible()
    page.get_by_role("button", name="Run scoring now").click()
    expect(page.get_by_text(re.compile(r"Scoring run \d+ is under way"))).to_be_visible()
    screen.shot("run-asked")
    # The run's line follows it by itself (scoring_status.js), then the page reloads with
    # the snapshot and its publish button. (On the embedded default the run is done already.)
    page.get_by_role("button", name=re.compile(r"^Publish snapshot \d+$")).wait_for(
        timeout=WORKER_BOUND_MS
    )
    expect(page.locator("[data-run-status]").first).to_have_text("Done")
    screen.shot("run-done")
    assert screen.axe_violations() == []
    page.get_by_role("button", name=re.compile(r"^Publish snapshot \d+$")).click()
    expect(page.get_by_text(re.compile(r"Snapshot \d+ is published"))).to_be_visible()
    assert Snapshot.objects.get().published_at is not None
    screen.shot("published")

    # The results phase begins; the organizer leaves.
    start_phase_now(task.shared_task, "results")
    page.get_by_role("button", name=re.compile("Log out")).click()

    screen.goto("/")
    page.get_by_role("link", name="SST sentiment").click()
    page.get_by_role("link", name="Results").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Leaderboards")
    builders = page.get_by_role("table", name=re.compile("^Builder systems"))
    expect(builders.get_by_role("cell", name="Strawman / cnn", exact=True)).to_be_visible()
    expect(builders.get_by_role("cell", name="Melbourne / bow", exact=True)).to_be_visible()
    screen.shot("leaderboards")
    assert screen.axe_violations() == []
    builders.get_by_role("link", name=re.compile("^F1")).click()
    builders = page.get_by_role("table", name=re.compile("^Builder systems, sorted by F1"))
    assert builders.locator("th[aria-sort]").inner_text().startswith("F1")
    screen.shot("sorted-by-f1")

    page.get_by_role("navigation", name="Results").get_by_role("link", name="Heat map").click()
    expect(page.get_by_role("row", name=re.compile("^OSU"))).to_be_visible()
    screen.shot("heat-map")
    assert screen.axe_violations() == []

    page.get_by_role("navigation", name="Results").get_by_role("link", name="λmax evidence").click()
    expect(page.locator("svg[role=img]")).to_have_count(3)
    screen.shot("lambda")
    assert screen.axe_violations() == []

    page.get_by_role("navigation", name="Results").get_by_role("link", name="Pairs").click()
    expect(page.get_by_role("heading", name="7 pairs")).to_be_visible()
    page.get_by_label("Breaker team").select_option(label="OSU")
    page.get_by_label("Gold label").select_option(label="Changed")
    page.get_by_role("button", name="Show the pairs").click()
    flipped = Snapshot.objects.get().items.filter(team_id=task.osu.id, flipped=True).count()
    assert 0 < flipped < len(OSU_PAIRS)
    expect(page.get_by_role("heading", name=f"{flipped} pairs")).to_be_visible()
    expect(page.locator("article.pair ins").first).to_be_visible()
    page.locator("article.pair details summary").first.click()
    expect(page.get_by_role("cell", name="Strawman / cnn").first).to_be_visible()
    screen.shot("pairs-filtered")
    assert screen.axe_violations() == []

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download every pair as CSV").click()
    download = download_info.value
    assert re.fullmatch(r"sst-results-\d+-items\.csv", download.suggested_filename)
    rows = list(csv.reader(io.StringIO(Path(download.path()).read_text(encoding="utf-8"))))
    assert rows[0][:2] == ["pair_id", "team"]
    assert len(rows) == 1 + 7
    assert {row[1] for row in rows[1:]} == {"Utrecht", "OSU"}

    # On a phone: one column, wide tables and charts scroll or shrink in their own region.
    page.set_viewport_size(PHONE)
    for path, name in [
        ("/tasks/sst/results/", "leaderboards-phone"),
        ("/tasks/sst/results/items/", "pairs-phone"),
        ("/tasks/sst/results/lambda/", "lambda-phone"),
    ]:
        screen.goto(path)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path
        screen.shot(name)


def test_the_scoring_page_follows_a_run_by_itself(transactional_db, screen):
    from ..conftest import build_cast

    cast = build_cast(current_phase="contest")
    run = ScoringRun.objects.create(
        shared_task=cast.shared_task, trigger="organizer", cells_needed=10, cells_done=3
    )
    page = screen.page
    screen.log_in("olga", "pw-olga-123")
    screen.goto("/tasks/sst/organize/scoring/")
    bar = page.locator(f"#run-{run.id}-progress")
    assert bar.get_attribute("value") == "3"
    ScoringRun.objects.filter(id=run.id).update(cells_done=7, status="scoring")
    page.wait_for_function(f"() => document.querySelector('#run-{run.id}-progress').value === 7")
    expect(page.locator("[data-run-progress]")).to_have_text("7 of 10")
    expect(page.locator("[data-run-status]")).to_have_text("Scoring")
    screen.shot("following")
    ScoringRun.objects.filter(id=run.id).update(
        cells_done=10, status="failed", failure_reason="There are no pairs to score."
    )
    page.get_by_text("There are no pairs to score.").wait_for()
    expect(page.locator("[data-run-status]")).to_have_text("Failed")
    expect(page.locator("tr[data-poll-url]")).to_have_count(0)
    screen.shot("failed")
