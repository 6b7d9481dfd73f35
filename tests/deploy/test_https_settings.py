"""A deployment is https-only unless told otherwise; local work over plain http still works."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

REPO_ROOT = Path(__file__).resolve().parents[2]

HTTPS_SETTINGS = (
    "s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
    "s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_INCLUDE_SUBDOMAINS, s.SECURE_HSTS_PRELOAD, "
    "s.SECURE_PROXY_SSL_HEADER"
)


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


def test_a_deployment_is_https_only_by_default(settings_with):
    result = settings_with({"DEBUG": "0", "SECRET_KEY": "x" * 50}, HTTPS_SETTINGS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(True, True, True, 31536000, True, True, None)"


def test_local_work_over_plain_http_gets_the_relaxed_values(settings_with):
    result = settings_with({"DEBUG": "1"}, HTTPS_SETTINGS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(False, False, False, 0, False, False, None)"


def test_each_https_setting_can_be_turned_off_on_its_own(settings_with):
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "no",
        "CSRF_COOKIE_SECURE": "false",
        "SECURE_HSTS_SECONDS": "3600",
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": "off",
        "SECURE_HSTS_PRELOAD": "0",
    }
    result = settings_with(env, HTTPS_SETTINGS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(False, False, False, 3600, False, False, None)"


def test_it_trusts_the_proxy_header_it_is_named(settings_with):
    env = {"DEBUG": "0", "SECRET_KEY": "x" * 50, "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto"}
    result = settings_with(env, "s.SECURE_PROXY_SSL_HEADER")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https')"


def test_it_says_the_proxy_header_is_a_name_not_a_header_line(settings_with):
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "x" * 50,
        "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto: https",
    }
    result = settings_with(env, "s.SECURE_PROXY_SSL_HEADER")
    assert result.returncode != 0
    assert (
        "SECURE_PROXY_SSL_HEADER='X-Forwarded-Proto: https' is not a header name" in result.stderr
    )


def test_it_says_which_https_variable_is_not_a_boolean(settings_with):
    env = {"DEBUG": "0", "SECRET_KEY": "x" * 50, "SECURE_HSTS_PRELOAD": "sometimes"}
    result = settings_with(env, "s.SECURE_HSTS_PRELOAD")
    assert result.returncode != 0
    assert "SECURE_HSTS_PRELOAD='sometimes' is not a boolean" in result.stderr


@pytest.mark.django_db
def test_plain_http_is_redirected_to_https_but_health_probes_are_not(client):
    with override_settings(SECURE_SSL_REDIRECT=True, CELERY_TASK_ALWAYS_EAGER=True):
        page = client.get("/api/v1/schema/")
        probe = client.get("/healthz")
    assert page.status_code == 301
    assert page["Location"] == "https://testserver/api/v1/schema/"
    assert probe.status_code == 200


def test_a_request_the_named_proxy_marks_https_is_not_redirected(client):
    with override_settings(
        SECURE_SSL_REDIRECT=True, SECURE_PROXY_SSL_HEADER=("HTTP_X_FORWARDED_PROTO", "https")
    ):
        through_proxy = client.get("/api/v1/schema/", headers={"X-Forwarded-Proto": "https"})
        around_it = client.get("/api/v1/schema/", headers={"X-Forwarded-Proto": "http"})
    assert through_proxy.status_code == 200
    assert around_it.status_code == 301


def test_check_deploy_passes_with_production_settings(production_env):
    result = _check_deploy(production_env)
    assert result.returncode == 0, result.stderr
    assert "System check identified no issues" in result.stdout


# Django's deploy checks are independent of each other: one run with the three turned off
# must name each one's own warning (one `manage.py check` where three would cost thrice).
HTTPS_OFF_WARNINGS = {
    "SECURE_SSL_REDIRECT": "security.W008",
    "SECURE_HSTS_SECONDS": "security.W004",
    "SESSION_COOKIE_SECURE": "security.W012",
}


def test_check_deploy_fails_and_names_each_https_setting_a_deployment_turns_off(production_env):
    result = _check_deploy({**production_env, **dict.fromkeys(HTTPS_OFF_WARNINGS, "0")})
    assert result.returncode != 0
    for variable, warning in HTTPS_OFF_WARNINGS.items():
        assert warning in result.stderr, (variable, result.stderr)
