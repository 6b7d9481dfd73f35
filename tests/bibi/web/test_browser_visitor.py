"""A visitor in a real browser: from the home page to a task, its deadline and its data."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from ..conftest import build_cast
from .conftest import PHONE

pytestmark = [pytest.mark.browser]


def close_break_phase_in(cast, delta: timedelta) -> None:
    phase = cast.shared_task.phases.get(kind="break")
    phase.ends_at = timezone.now() + delta
    phase.save()


def test_a_visitor_finds_a_task_and_watches_its_deadline_come(transactional_db, screen):
    cast = build_cast()
    cast.shared_task.description = "Sentiment of movie-review sentences, as in 2017."
    cast.shared_task.save()
    close_break_phase_in(cast, timedelta(minutes=3))
    page = screen.page

    screen.goto("/")
    screen.shot("home")
    page.get_by_role("link", name="SST sentiment").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("SST sentiment")
    deadline = page.locator("#next-heading + p")
    expect(deadline).to_contain_text("The break phase closes at")
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", deadline.inner_text())
    countdown = page.locator("[data-countdown]")
    # The server wrote "in 2 minutes"; the script's first tick (on a loaded machine, a moment
    # after the page is shown) writes the seconds too.
    page.wait_for_function(
        "() => /second|^in 3 minutes$/.test(document.querySelector('[data-countdown]').textContent)"
    )
    first = countdown.inner_text()
    assert re.fullmatch(r"in (2 minutes, \d+ seconds?|3 minutes)", first), first
    page.wait_for_function(
        "first => document.querySelector('[data-countdown]').textContent !== first", arg=first
    )
    screen.shot("task")
    assert screen.axe_violations() == []

    page.get_by_role("link", name="Starter set").first.click()
    expect(
        page.get_by_role("cell", name="Russell is terrific as coach Herb Brooks.")
    ).to_be_visible()
    screen.shot("starter-set")
    assert screen.axe_violations() == []


def test_the_deadline_is_readable_without_javascript(transactional_db, browser, live_server):
    cast = build_cast()
    close_break_phase_in(cast, timedelta(minutes=3))
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/tasks/sst/")
        text = page.locator("#next-heading + p").inner_text()
        assert re.search(r"closes at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC: in 2\xa0minutes", text), (
            text
        )
    finally:
        context.close()


def test_a_phone_sized_screen_shows_the_task_without_sideways_scrolling(transactional_db, screen):
    build_cast()
    page = screen.page
    page.set_viewport_size(PHONE)
    screen.goto("/tasks/sst/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    screen.shot("task-on-a-phone")
    # Keyboard first: the first Tab lands on the skip link, which moves focus to the content.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to main content"
    screen.shot("skip-link")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


@pytest.mark.parametrize(
    ("login", "path"),
    [
        (("brian", "pw-brian-123"), "/tasks/sst/pairs/"),
        (("olga", "pw-olga-123"), "/tasks/sst/organize/phases/"),
        (("olga", "pw-olga-123"), "/tasks/sst/data/blind_dev/"),
    ],
)
def test_wide_pages_fit_a_phone_and_scroll_only_their_tables(transactional_db, screen, login, path):
    from .conftest import build_scene

    build_scene(build_cast())
    page = screen.page
    page.set_viewport_size(PHONE)
    screen.log_in(*login)
    screen.goto(path)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    screen.shot(path.strip("/").replace("/", "-"))
