"""The one endpoint gpu workers call on the platform: a model archive by its digest.

A worker on a machine of its own (no shared volume, no bucket) fetches the archives it needs
here (``bibi.systems.model_store``). The endpoint answers the worker credential alone
(``WORKER_TOKEN``, sent as ``Authorization: Worker <token>`` and compared in constant time):
a user's session or API token gets nothing, since an archive is a team's private model. With
no ``WORKER_TOKEN`` set the endpoint is off and answers 404, as it does for a digest no
stored archive has. Requests are throttled per address (``WORKER_ARCHIVE_THROTTLE``, 60 a
minute), counted before the credential is checked, so guessing it is slow too; as every API
throttle, it lets a request through while the cache that counts is down (``bibi.throttling``).
"""

from __future__ import annotations

import hmac
import math
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import FileResponse, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from bibi.systems.models import SystemVersion
from bibi.throttling import FailOpenThrottle

SCHEME = "Worker "


def worker_credential_ok(request: HttpRequest) -> bool:
    """True when the request carries the worker credential (constant-time comparison)."""
    expected = settings.WORKER_TOKEN
    header = request.headers.get("Authorization", "")
    if not expected or not header.startswith(SCHEME):
        return False
    return hmac.compare_digest(header[len(SCHEME) :].encode(), expected.encode())


class WorkerArchiveThrottle(FailOpenThrottle):
    """Requests for archives, per caller's address (``WORKER_ARCHIVE_THROTTLE``)."""

    scope = "worker_archive"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


def _refusal(status: int, detail: str) -> HttpResponse:
    return JsonResponse({"detail": detail}, status=status)


@require_GET
def worker_archive_download(request: HttpRequest, sha256: str) -> HttpResponse:
    """The stored archive whose SHA-256 is ``sha256``, to the worker credential only."""
    throttle = WorkerArchiveThrottle()
    if not throttle.allow_request(request, None):
        wait = math.ceil(throttle.wait() or 1)
        response = _refusal(
            429, f"Too many archive requests from this address; try again in {wait} seconds."
        )
        response["Retry-After"] = str(wait)
        return response
    if not settings.WORKER_TOKEN:
        return _refusal(404, "Not found.")
    if not worker_credential_ok(request):
        return _refusal(403, "This endpoint answers gpu workers only (the worker credential).")
    paths = (
        SystemVersion.objects.filter(archive_sha256=sha256.lower())
        .exclude(archive_path="")
        .values_list("archive_path", flat=True)
    )
    for relative in paths:
        path = Path(settings.UPLOAD_ROOT) / relative
        if path.is_file():
            response = FileResponse(path.open("rb"), content_type="application/octet-stream")
            response["X-Archive-SHA256"] = sha256.lower()
            return response
    return _refusal(404, "No stored archive has this digest.")
