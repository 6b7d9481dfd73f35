"""A breaker in a real browser: a refused pair set with every row listed, a good one, a
pair built from the starter set in the draft, and the final mark."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from bibi.pairs.models import PairSet

from ...conftest import REPO_ROOT
from ..conftest import build_cast

pytestmark = [pytest.mark.browser, pytest.mark.embedded]

PAIR_FIXTURES = REPO_ROOT / "fixtures" / "pairs"
WEB_FIXTURES = REPO_ROOT / "fixtures" / "web"


def test_a_breaker_sees_every_bad_row_then_submits_a_good_set(transactional_db, screen):
    cast = build_cast()
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/")
    page.get_by_role("link", name="Pairs").click()

    upload = page.get_by_role("region", name="Upload a pair set")
    upload.get_by_label("Pair-set file").set_input_files(WEB_FIXTURES / "pairs-bad.csv")
    upload.get_by_role("button", name="Upload and check").click()
    alert = page.locator("#rejected")
    expect(alert).to_contain_text("Nothing was stored: 4 problem(s) in pairs-bad.csv.")
    # Each kind once, then the rows by line, folded away until asked for.
    expect(page.locator("#rejected-errors")).to_be_hidden()
    page.locator("#rejected-lines summary").click()
    lines = [
        row.inner_text().split("\t")[0] for row in page.locator("#rejected-errors tbody tr").all()
    ]
    assert lines == ["2", "3", "4", "5"]
    expect(page.locator("#rejected-groups tbody tr")).to_have_count(3)
    screen.shot("refused")
    assert screen.axe_violations() == []
    assert not PairSet.objects.exists()

    upload = page.get_by_role("region", name="Upload a pair set")
    upload.get_by_label("Pair-set file").set_input_files(PAIR_FIXTURES / "background.csv")
    upload.get_by_role("button", name="Upload and check").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Pair set"))
    expect(page.get_by_role("cell", name="I'm mad for this movie!")).to_be_visible()
    screen.shot("submitted")
    assert screen.axe_violations() == []

    # One more pair, started from the starter set and checked before it joins the draft.
    page.get_by_role("link", name="Starter set").first.click()
    page.get_by_role("link", name="Start a pair from s4").click()
    variant = page.get_by_label("Variant", exact=True)
    assert variant.input_value() == "Russell is terrific as coach Herb Brooks."
    variant.fill("Russell is terrific as coach Herb Brooks.")
    page.get_by_label("The variant's label").select_option("positive")
    page.get_by_role("button", name="Check and add").click()
    expect(page.locator("main")).to_contain_text("the variant is identical to the original")
    screen.shot("pair-refused")
    page.get_by_label("Variant", exact=True).fill("Russell is not terrific as coach Herb Brooks.")
    page.get_by_label("The variant's label").select_option("negative")
    page.get_by_label("semantics").check()
    page.get_by_role("button", name="Check and add").click()
    expect(page.get_by_text("The pair is checked and added to the draft.")).to_be_visible()
    page.get_by_role("button", name="Submit the draft as a set").click()
    second = PairSet.objects.filter(team=cast.breaker_team).order_by("-id").first()
    assert second.pairs.count() == 1

    page.get_by_role("link", name="Pairs").click()
    first = PairSet.objects.filter(team=cast.breaker_team).order_by("id").first()
    page.get_by_role("button", name=f"Mark set {first.id} final").click()
    expect(page.get_by_text(f"Pair set {first.id} is your team's final entry.")).to_be_visible()
    screen.shot("final")
    assert screen.axe_violations() == []


def test_a_breaker_stores_the_passing_pairs_of_a_file_and_downloads_the_refused_rows(
    transactional_db, screen
):
    cast = build_cast()
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/pairs/")
    expect(page.locator("#sets-left")).to_contain_text("may submit 10 more sets")

    upload = page.get_by_role("region", name="Upload a pair set")
    upload.get_by_label("Pair-set file").set_input_files(WEB_FIXTURES / "pairs-partial.csv")
    upload.get_by_label("Store the pairs that pass and list the refused rows").check()
    upload.get_by_role("button", name="Upload and check").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Pair set"))
    expect(page.locator("main")).to_contain_text("2 rows of the file were refused and left out")
    refused = page.locator("#refused-rows tbody tr")
    expect(refused).to_have_count(2)
    expect(refused.nth(0)).to_contain_text("unchanged")
    expect(refused.nth(1)).to_contain_text("token edits away")
    screen.shot("partial-set")
    assert screen.axe_violations() == []
    pair_set = PairSet.objects.get(team=cast.breaker_team)
    assert pair_set.pairs.count() == 2

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download the refused rows").click()
    download = download_info.value
    assert download.suggested_filename == f"pairs-partial-refused-set-{pair_set.id}.csv"
    lines = Path(download.path()).read_text(encoding="utf-8").splitlines()
    assert lines[0] == "line,rule,setting,reason,content"
    # The file's header row first, so that the download uploads again once fixed.
    assert [line.split(",")[0] for line in lines[1:]] == ["1", "3", "5"]

    # The same file again is recognised, and the quota shown is untouched.
    screen.goto("/tasks/sst/pairs/")
    upload = page.get_by_role("region", name="Upload a pair set")
    upload.get_by_label("Pair-set file").set_input_files(WEB_FIXTURES / "pairs-partial.csv")
    upload.get_by_label("Store the pairs that pass and list the refused rows").check()
    upload.get_by_role("button", name="Upload and check").click()
    expect(page.locator("main")).to_contain_text(f"identical to pair set {pair_set.id}")
    expect(page.locator("#sets-left")).to_contain_text("may submit 9 more sets")
    screen.shot("partial-again")
    assert PairSet.objects.count() == 1


def test_a_breaker_adds_the_fixed_refused_rows_to_their_set(transactional_db, screen, tmp_path):
    cast = build_cast()
    page = screen.page
    screen.log_in("brian", "pw-brian-123")
    screen.goto("/tasks/sst/pairs/")
    upload = page.get_by_role("region", name="Upload a pair set")
    upload.get_by_label("Pair-set file").set_input_files(WEB_FIXTURES / "pairs-partial.csv")
    upload.get_by_label("Store the pairs that pass and list the refused rows").check()
    upload.get_by_role("button", name="Upload and check").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Pair set"))
    first = PairSet.objects.get(team=cast.breaker_team)

    with page.expect_download() as download_info:
        page.get_by_role("link", name="Download the refused rows").click()
    refused = Path(download_info.value.path()).read_text(encoding="utf-8")
    fixed = refused.replace("s1,I love this movie!,positive,", "s1,I adore this movie!,positive,")
    assert fixed != refused
    (tmp_path / "refused.csv").write_text(fixed, encoding="utf-8")

    page.get_by_role("link", name="add them to this set").click()
    upload = page.get_by_role("region", name="Upload a pair set")
    expect(upload.get_by_label("Add to a set")).to_have_value(str(first.id))
    upload.get_by_label("Pair-set file").set_input_files(tmp_path / "refused.csv")
    upload.get_by_label("Store the pairs that pass and list the refused rows").check()
    upload.get_by_role("button", name="Upload and check").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(re.compile(r"^Pair set"))
    expect(page.locator("main")).to_contain_text(
        f"This set holds the 2 pairs of set {first.id} and the 1 pair added to them: 3 pairs"
    )
    expect(page.locator("main")).not_to_contain_text("Line :")
    expect(page.get_by_role("cell", name="I adore this movie!")).to_be_visible()
    screen.shot("fix-added")
    assert screen.axe_violations() == []
    added = PairSet.objects.exclude(pk=first.pk).get(team=cast.breaker_team)
    assert added.pairs.count() == 3
    assert first.pairs.count() == 2
