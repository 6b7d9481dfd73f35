"""An address whose token or digest holds a character no token has (a NUL, a space, a slash
encoded) names nothing: 404, never a 500 from the database refusing the text."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

WORKER_TOKEN = "w" * 40

ODD = ["ab%00cd", "%00", "ab cd", "ab.cd", "ab%E2%80%AEcd", "%C3%A9t%C3%A9"]


def signed_in(cast, who: str) -> Client:
    client = Client()
    client.force_login(getattr(cast, who))
    return client


@pytest.mark.parametrize("token", ODD)
@pytest.mark.parametrize(
    ("who", "address"),
    [
        ("anonymous", "/invitations/{}/"),
        ("anonymous", "/task-invitations/{}/"),
        ("outsider", "/invitations/{}/"),
        ("outsider", "/task-invitations/{}/"),
        ("organizer", "/invitations/{}/revoke/"),
    ],
)
def test_an_invitation_page_with_an_odd_token_is_404(cast, who, address, token):
    client = Client() if who == "anonymous" else signed_in(cast, who)
    assert client.get(address.format(token)).status_code == 404
    assert client.post(address.format(token)).status_code == 404


@pytest.mark.parametrize("token", ODD)
@pytest.mark.parametrize(
    "address",
    [
        "/api/v1/invitations/{}/accept/",
        "/api/v1/invitations/{}/revoke/",
        "/api/v1/task-invitations/{}/accept/",
        "/api/v1/task-invitations/{}/revoke/",
    ],
)
def test_an_api_invitation_address_with_an_odd_token_is_404(cast, address, token):
    response = cast.client("outsider").post(address.format(token))
    assert response.status_code == 404, response.content


@pytest.mark.parametrize("digest", [*ODD, "a" * 63 + "%00", "g" * 64])
def test_an_archive_address_with_an_odd_digest_is_404(settings, digest):
    settings.WORKER_TOKEN = WORKER_TOKEN
    response = Client().get(
        f"/api/v1/worker/archives/{digest}/", HTTP_AUTHORIZATION=f"Worker {WORKER_TOKEN}"
    )
    assert response.status_code == 404


@pytest.mark.parametrize(
    "address",
    [
        "/tasks/sst/data/%00/",
        "/tasks/sst/guidance/%00/edit/",
        "/tasks/sst/guidance/on%00/suggestions/",
        "/tasks/sst/organize/phases/%00/",
        "/api/v1/shared-tasks/sst/phases/%00/",
        "/api/v1/shared-tasks/sst/datasets/%00/examples/",
        "/api/v1/shared-tasks/sst/guidance/jobs/%00/",
    ],
)
@pytest.mark.parametrize("who", ["anonymous", "organizer", "breaker"])
def test_any_address_holding_nul_is_404(cast, address, who):
    client = Client() if who == "anonymous" else signed_in(cast, who)
    assert client.get(address).status_code == 404
    assert client.post(address).status_code == 404
