"""Signing up, logging in and out, resetting a password, and the API token page."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.test import Client
from rest_framework.authtoken.models import Token

from .conftest import page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def sign_up(client: Client, username: str = "nina", **extra: str):
    return client.post(
        "/accounts/signup/",
        {
            "username": username,
            "email": f"{username}@example.org",
            "password1": "a long enough passphrase",
            "password2": "a long enough passphrase",
            **extra,
        },
    )


def test_signing_up_creates_the_account_and_logs_in():
    client = Client()
    response = sign_up(client)
    assert response.status_code == 302
    assert response["Location"] == "/"
    home = client.get("/").content.decode()
    assert 'Log out <span class="mono">nina</span>' in home
    assert "Welcome, nina" in home


def test_signing_up_goes_back_to_where_the_visitor_came_from_but_never_off_site():
    assert sign_up(Client(), next="/tasks/sst/")["Location"] == "/tasks/sst/"
    assert sign_up(Client(), "mallory", next="https://evil.example/")["Location"] == "/"


def test_a_signup_with_mismatched_passwords_says_so_and_creates_nobody():
    response = Client().post(
        "/accounts/signup/",
        {"username": "nina", "email": "n@example.org", "password1": "a long enough passphrase",
         "password2": "another passphrase"},
    )  # fmt: skip
    assert response.status_code == 400
    assert "The two password fields didn’t match." in response.content.decode()
    assert not get_user_model().objects.filter(username="nina").exists()


def test_logging_in_and_out(cast):
    client = Client()
    response = client.post(
        "/accounts/login/", {"username": "bea", "password": "pw-bea-123", "next": "/tasks/sst/"}
    )
    assert response["Location"] == "/tasks/sst/"
    assert "Log out" in client.get("/").content.decode()
    # Logging out is a POST with the CSRF token, never a link a third-party page could embed.
    assert client.get("/accounts/logout/").status_code == 405
    client.post("/accounts/logout/")
    assert "Log in" in client.get("/").content.decode()


def test_a_forgotten_password_is_reset_through_the_emailed_link(cast):
    cast.builder.email = "bea@example.org"
    cast.builder.save()
    client = Client()
    response = client.post("/accounts/password-reset/", {"email": "bea@example.org"})
    assert response["Location"] == "/accounts/password-reset/sent/"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["bea@example.org"]
    assert message.subject == "Your bibi password"
    link = re.search(r"http://testserver(/accounts/reset/\S+/)", message.body).group(1)

    form = client.get(link, follow=True)
    assert "Choose a new password" in form.content.decode()
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "brand new passphrase", "new_password2": "brand new passphrase"},
    )
    assert done["Location"] == "/accounts/reset/done/"
    assert Client().login(username="bea", password="brand new passphrase")
    # The link works once.
    again = client.get(link, follow=True)
    assert "This link does not work any more" in again.content.decode()


def test_a_reset_for_an_unknown_address_says_the_same_and_sends_nothing(cast):
    response = Client().post("/accounts/password-reset/", {"email": "nobody@example.org"})
    assert response["Location"] == "/accounts/password-reset/sent/"
    assert mail.outbox == []


def test_the_token_page_creates_shows_and_rotates_the_api_token(cast):
    client = page_client(cast, "builder")
    assert "You have no token yet." in client.get("/accounts/token/").content.decode()

    client.post("/accounts/token/rotate/")
    first = Token.objects.get(user=cast.builder).key
    assert first in client.get("/accounts/token/").content.decode()

    api = Client(HTTP_AUTHORIZATION=f"Token {first}")
    assert api.get("/api/v1/me/memberships/").status_code == 200

    asked = client.post("/accounts/token/rotate/")
    assert asked.status_code == 200
    assert "Replace your API token?" in asked.content.decode()
    assert Token.objects.get(user=cast.builder).key == first
    assert api.get("/api/v1/me/memberships/").status_code == 200

    client.post("/accounts/token/rotate/", {"confirm": "yes"})
    second = Token.objects.get(user=cast.builder).key
    assert second != first
    page = client.get("/accounts/token/").content.decode()
    assert second in page and first not in page
    assert api.get("/api/v1/me/memberships/").status_code == 401
    assert (
        Client(HTTP_AUTHORIZATION=f"Token {second}").get("/api/v1/me/memberships/").status_code
        == 200
    )


def test_the_token_is_rotated_only_by_a_post_with_the_csrf_token(cast):
    client = Client(enforce_csrf_checks=True)
    client.force_login(cast.builder)
    assert client.get("/accounts/token/rotate/").status_code == 405
    forged = client.post("/accounts/token/rotate/")
    assert forged.status_code == 403
    assert "The form could not be sent" in forged.content.decode()
    assert not Token.objects.filter(user=cast.builder).exists()


def _email_settings(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("EMAIL_")}
    clean.update(DEBUG="1", **env)
    code = "import bibi.settings as s; print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT)"
    return subprocess.run(
        [sys.executable, "-c", code], env=clean, capture_output=True, text=True, timeout=60
    )


def test_email_goes_to_the_console_unless_an_smtp_host_is_set():
    console = _email_settings({})
    assert console.stdout.split()[0] == "django.core.mail.backends.console.EmailBackend"
    smtp = _email_settings({"EMAIL_HOST": "smtp.example.org", "EMAIL_PORT": "465",
                            "EMAIL_USE_SSL": "1", "EMAIL_USE_TLS": "0"})  # fmt: skip
    assert smtp.stdout.split() == [
        "django.core.mail.backends.smtp.EmailBackend", "smtp.example.org", "465",
    ]  # fmt: skip


def test_tls_and_ssl_together_are_refused_with_the_fix():
    result = _email_settings({"EMAIL_HOST": "smtp.example.org", "EMAIL_USE_SSL": "1"})
    assert result.returncode != 0
    assert "set EMAIL_USE_SSL=1 and EMAIL_USE_TLS=0" in result.stderr
