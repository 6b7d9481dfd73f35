"""The results pages in a real browser at 1280 and 1920 pixels wide and on a phone: the
content column widens with the window, no table column is clipped (every table fits its
region at desktop widths), the heat map shows every system, and names wrap at spaces. And a
breaker team's unsubmitted draft, warned about on its pages. Screenshots go to
var/test-output/screenshots/<test>/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from bibi.evaluation.services import snapshot_publish
from bibi.pairs import services as pair_services
from bibi.sharedtasks.models import Phase
from bibi.sharedtasks.services.presets import shared_task_preset_apply
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services
from bibi.texts import moment_text

from ..evaluation.conftest import build_scored_task, score_now, upload_self_reported_pairs
from ..pairs.conftest import GOOD_PAIRS, pair_inputs, start_phase_now
from .conftest import PHONE

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTHS = [1280, 1920]
PAGES = {
    "leaderboards": "/tasks/sst/results/",
    "heat-map": "/tasks/sst/results/matrix/",
    "lambda": "/tasks/sst/results/lambda/",
    "pairs": "/tasks/sst/results/items/",
}
# Each table region against its table: a table wider than its region is cut off (or behind
# a scroll bar); so is a cell whose content is wider than the cell.
CLIPPED = """() => {
  const clipped = [];
  for (const region of document.querySelectorAll('.table-wrap')) {
    const table = region.querySelector('table');
    if (table.scrollWidth > region.clientWidth + 1) {
      clipped.push(`${table.caption ? table.caption.textContent : '?'}: table ${table.scrollWidth} > region ${region.clientWidth}`);
    }
    for (const cell of table.querySelectorAll('th, td')) {
      if (cell.scrollWidth > cell.clientWidth + 1) {
        clipped.push(`cell "${cell.textContent.trim().slice(0, 40)}" overflows`);
      }
    }
  }
  return clipped;
}"""
# The words of every team name cell, split into the lines they were laid out on: a name
# broken inside a word shows a line that is not made of whole words.
NAME_LINES = r"""(names) => {
  const broken = [];
  for (const cell of document.querySelectorAll('th, td')) {
    const text = cell.textContent.trim();
    if (!names.includes(text)) continue;
    const range = document.createRange();
    const node = [...cell.childNodes].find((n) => n.nodeType === 3 && n.textContent.trim());
    if (!node) continue;
    const text2 = node.textContent;
    let last = null;  // [index, top] of the last laid-out character
    for (let i = 0; i < text2.length; i++) {
      range.setStart(node, i); range.setEnd(node, i + 1);
      const rect = range.getBoundingClientRect();
      if (!rect.width) continue;  // a space collapsed at a line's end
      const top = Math.round(rect.top);
      // A new line must start after a space: the text between the two characters has one.
      if (last && top !== last[1] && !/\s/.test(text2.slice(last[0], i + 1))) {
        broken.push(text);
      }
      last = [i, top];
    }
  }
  return broken;
}"""


def four_systems_scored():
    """The scored task with a fourth system (a second self-reported one, of the team with
    the longest name), the 2017 preset, a team name of several words, scored and published
    in the results phase."""
    task = build_scored_task()
    task.melbourne.name = "Demo builders of Melbourne University"
    task.melbourne.save()
    start_phase_now(task.shared_task, "build")
    extra = system_services.system_create(
        team=task.melbourne, actor=task.melbourne_builder, name="replay", kind="self_reported"
    )
    start_phase_now(task.shared_task, "contest")
    upload_self_reported_pairs(task)
    rows = task.by_hand.versions.get().predictions.filter(source="pairs")
    data = "text,label\n" + "".join(
        f'"{row.text.replace(chr(34), chr(34) * 2)}",{row.label}\n' for row in rows
    )
    system_predictions.system_predictions_upload(
        system=extra, actor=task.melbourne_builder, data=data.encode(), filename="p.csv",
        source="pairs",
    )  # fmt: skip
    shared_task_preset_apply(
        shared_task=task.shared_task, actor=task.cast.organizer, key="2017-sentiment-replay"
    )
    run = score_now(task)
    assert run.status == "done", run.failure_reason
    # On a live database the phase changes above start runs of their own: publish this one.
    assert run.snapshot.counts["systems"] == 4
    snapshot_publish(snapshot=run.snapshot, actor=task.cast.organizer)
    start_phase_now(task.shared_task, "results")
    return task


def test_the_results_pages_use_the_screen_and_clip_no_column(transactional_db, screen):
    task = four_systems_scored()
    page = screen.page
    screen.log_in("olga", "pw-olga-123")
    names = ["Demo builders of Melbourne University", "Utrecht", "OSU", "Strawman"]
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 1000})
        for name, path in PAGES.items():
            screen.goto(path)
            main = page.locator("main").bounding_box()
            # The column widens with the window: all of it but the margins.
            assert main["width"] >= width - 8 * 16 - 2, (width, name, main)
            assert page.evaluate(CLIPPED) == [], (width, name)
            assert page.evaluate(NAME_LINES, names) == [], (width, name)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (width, name)
            screen.shot(f"{name}-{width}")
        screen.goto(PAGES["heat-map"])
        heat = page.get_by_role("table", name=re.compile("^Breaks per sentence"))
        columns = heat.locator("thead th")
        expect(columns).to_have_count(1 + 4)
        expect(columns.nth(4)).to_be_in_viewport()
        for caption in ["^% broken by strategy tag", "^% broken, per sentence"]:
            last = page.get_by_role("table", name=re.compile(caption)).locator("thead th").last
            expect(last).to_have_text("% broken")
            expect(last).to_be_in_viewport()
    assert task.shared_task.break_rate_mode == "sentences"

    # Narrower, where the columns are tight (a table may scroll in its region there), names
    # still wrap at their spaces only.
    page.set_viewport_size({"width": 1024, "height": 1000})
    for name, path in PAGES.items():
        screen.goto(path)
        assert page.evaluate(NAME_LINES, names) == [], name
    screen.shot("leaderboards-1024")

    # A phone: one column; a wide table scrolls inside its own region, never the page.
    page.set_viewport_size(PHONE)
    for name, path in PAGES.items():
        screen.goto(path)
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], name
        assert page.evaluate(NAME_LINES, names) == [], name
        screen.shot(f"{name}-phone")


def test_a_breaker_is_warned_of_an_unsubmitted_draft(transactional_db, screen):
    from ..conftest import build_cast

    cast = build_cast(current_phase="break")
    for pair in pair_inputs(GOOD_PAIRS[:3]):
        pair_services.pair_add(team=cast.breaker_team, user=cast.breaker, pair=pair)
    deadline = cast.shared_task.phases.get(kind=Phase.Kind.BREAK).ends_at
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/")
    warning = page.locator("[data-draft-warning]")
    expect(warning).to_contain_text("Your team's draft holds 3 unsubmitted pairs.")
    expect(warning).to_contain_text(f"the break phase ends {moment_text(deadline)}")
    screen.shot("warned-on-the-task-page")
    assert screen.axe_violations() == []
    warning.get_by_role("link", name="Submit the draft").click()
    expect(page.get_by_role("heading", name="Draft: one pair at a time")).to_be_visible()
    expect(page.locator("[data-draft-warning]")).to_be_visible()
    page.get_by_role("button", name="Submit the draft as a set").click()
    expect(page.get_by_text(re.compile(r"The draft is submitted as pair set \d+"))).to_be_visible()
    expect(page.locator("[data-draft-warning]")).to_have_count(0)
    screen.shot("submitted-no-warning")
