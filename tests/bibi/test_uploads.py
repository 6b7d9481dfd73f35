"""Every upload has a size limit, enforced while the body streams in, and who may upload is
asked before the body is read: a refused upload is never received (``bibi.uploads``).

The four kinds of upload (examples import, pair-set file, predictions, model archive) are
exercised alike. A request is built whole, then its body is swapped for a ``Tripwire`` that
counts what the server reads of it.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.handlers.wsgi import LimitedStream
from django.urls import resolve
from rest_framework.authtoken.models import Token
from rest_framework.test import APIRequestFactory

from bibi.pairs.models import PairSet
from bibi.sharedtasks.models import Example, SharedTask
from bibi.systems import services as system_services
from bibi.systems.models import Prediction, System, SystemVersion

from .conftest import Cast, build_cast

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

BASE = "/api/v1/shared-tasks/sst"


class Tripwire(io.BytesIO):
    """A request body that counts the bytes anyone reads of it."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.bytes_read = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.bytes_read += len(data)
        return data

    def readline(self, size: int | None = -1) -> bytes:
        data = super().readline(size)
        self.bytes_read += len(data)
        return data


@dataclass
class Kind:
    """One kind of upload: where it goes, what it carries, what it would store."""

    name: str
    setting: str
    phase: str  # the phase running when the uploader may upload
    uploader: str
    field: str
    filename: str
    form: Callable[[System | None], dict[str, str]]
    url: Callable[[System | None], str]
    system_kind: str | None
    stored: Callable[[], int]


KINDS = {
    "examples": Kind(
        name="examples",
        setting="EXAMPLES_UPLOAD_MAX_BYTES",
        phase="build",
        uploader="organizer",
        field="file",
        filename="train.csv",
        form=lambda system: {},
        url=lambda system: f"{BASE}/datasets/train/import/",
        system_kind=None,
        stored=lambda: Example.objects.count(),
    ),
    "pair_set": Kind(
        name="pair_set",
        setting="PAIR_SET_UPLOAD_MAX_BYTES",
        phase="break",
        uploader="breaker",
        field="file",
        filename="pairs.csv",
        form=lambda system: {},
        url=lambda system: f"{BASE}/pair-sets/",
        system_kind=None,
        stored=lambda: PairSet.objects.count(),
    ),
    "predictions": Kind(
        name="predictions",
        setting="PREDICTIONS_UPLOAD_MAX_BYTES",
        phase="build",
        uploader="builder",
        field="file",
        filename="dev.csv",
        form=lambda system: {"source": "blind_dev"},
        url=lambda system: f"{BASE}/systems/{system.id}/predictions/",
        system_kind="self_reported",
        stored=lambda: Prediction.objects.count() + SystemVersion.objects.count(),
    ),
    "archive": Kind(
        name="archive",
        setting="SYSTEM_UPLOAD_MAX_BYTES",
        phase="build",
        uploader="builder",
        field="archive",
        filename="model.zip",
        form=lambda system: {},
        url=lambda system: f"{BASE}/systems/{system.id}/versions/",
        system_kind="hosted",
        stored=lambda: SystemVersion.objects.count(),
    ),
}


def world(kind: Kind) -> tuple[Cast, System | None]:
    cast = build_cast(current_phase=kind.phase)
    system = None
    if kind.system_kind:
        system = system_services.system_create(
            team=cast.builder_team, actor=cast.builder, name="sys", kind=kind.system_kind
        )
    return cast, system


def send(
    cast: Cast, kind: Kind, system: System | None, size: int, *, who: str | None = None
) -> tuple[Any, Tripwire]:
    """POST a ``size``-byte file of ``kind`` as ``who``; the response and what was read."""
    user = getattr(cast, who or kind.uploader)
    token, _ = Token.objects.get_or_create(user=user)
    payload = b"id,text,label\n" + b"x" * max(0, size - 14)
    request = APIRequestFactory().post(
        kind.url(system),
        {kind.field: SimpleUploadedFile(kind.filename, payload), **kind.form(system)},
        format="multipart",
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )
    body = request._stream.read()
    tripwire = Tripwire(body)
    request._stream = LimitedStream(tripwire, len(body))
    match = resolve(kind.url(system))
    response = match.func(request, *match.args, **match.kwargs)
    response.render()
    return response, tripwire


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS)
def test_an_upload_declared_over_its_limit_is_refused_with_413_unread(kind, settings):
    cast, system = world(kind)
    setattr(settings, kind.setting, 1000)
    before = kind.stored()
    response, body = send(cast, kind, system, 200_000)
    assert response.status_code == 413, response.content[:300]
    assert response.data["limit_bytes"] == 1000
    assert "larger than the limit of 1,000 bytes" in response.data["detail"]
    assert body.bytes_read == 0
    assert kind.stored() == before


