"""A breaker in a real browser uses the guidance: the originals by boundary rank, the pair
editor with its live word diff, the systems' predictions on a draft variant, a good pair added
and a non-minimal one refused with the reason.

On the services backend a real Celery worker runs the models; on the embedded default they run
in the live server's process, as in the demo.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from bibi.pairs.models import PairSet

from ..guidance.guidance_conftest import build_geometry_task
from .conftest import WORKER_BOUND_MS

pytestmark = [pytest.mark.browser, pytest.mark.embedded, pytest.mark.slow]


def test_a_breaker_follows_the_guidance_to_a_pair(
    transactional_db, worker, screen, tmp_path, settings
):
    # The page waits on the worker for predictions and suggestions: on a loaded machine that
    # may take a while, and only the answer matters here.
    settings.GUIDANCE_SUGGEST_TIMEOUT = WORKER_BOUND_MS // 1000
    task = build_geometry_task(tmp_path)
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/")
    page.get_by_role("link", name="Guidance").click()

    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Guidance"))
    items = page.locator(".guidance-item h2")
    assert items.first.inner_text().startswith("#1 on")
    assert page.locator(".shade-4", has_text="good").count() >= 1
    screen.shot("guidance")
    assert screen.axe_violations() == []

    page.get_by_role("link", name="Make a pair from mild-pos").click()
    page.wait_for_load_state()
    expect(page.get_by_role("heading", level=1)).to_have_text("Make a pair from mild-pos")
    variant = page.get_by_label("Variant", exact=True)
    assert variant.input_value() == "the film is good"
    # The diff follows the typing, without a round trip.
    variant.fill("the film is bad")
    page.locator("#diff-variant ins", has_text="bad").wait_for()
    assert page.locator("#diff-original del").text_content() == "[removed: good]"
    assert page.locator("#diff-variant").text_content().strip() == "the film is [added: bad]"
    page.get_by_label("The variant's label").select_option("positive")
    page.get_by_role("button", name="Try it on the systems").click(timeout=WORKER_BOUND_MS)
    predictions = page.get_by_role(
        "region", name="Each hosted system on the original and on your variant"
    )
    # The answer comes with the page, or in its place once the worker has it (a 202 followed).
    expect(predictions.get_by_role("row")).to_have_count(3)  # the header and two systems
    expect(page.locator("#predictions")).to_contain_text("2 of 2 systems would break")
    screen.shot("draft-tried")
    assert screen.axe_violations() == []

    # Verified suggestions, each one button away from being tried.
    page.get_by_role("button", name="Suggest verified edits").click(timeout=WORKER_BOUND_MS)
    suggestions = page.get_by_role(
        "region", name="Verified edits of mild-pos, the likeliest first within each kind"
    )
    expect(suggestions.get_by_role("cell", name="the film is bad", exact=True)).to_be_visible()
    screen.shot("suggestions")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Try “the film is bad”").click(timeout=WORKER_BOUND_MS)
    expect(page.locator("#predictions")).not_to_contain_text("2 of 2 systems would break")
    expect(page.locator("#predictions")).to_contain_text("You change the label to negative")

    # Not minimal: refused, with the reason, and nothing stored.
    page.get_by_label("Variant", exact=True).fill(
        "an entirely different sentence about nothing at all"
    )
    page.get_by_role("button", name="Check and add to the draft").click()
    problems = page.locator("#pair-problems")
    expect(problems).to_contain_text("This is not a pair the task accepts")
    expect(problems).to_contain_text("edit")
    screen.shot("not-minimal")
    assert not PairSet.objects.filter(team=task.cast.breaker_team).exists()

    page.get_by_label("Variant", exact=True).fill("the film is bad")
    page.get_by_label("The variant's label").select_option("negative")
    page.get_by_role("button", name="Check and add to the draft").click()
    expect(page.get_by_text("The pair is checked and added to the draft.")).to_be_visible()
    page.get_by_role("button", name="Submit the draft as a set").click()
    submitted = PairSet.objects.get(team=task.cast.breaker_team, status="submitted")
    assert submitted.pairs.get().variant_text == "the film is bad"
    screen.shot("submitted")


def test_a_draft_that_waits_for_a_worker_is_followed_to_its_answer(
    transactional_db, worker, screen, tmp_path, settings
):
    """The page answers 202 at once (no wait at all here) with a notice; the page follows the
    job and shows the systems' answer in place, the form as the breaker left it."""
    if worker is None:
        pytest.skip("in-process on the embedded default: the answer comes with the page")
    settings.GUIDANCE_SUGGEST_WAIT = 0
    build_geometry_task(tmp_path)
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/guidance/mild-pos/edit/")
    page.get_by_label("Variant", exact=True).fill("the film is bad")
    page.get_by_label("The variant's label").select_option("positive")
    page.get_by_label("Rationale").fill("one word, the other way")

    with page.expect_response(lambda response: "/edit/" in response.url) as posted:
        page.get_by_role("button", name="Try it on the systems").click()
    assert posted.value.status == 202
    assert "waiting for a model worker" in page.locator("#job-waiting").inner_text()

    predictions = page.get_by_role(
        "region", name="Each hosted system on the original and on your variant"
    )
    predictions.wait_for()
    assert "2 of 2 systems would break" in page.locator("#predictions").inner_text()
    assert page.locator("#job-waiting").count() == 0
    assert page.get_by_label("Rationale").input_value() == "one word, the other way"
    screen.shot("draft-followed")
    assert screen.axe_violations() == []
