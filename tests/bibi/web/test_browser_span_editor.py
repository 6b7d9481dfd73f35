"""A breaker on a span task in a real browser: the answer is picked by selecting it in the
variant (the script measures the selection), and the pair joins the draft at those offsets."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from bibi.pairs.models import Pair

from ..spancast import UCD, build_span_cast

pytestmark = [pytest.mark.browser, pytest.mark.embedded]

# "UCD" twice: typed, it would name no one span; the second one is selected.
VARIANT = UCD.replace("St Vincents", "UCD B")
SECOND = VARIANT.index("UCD", 1)


def test_a_breaker_selects_the_answer_in_the_variant_and_adds_the_pair(transactional_db, screen):
    cast = build_span_cast()
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/qasrl/guidance/s1/edit/")
    expect(page.locator("#question")).to_have_text("who beat someone?")
    variant = page.get_by_label("Variant", exact=True)
    variant.fill(VARIANT)
    # As a keyboard user selects: to the word, then three characters with Shift held.
    variant.press("Control+Home")
    for _ in range(SECOND):
        variant.press("ArrowRight")
    for _ in range(3):
        variant.press("Shift+ArrowRight")
    expect(page.get_by_label("The variant's answer")).to_have_value("UCD")
    expect(page.locator("#answer-picked")).to_contain_text(
        f"selected at characters {SECOND} to {SECOND + 3}"
    )
    screen.shot("answer-selected")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Check and add to the draft").click()
    expect(page.get_by_text("The pair is checked and added to the draft.")).to_be_visible()
    (pair,) = Pair.objects.filter(pair_set__team=cast.breaker_team)
    assert pair.variant_answers == [{"start": SECOND, "end": SECOND + 3, "text": "UCD"}]
    expect(page.locator("#draft-caption")).to_contain_text("1 pair")
    screen.shot("draft")