@pytest.mark.parametrize("kind", KINDS.values(), ids=KINDS)
def test_an_upload_streamed_past_its_limit_is_cut_off_with_413_and_leaves_no_file(
    kind, settings, tmp_path
):
    cast, system = world(kind)
    setattr(settings, kind.setting, 1000)
    # Spooled to disk from the first byte, so a file half-received would stay behind.
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    before = kind.stored()
    response, _ = send(cast, kind, system, 30_000)
    assert response.status_code == 413, response.content[:300]
    assert "larger than the limit of 1,000 bytes" in response.data["detail"]
    assert kind.stored() == before
    assert list(tmp_path.iterdir()) == []


def test_a_json_body_over_its_limit_is_refused_with_413_unread(settings):
    cast = build_cast(current_phase="break")
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    token, _ = Token.objects.get_or_create(user=cast.breaker)
    body = json.dumps([{"original_id": "s1", "variant_text": "x" * 100}] * 50).encode()
    request = APIRequestFactory().post(
        f"{BASE}/pair-sets/",
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Token {token.key}",
    )
    request._stream = LimitedStream(tripwire := Tripwire(body), len(body))
    match = resolve(f"{BASE}/pair-sets/")
    response = match.func(request, *match.args, **match.kwargs)
    response.render()
    assert response.status_code == 413
    assert response.data == {
        "detail": "The request body (without its files) is larger than the limit of 1,000 bytes.",
        "limit_bytes": 1000,
    }
    assert tripwire.bytes_read == 0
    assert PairSet.objects.count() == 0


REFUSALS = [
    # (kind, who, how the world is set so that they may not upload now, status)
    ("archive", "organizer", None, 403),
    ("archive", "builder", "phase_closed", 400),
    ("archive", "builder", "quota_used", 400),
    ("predictions", "organizer", None, 403),
    ("predictions", "builder", "phase_closed", 400),
    ("pair_set", "builder", None, 403),
    ("pair_set", "breaker", "phase_closed", 400),
    ("pair_set", "breaker", "quota_used", 400),
    ("examples", "breaker", None, 403),
]


def use_quota(cast: Cast, system: System | None) -> None:
    SharedTask.objects.filter(id=cast.shared_task.id).update(
        max_uploads_per_system=0, max_pair_sets_per_team=0
    )


@pytest.mark.parametrize(("kind", "who", "situation", "status"), REFUSALS)
def test_who_may_upload_and_when_is_asked_before_the_body_is_read(kind, who, situation, status):
    kind = KINDS[kind]
    cast, system = world(kind)
    if situation == "phase_closed":
        shift_phases_before_upload(cast, kind)
    elif situation == "quota_used":
        use_quota(cast, system)
    before = kind.stored()
    response, body = send(cast, kind, system, 200_000, who=who)
    assert response.status_code == status, response.content[:300]
    assert body.bytes_read == 0
    assert kind.stored() == before


def test_an_import_into_a_frozen_split_is_refused_before_the_file_is_read():
    kind = dataclasses.replace(
        KINDS["examples"], phase="break", url=lambda system: f"{BASE}/datasets/blind_dev/import/"
    )
    cast, system = world(kind)
    before = kind.stored()
    response, body = send(cast, kind, system, 200_000)
    assert response.status_code == 400, response.content[:300]
    assert "frozen" in str(response.data["split"])
    assert body.bytes_read == 0
    assert kind.stored() == before


def shift_phases_before_upload(cast: Cast, kind: Kind) -> None:
    """Lay the phases out so the one ``kind`` needs has not begun (and, for predictions,
    the break phase has not ended either: neither source may be uploaded)."""
    from datetime import timedelta

    for phase in cast.shared_task.phases.all():
        phase.starts_at += timedelta(days=100)
        phase.ends_at += timedelta(days=100)
        phase.save()


def test_the_archive_quota_is_checked_before_the_archive_is_stored(settings, tmp_path):
    settings.UPLOAD_ROOT = tmp_path
    kind = KINDS["archive"]
    cast, system = world(kind)
    use_quota(cast, system)
    system = System.objects.get(id=system.id)

    class Unread(SimpleUploadedFile):
        read_from = False

        def chunks(self, chunk_size: int | None = None):
            type(self).read_from = True
            return super().chunks(chunk_size)

    archive = Unread("model.zip", b"PK" + b"x" * 5000)
    with pytest.raises(ValidationError, match="has used its 0 upload"):
        system_services.system_version_upload(system=system, actor=cast.builder, archive=archive)
    assert not Unread.read_from
    assert not list(tmp_path.rglob("*.archive"))
