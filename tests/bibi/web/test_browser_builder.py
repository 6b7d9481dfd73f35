"""A builder in a real browser: a team, a hosted system, an upload with its progress bar,
and the system page following validation until the version is ready.

On the services backend a real Celery worker validates the upload; on the embedded
default the task runs in the live server's process, as in the demo.
"""

from __future__ import annotations

import re
import secrets
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from ..conftest import build_cast
from ..systems.conftest import TINY_MODELS, zip_directory
from .conftest import WORKER_BOUND_MS

pytestmark = [pytest.mark.browser, pytest.mark.embedded, pytest.mark.slow]


def padded_archive(folder: Path) -> Path:
    """The tiny bag-of-words model with half a megabyte of notes: an upload that takes a while."""
    model = folder / "model"
    shutil.copytree(TINY_MODELS / "tiny-bow", model)
    # Notes as a person writes them: a heading line, then half a megabyte of text.
    (model / "NOTES.txt").write_text("# Notes\n" + secrets.token_hex(256 * 1024) + "\n")
    archive = folder / "tiny-bow.zip"
    archive.write_bytes(zip_directory(model))
    return archive


def test_a_builder_uploads_a_hosted_system_and_watches_it_become_ready(
    transactional_db, worker, screen, tmp_path
):
    build_cast(current_phase="build")
    archive = padded_archive(tmp_path)
    page = screen.page

    screen.log_in("oscar", "pw-oscar-123")
    screen.goto("/tasks/sst/")
    page.get_by_role("link", name="Take part: create or join a team").click()
    page.get_by_label("Builder").check()
    page.get_by_label("Team name").fill("Melbourne")
    screen.shot("team-form")
    page.get_by_role("button", name="Create the team").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Melbourne")

    page.get_by_role("link", name="The team's systems").click()
    page.get_by_label("System name").fill("bow")
    page.get_by_label("Hosted: the platform runs the model").check()
    screen.shot("systems")
    assert screen.axe_violations() == []
    page.get_by_role("button", name="Create the system").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("bow")

    # Slow the upload down (128 KB/s) so the progress bar is seen moving before it completes.
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send(
        "Network.emulateNetworkConditions",
        {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 128 * 1024},
    )
    page.get_by_label("Model archive").set_input_files(archive)
    # The script sends the file, then opens the answer's location: this very page's address.
    # A wait for that URL would end at once, before the navigation, so wait for the
    # navigation itself, set up before the click that leads to it.
    with page.expect_navigation(url=re.compile(r"/tasks/sst/systems/\d+/$")):
        page.get_by_role("button", name="Upload").click()
        page.wait_for_function(
            "() => { const v = document.querySelector('#upload-progress-bar').value;"
            " return v > 0 && v < 100; }"
        )
        assert re.fullmatch(
            r"\d+% of [\d.]+ KB sent", page.locator("[data-progress-text]").inner_text()
        )
        screen.shot("uploading")
        cdp.send(
            "Network.emulateNetworkConditions",
            {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1},
        )
    screen.shot("uploaded")

    # The page follows validation by itself (system_status.js) and, once the version is no
    # longer pending, reloads to show its outcome: the dev accuracy appears only then.
    page.get_by_text("Dev accuracy").first.wait_for(timeout=WORKER_BOUND_MS)
    expect(page.locator('[data-version-status="1"]')).to_have_text("Ready")
    expect(page.locator("main")).to_contain_text("The active version is version 1")
    screen.shot("ready")
    assert screen.axe_violations() == []


def test_an_archive_over_the_limit_is_refused_before_it_is_sent(
    transactional_db, screen, settings, tmp_path
):
    cast = build_cast(current_phase="build")
    from bibi.systems import services

    system = services.system_create(
        team=cast.builder_team, actor=cast.builder, name="big", kind="hosted"
    )
    settings.SYSTEM_UPLOAD_MAX_BYTES = 1000
    archive = tmp_path / "tiny-bow.zip"
    archive.write_bytes(zip_directory(TINY_MODELS / "tiny-bow"))
    page = screen.page
    screen.log_in("bea", "pw-bea-123")
    screen.goto(f"/tasks/sst/systems/{system.id}/")
    page.get_by_label("Model archive").set_input_files(archive)
    page.get_by_role("button", name="Upload").click()
    alert = page.locator("[data-upload-errors]")
    alert.wait_for()
    # The script's own words (the server writes "1,000 bytes"): the file was never sent.
    assert "larger than the limit of 1000 bytes" in alert.inner_text()
    screen.shot("refused")
    assert not system.versions.exists()
