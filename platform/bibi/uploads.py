"""Size limits on uploads, enforced while the body streams in.

Every upload has a limit, a setting each (``deploy/env.example``): examples imports
(``EXAMPLES_UPLOAD_MAX_BYTES``), pair-set files (``PAIR_SET_UPLOAD_MAX_BYTES``), predictions
(``PREDICTIONS_UPLOAD_MAX_BYTES``), model archives (``SYSTEM_UPLOAD_MAX_BYTES``).
``SizeLimitedUpload``, installed before anything reads the request body, refuses a body
whose declared length is over the limit before reading a byte of it, and stops one whose
files grow past the limit as they stream in. Either way ``UploadTooLarge`` is raised, which
the API answers with 413 and the limit in the message (``bibi.api.exception_handler``).
A body without files (JSON) is Django's to limit, at ``DATA_UPLOAD_MAX_MEMORY_SIZE`` on its
declared length; the API answers that with 413 too.

``upload_digest`` recognises a re-upload of the same file (pair sets, predictions).

Views must check who may upload and whether the phase is open before they touch
``request.data``: reading it is what reads the body.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.files.uploadhandler import FileUploadHandler
from django.http import HttpRequest

# A multipart body carries the file and a few short form fields (a label map, a format):
# this much on top of the limit is allowed for them before the declared length alone
# refuses a request.
FORM_FIELDS_ALLOWANCE = 64 * 1024


def size_text(size: int) -> str:
    """``50 MB (52,428,800 bytes)``: a size as people read it, and exactly."""
    if size < 1024 * 1024:
        return f"{size:,} bytes"
    if size >= 1024**3 and size % 1024**3 == 0:
        return f"{size // 1024**3} GB ({size:,} bytes)"
    return f"{round(size / 1024**2, 1):g} MB ({size:,} bytes)"


class UploadTooLarge(ValidationError):
    """An upload over its size limit. The API answers 413 Payload Too Large."""

    def __init__(self, *, what: str, limit: int) -> None:
        super().__init__(
            f"{what[0].upper()}{what[1:]} is larger than the limit of {size_text(limit)}.",
            code="too_large",
        )
        self.what = what
        self.limit = limit


def upload_digest(data: bytes, **options: Any) -> str:
    """The sha256 of an upload's bytes and of the options that change what they mean (a
    label map, a mode): two uploads with one digest would store the same thing, so the
    second is recognised as a re-upload and refused without counting against a quota."""
    digest = hashlib.sha256(data)
    digest.update(b"\0" + json.dumps(options, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def upload_size_require(size: int | None, *, limit: int, what: str) -> None:
    """Raise ``UploadTooLarge`` when ``size`` (bytes, None if unknown) is over ``limit``."""
    if size is not None and size > limit:
        raise UploadTooLarge(what=what, limit=limit)


class SizeLimitedUpload(FileUploadHandler):
    """Refuses a multipart body whose files pass ``limit`` bytes, while it streams in.

    Install it first, before anything reads the body (a session's CSRF check does)::

        request.upload_handlers.insert(0, SizeLimitedUpload(request, limit=..., what=...))
    """

    def __init__(self, request: HttpRequest, *, limit: int, what: str) -> None:
        super().__init__(request)
        self.limit = limit
        self.what = what
        self.received = 0

    def handle_raw_input(
        self,
        input_data: Any,
        META: dict[str, Any],
        content_length: int,
        boundary: bytes,
        encoding: str | None = None,
    ) -> None:
        upload_size_require(
            content_length - FORM_FIELDS_ALLOWANCE, limit=self.limit, what=self.what
        )
        return None

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        self.received += len(raw_data)
        if self.received > self.limit:
            # Django closes the other handlers' files only for its own StopUpload, which
            # ends parsing quietly with the file missing; this refusal must be heard.
            for handler in self.request.upload_handlers:
                partial = getattr(handler, "file", None)
                if partial is not None:
                    partial.close()
            raise UploadTooLarge(what=self.what, limit=self.limit)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None
