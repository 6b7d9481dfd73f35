"""axe-core on the main pages, as the role that sees each, in a real browser: no serious or
critical violation (the flows' own tests check the pages they pass through as well)."""

from __future__ import annotations

import pytest

from bibi.pairs import services as pair_services

from ..conftest import build_cast
from ..pairs.conftest import start_phase_now
from .conftest import TASK, build_scene

pytestmark = [pytest.mark.browser]

PAGES = {
    None: ["/", "/accounts/login/", "/accounts/password-reset/", f"{TASK}data/train/"],
    ("olga", "pw-olga-123"): [
        f"{TASK}organize/teams/",
        f"{TASK}organize/systems/",
        f"{TASK}organize/contests/",
        f"{TASK}data/blind_dev/",
        "/accounts/token/",
    ],
    ("bea", "pw-bea-123"): [f"{TASK}team/", f"{TASK}contests/", f"{TASK}contests/pairs/"],
    ("brian", "pw-brian-123"): [f"{TASK}team/", f"{TASK}contests/", f"{TASK}pairs/"],
}


def test_the_main_pages_have_no_serious_accessibility_violation(transactional_db, screen, settings):
    # Builders read (and contest) other teams' labels once the pair-prediction window closes:
    # here, with the break phase.
    settings.PAIR_PREDICTIONS_WINDOW_HOURS = 0
    scene = build_scene(build_cast())
    start_phase_now(scene.cast.shared_task, "contest")
    pair = scene.pair_set.pairs.first()
    pair_services.contest_create(
        pair=pair, user=scene.cast.builder, reason="The label reads the other way."
    )
    found = {}
    for login, paths in PAGES.items():
        screen.page.context.clear_cookies()
        if login:
            screen.log_in(*login)
        for path in paths:
            screen.goto(path)
            screen.shot(path.strip("/").replace("/", "-") or "home")
            violations = screen.axe_violations()
            if violations:
                found[(login[0] if login else "anonymous", path)] = violations
    assert found == {}
    assert screen.csp_violations == []


def test_the_api_docs_run_their_set_up_script_under_the_policy(transactional_db, screen):
    screen.goto("/api/v1/docs/")
    # Swagger UI draws the schema's title only once its set-up script (a file) has run.
    screen.page.locator(".swagger-ui .info .title").wait_for()
    assert screen.csp_violations == []


def test_the_policy_check_sees_a_refused_inline_script(transactional_db, screen):
    build_cast()
    screen.goto("/tasks/sst/")
    with screen.page.expect_console_message(lambda m: "Content Security Policy" in m.text):
        screen.page.evaluate(
            "() => { const s = document.createElement('script');"
            " s.textContent = 'window.ran = true'; document.body.append(s); }"
        )
    assert screen.page.evaluate("() => window.ran === undefined")
    assert any("inline script" in v for v in screen.csp_violations), screen.csp_violations
    # Seen: the fixture's own check after the test must not count it.
    screen.csp_violations.clear()


def test_the_check_finds_a_violation_where_there_is_one(screen):
    screen.page.set_content(
        '<html lang="en"><head><title>t</title></head><body><main>'
        '<img src="data:,"><p style="color:#bbb;background:#fff">faint</p></main></body></html>'
    )
    rules = {violation["rule"] for violation in screen.axe_violations()}
    assert {"image-alt", "color-contrast"} <= rules
