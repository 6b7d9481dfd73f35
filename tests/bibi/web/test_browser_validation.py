"""A validator in a real browser: a breaker labels the three pairs the queue hands them
(never their own team's, never with the claimed label or the team in sight) until the queue
is finished; then the organizer reads the agreement on the validation overview."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from bibi.pairs.models import LabelValidation

from .validation_scene import build_validation_scene, label_all, signed_in

pytestmark = [pytest.mark.browser, pytest.mark.embedded]


def test_a_validator_works_through_the_queue_and_the_organizer_reads_the_agreement(
    transactional_db, screen
):
    scene = build_validation_scene(votes_per_pair=3)
    cast = scene.cast
    # Two careful votes on every pair first (and the third on the Utrecht team's pairs, by
    # Delft's member): each pair's majority is its claimed label.
    for user in (cast.organizer, scene.val, scene.dora):
        label_all(signed_in(user), user, lambda pair: {"label": pair.variant_label})
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/")
    page.get_by_role("link", name="Validate").click()
    expect(page.get_by_text("3 pairs wait for a label from you.")).to_be_visible()
    screen.shot("queue")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Label the next pair").click()

    seen = []
    for number in range(3):
        variant = page.locator("#variant-text")
        expect(variant).to_be_visible()
        seen.append(variant.inner_text())
        main = page.locator("main").inner_text()
        assert "Delft" not in main and "Utrecht" not in main
        item = LabelValidation.objects.get(validator=cast.breaker, status="assigned")
        # The first pair gets the other label (against the majority), the others theirs.
        labels = [label for label in cast.shared_task.labels if label != item.pair.variant_label]
        label = labels[0] if number == 0 else item.pair.variant_label
        page.get_by_label(label, exact=True).check()
        if number == 1:
            page.get_by_label("Not fluent, or ungrammatical").check()
        # The word diff: what the variant adds, marked, beside the plain texts.
        expect(page.locator("#validation-diff .diff-variant ins").first).to_be_visible()
        if number == 0:
            screen.shot("a-pair")
            assert screen.axe_violations() == []
        page.get_by_role("button", name="Save my label").click()
        expect(page.get_by_text("Your label is saved. A vote is final.")).to_be_visible()

    expect(page.locator("#queue-finished")).to_contain_text("The queue is finished for you")
    expect(page.get_by_role("table", name="Your latest labels, newest first")).to_be_visible()
    screen.shot("finished")
    assert sorted(seen) == sorted(p.variant_text for p in scene.delft_entry.pairs.all())
    assert LabelValidation.objects.filter(validator=cast.breaker, status="done").count() == 3

    page.get_by_role("button", name=re.compile("^Log out")).click()
    screen.log_in("olga", "pw-olga-123")
    screen.goto("/tasks/sst/organize/")
    page.get_by_role("navigation", name="Organize").get_by_role("link", name="Validation").click()
    expect(page.get_by_text("7 of 7 pairs to validate have an outcome")).to_be_visible()
    validators = page.get_by_role("table", name="Validators, least agreeing first")
    first = validators.locator("tbody tr").first
    expect(first).to_contain_text("brian")
    expect(first).to_contain_text("66.7%")
    screen.shot("overview")
    assert screen.axe_violations() == []
