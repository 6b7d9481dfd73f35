"""An organizer in a real browser: applies the "2017 sentiment replay" preset on the settings
page (sees what it changes, saves), schedules the four phases on one page, and closes the
running phase early only once the confirmation is ticked."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bibi.sharedtasks.models import AuditLogEntry, SharedTask

from ..conftest import build_cast

pytestmark = [pytest.mark.browser]


def local(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M")


def test_an_organizer_applies_the_2017_preset_and_schedules_the_phases(transactional_db, screen):
    build_cast()  # otto organizes "other", a task with no phase yet
    page = screen.page
    screen.log_in("otto", "pw-otto-123")
    screen.goto("/tasks/other/organize/")
    page.get_by_role("link", name="Task settings").click()
    assert page.get_by_role("heading", name="Task settings", level=1).is_visible()
    assert page.get_by_text("Default: 0.35.").is_visible()
    assert screen.axe_violations() == []

    page.get_by_role("link", name="2017 sentiment replay").click()
    changes = page.locator("#preset-changes")
    assert "not saved yet" in changes.inner_text()
    assert "Weight mode: dev_accuracy → original_f1" in changes.inner_text()
    assert page.get_by_label("Weight mode").input_value() == "original_f1"
    assert page.get_by_label("Break rate mode").input_value() == "sentences"
    assert SharedTask.objects.get(slug="other").weight_mode == "dev_accuracy"
    screen.shot("preset-filled")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Save the settings").click()
    assert page.get_by_text("Settings saved").is_visible()
    task = SharedTask.objects.get(slug="other")
    assert (task.weight_mode, task.break_rate_mode) == ("original_f1", "sentences")
    assert (task.pair_max_edit_ratio, task.pair_require_rationale) == (1.0, False)
    entry = AuditLogEntry.objects.get(shared_task=task, action="shared_task.update")
    assert entry.details["via"] == "preset:2017-sentiment-replay"

    page.get_by_role("navigation", name="Organize").get_by_role("link", name="Schedule").click()
    start = timezone.now() - timedelta(hours=1)
    for label, days in (("Build", 7), ("Break", 7), ("Contest", 3), ("Results", 30)):
        page.get_by_label(f"{label} starts (UTC)").fill(local(start))
        page.get_by_label(f"{label} ends (UTC)").fill(local(start + timedelta(days=days)))
        start += timedelta(days=days)
    screen.shot("schedule")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Save the schedule").click()
    assert page.get_by_text("The schedule is saved").is_visible()
    assert [p.kind for p in task.phases.order_by("starts_at")] == [
        "build", "break", "contest", "results"
    ]  # fmt: skip
    assert AuditLogEntry.objects.filter(shared_task=task, action="phase.create").count() == 4

    page.get_by_role("navigation", name="Organize").get_by_role("link", name="Phases").click()
    close = page.get_by_role("button", name="Close the build phase now")
    close.click()
    assert page.get_by_text("Nothing was closed").is_visible()
    assert task.phase_at().kind == "build"
    page.get_by_label("Yes, close it now").check()
    screen.shot("close-confirmed")
    page.get_by_role("button", name="Close the build phase now").click()
    assert page.get_by_text("The build phase is closed and the break phase has begun.").is_visible()
    assert task.phase_at().kind == "break"


def in_view(page, selector: str) -> bool:
    return page.evaluate(
        """(selector) => {
            const box = document.querySelector(selector).getBoundingClientRect();
            return box.top >= 0 && box.top < window.innerHeight && box.height > 0;
        }""",
        selector,
    )


def test_a_refused_save_shows_its_summary_in_view_and_links_to_the_field(transactional_db, screen):
    build_cast()
    page = screen.page
    screen.log_in("otto", "pw-otto-123")
    screen.goto("/tasks/other/organize/settings/")
    page.get_by_label("Votes per pair").fill("1000")
    page.get_by_role("button", name="Save the settings").click()
    summary = page.locator("#error-summary")
    summary.wait_for()
    assert "At most 15: give a number from 1 to 15." in summary.inner_text()
    # The page opens on the summary (focused, so scrolled to), not 3,000 px above the error.
    page.wait_for_function(
        "document.activeElement && document.activeElement.id === 'error-summary'"
    )
    assert in_view(page, "#error-summary")
    screen.shot("settings-refused")
    assert screen.axe_violations() == []
    summary.get_by_role("link", name="Votes per pair").click()
    page.wait_for_function("location.hash === '#id_validations_per_pair'")
    assert in_view(page, "#id_validations_per_pair")
    assert SharedTask.objects.get(slug="other").validations_per_pair == 3
