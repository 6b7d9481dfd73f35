"""How the API reads JSON request bodies: holding only what can be stored.

The default parser of every API view (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``). It has a
module of its own because DRF imports it while it builds ``APIView``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from rest_framework import exceptions, parsers

from bibi.files import JsonRefused, json_parse


class JSONParser(parsers.JSONParser):
    """JSON request bodies holding only what can be stored.

    DRF hands a JSON parser the body as Django read it, which is at most
    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` bytes (refused on its declared length before it is read;
    ``bibi.api.exception_handler`` answers that with 413). ``bibi.files.json_parse`` does the
    rest: a string or key with NUL or a lone surrogate answers 400 with the path of each
    (``{"pairs[2].variant_text": ["holds U+0000 ..."]}``); nesting deeper than
    ``JSON_MAX_DEPTH``, invalid JSON and ``NaN`` answer 400 with a reason.
    """

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: Mapping[str, Any] | None = None,
    ) -> Any:
        context = parser_context or {}
        body = stream.read() if stream is not None else b""
        try:
            text = body.decode(context.get("encoding") or settings.DEFAULT_CHARSET)
        except UnicodeDecodeError as error:
            raise exceptions.ParseError(
                f"JSON parse error - the body is not UTF-8: {error}"
            ) from None
        try:
            return json_parse(text)
        except JsonRefused as refused:
            if refused.fields:
                raise exceptions.ValidationError(refused.fields) from None
            raise exceptions.ParseError(f"JSON parse error - the body {refused.reason}") from None
