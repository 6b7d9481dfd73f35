"""Only the team's members and the organizers see a system's status, files and dev scores."""

from __future__ import annotations

import pytest

from bibi.systems import services, validation

from ..conftest import ROLES
from .conftest import TINY_MODELS, archive_upload

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

SEES = {"organizer", "builder"}


@pytest.fixture
def validated(hosted):
    cast, system = hosted
    version = services.system_version_upload(
        system=system, actor=cast.builder, archive=archive_upload(TINY_MODELS / "tiny-bow")
    )
    validation.system_version_validate(version_id=version.id)
    return cast, system


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("path", ["", "versions/1/", "versions/1/starter-fisher/"])
def test_a_system_is_visible_to_its_team_and_the_organizers_only(validated, role, path):
    cast, system = validated
    response = cast.client(role).get(f"/api/v1/shared-tasks/sst/systems/{system.id}/{path}")
    expected = 200 if role in SEES else (401 if role == "anonymous" else 404)
    assert response.status_code == expected


@pytest.mark.parametrize("role", ROLES)
def test_the_system_list_shows_only_what_the_caller_may_see(validated, role):
    cast, system = validated
    response = cast.client(role).get("/api/v1/shared-tasks/sst/systems/")
    if role == "anonymous":
        assert response.status_code == 401
        return
    names = [row["name"] for row in response.json()["results"]]
    assert names == (["cnn"] if role in SEES else [])
    if role not in SEES:
        assert b"dev_accuracy" not in response.content


@pytest.mark.parametrize("role", ["organizer", "other_organizer", "breaker", "outsider"])
def test_only_the_team_uploads_and_activates(validated, role):
    cast, system = validated
    client = cast.client(role)
    upload = client.post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-bow")},
        format="multipart",
    )
    activate = client.post(f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/1/activate/")
    assert upload.status_code == (403 if role == "organizer" else 404)
    assert activate.status_code == (403 if role == "organizer" else 404)
    assert system.versions.count() == 1


def test_only_builder_team_members_create_systems(validated):
    cast, _ = validated
    assert (
        cast.client("breaker")
        .post("/api/v1/shared-tasks/sst/systems/", {"name": "x", "kind": "hosted"}, format="json")
        .status_code
        == 400
    )
    assert (
        cast.client("outsider")
        .post("/api/v1/shared-tasks/sst/systems/", {"name": "x", "kind": "hosted"}, format="json")
        .status_code
        == 403
    )


def test_an_oversized_archive_is_cut_off_while_it_streams(hosted, settings):
    cast, system = hosted
    settings.SYSTEM_UPLOAD_MAX_BYTES = 1000
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/versions/",
        {"archive": archive_upload(TINY_MODELS / "tiny-bow")},
        format="multipart",
    )
    assert response.status_code == 413
    assert response.json() == {
        "detail": "The model archive is larger than the limit of 1,000 bytes.",
        "limit_bytes": 1000,
    }
    assert not system.versions.exists()
