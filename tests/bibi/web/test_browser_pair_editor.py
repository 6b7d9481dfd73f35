"""A breaker on a sentence-pair task (NLI) in a real browser: the ranking shades the
hypothesis, the pair editor diffs the hypothesis as it is typed, tries the whole pair on the
systems and adds it to the draft with the premise unchanged.

On the services backend a real Celery worker runs the models; on the embedded default they run
in the live server's process, as in the demo.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bibi.pairs.models import Pair

from ..nlicast import build_nli_task
from .conftest import WORKER_BOUND_MS

pytestmark = [pytest.mark.browser, pytest.mark.embedded, pytest.mark.slow]


def test_a_breaker_tries_a_hypothesis_on_the_systems_and_adds_the_pair(
    transactional_db, worker, screen, tmp_path, settings
):
    settings.GUIDANCE_SUGGEST_TIMEOUT = WORKER_BOUND_MS // 1000
    cast, _ = build_nli_task(tmp_path)
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/snli/guidance/")
    n1 = page.locator(".guidance-item", has_text="the film is fun")
    expect(n1.locator(".shade-4", has_text="good")).to_be_visible()
    screen.shot("guidance")
    assert screen.axe_violations() == []

    n1.get_by_role("link", name="Make a pair from n1").click()
    page.wait_for_load_state()
    expect(page.locator("#original-text")).to_contain_text("the film is fun")
    variant = page.get_by_label("Variant hypothesis")
    assert variant.input_value() == "it is good"
    # The diff follows the typing, without a round trip.
    variant.fill("it is bad")
    page.locator("#diff-variant ins", has_text="bad").wait_for()
    assert page.locator("#diff-original del").text_content() == "[removed: good]"
    assert page.locator("#diff-variant").text_content().strip() == "it is [added: bad]"

    page.get_by_role("button", name="Try it on the systems").click(timeout=WORKER_BOUND_MS)
    predictions = page.get_by_role(
        "region", name="Each hosted system on the original and on your variant"
    )
    expect(predictions.get_by_role("row")).to_have_count(3)  # the header and two systems
    expect(page.locator("#check-variant")).to_contain_text("Hypothesis: it is bad")
    # Both systems follow the edit to a contradiction: a break of each if the label stays.
    expect(page.locator("#predictions")).to_contain_text("2 of 2 systems would break")
    screen.shot("draft-tried")
    assert screen.axe_violations() == []

    page.get_by_label("The variant's label").select_option("contradiction")
    page.get_by_role("button", name="Check and add to the draft").click()
    expect(page.get_by_text("The pair is checked and added to the draft.")).to_be_visible()
    (pair,) = Pair.objects.filter(pair_set__team=cast.breaker_team)
    assert (pair.variant_text, pair.variant_text_b) == ("the film is fun", "it is bad")
    assert pair.variant_label == "contradiction" and not pair.label_unverified
    screen.shot("draft")
