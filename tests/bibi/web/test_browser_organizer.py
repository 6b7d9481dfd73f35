"""An organizer in a real browser: signs up, creates a task, schedules its phases, imports
the starter set (a bad file first, whose rows are all listed), and reads the dashboard."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from bibi.sharedtasks.models import SharedTask

from ...conftest import REPO_ROOT

pytestmark = [pytest.mark.browser, pytest.mark.embedded]

WEB_FIXTURES = REPO_ROOT / "fixtures" / "web"


def local(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def test_an_organizer_creates_a_task_and_imports_the_starter_set(transactional_db, screen):
    page = screen.page
    screen.goto("/")
    page.get_by_role("link", name="Sign up").first.click()
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Email").fill("olga@example.org")
    page.get_by_label("Password", exact=True).fill("a long enough passphrase")
    page.get_by_label("Password confirmation").fill("a long enough passphrase")
    screen.shot("sign-up")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Create my account").click()

    page.get_by_role("link", name="New task").click()
    page.get_by_label("Name").fill("SST sentiment 2026")
    page.get_by_label("Slug").fill("sst-2026")
    page.get_by_label("Description").fill("Sentiment of movie-review sentences.")
    screen.shot("new-task")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Create the task").click()
    assert SharedTask.objects.get(slug="sst-2026").organizer_set.get().user.username == "olga"

    start = timezone.now() - timedelta(hours=1)
    for kind, days in (("build", 7), ("break", 7), ("contest", 3), ("results", 30)):
        form = page.get_by_role("region", name="Schedule a phase")
        form.get_by_label("Phase", exact=True).select_option(kind)
        form.get_by_label("Starts (UTC)").fill(local(start))
        form.get_by_label("Ends (UTC)").fill(local(start + timedelta(days=days)))
        form.get_by_role("button", name="Schedule").click()
        expect(page.get_by_text(f"The {kind} phase is scheduled.")).to_be_visible()
        start += timedelta(days=days)
    expect(page.get_by_role("heading", name="Results", level=2)).to_be_visible()
    screen.shot("phases")
    assert screen.axe_violations() == []

    page.get_by_role("navigation", name="Organize").get_by_role("link", name="Datasets").click()
    page.get_by_label("Split").select_option("starter")
    page.get_by_label("File", exact=True).set_input_files(WEB_FIXTURES / "starter-bad.csv")
    page.get_by_role("button", name="Import").click()
    page.locator("#rejected-lines summary").click()
    errors = page.locator("#rejected-errors tbody tr")
    assert [row.inner_text().split("\t")[0] for row in errors.all()] == ["3", "4", "5"]
    assert (
        "Nothing was stored: 3 problem(s) in starter-bad.csv."
        in page.locator("#rejected").inner_text()
    )
    screen.shot("import-refused")
    assert screen.axe_violations() == []

    page.get_by_label("Split").select_option("starter")
    page.get_by_label("File", exact=True).set_input_files(WEB_FIXTURES / "starter.csv")
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_text("Imported 4 examples into the starter dataset")).to_be_visible()
    screen.shot("imported")

    page.get_by_role("navigation", name="Organize").get_by_role("link", name="Dashboard").click()
    expect(page.locator("main")).to_contain_text("Starter set: 4 examples")
    screen.shot("dashboard")
    assert screen.axe_violations() == []

    page.get_by_role("link", name="Overview").click()
    expect(page.locator("main")).to_contain_text("The build phase closes at")
