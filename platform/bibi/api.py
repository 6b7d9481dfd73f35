"""What every API of bibi shares: the error format, task lookup, pagination, refused files,
and how request bodies are read.

- ``exception_handler``: services raise Django's ``ValidationError`` and ``PermissionDenied``;
  the API answers 400 and 403 with their messages. A ``bibi.files.FileRejected`` (an upload
  refused as a whole) answers 400 with the one envelope of ``rejected_file_response``; a
  ``bibi.uploads.UploadTooLarge`` answers 413 with the limit.
- JSON request bodies are read by ``bibi.parsers.JSONParser`` (its own module: DRF imports
  it while building ``APIView``, which this module needs).
- ``FileUploadApi``: a view taking a file upload, cut off at its size limit while it streams.
- ``paginated`` and ``Pagination``: ``?page=`` and ``?page_size=`` (up to
  ``API_MAX_PAGE_SIZE``) on every list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpRequest
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, serializers, status
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from bibi.files import FileRejected, RowError, RowErrors
from bibi.labelmaps import LABEL_MAP_HELP, label_map_clean, label_map_parse
from bibi.uploads import SizeLimitedUpload, UploadTooLarge


def _messages(error: DjangoValidationError) -> Any:
    if hasattr(error, "error_dict"):
        return {
            field: [m for e in errors for m in e.messages]
            for field, errors in error.error_dict.items()
        }
    return {"detail": error.messages if len(error.messages) > 1 else error.messages[0]}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Services raise Django's errors; the API answers them like its own."""
    if isinstance(exc, RequestDataTooBig):
        # Django refuses a body (without its files) over DATA_UPLOAD_MAX_MEMORY_SIZE on its
        # declared length; left to Django, that is a bare 400 page.
        exc = UploadTooLarge(
            what="the request body (without its files)",
            limit=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        )
    if isinstance(exc, UploadTooLarge):
        return Response(
            {"detail": exc.messages[0], "limit_bytes": exc.limit},
            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE,
        )
    if isinstance(exc, FileRejected):
        return rejected_file_response(exc)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(_messages(exc))
    return drf_exception_handler(exc, context)


# --- Pagination ---------------------------------------------------------------------------


class Pagination(PageNumberPagination):
    """``?page=N`` and ``?page_size=K``; K above ``API_MAX_PAGE_SIZE`` is cut to it."""

    page_size_query_param = "page_size"

    @property
    def max_page_size(self) -> int:  # type: ignore[override]
        return settings.API_MAX_PAGE_SIZE


def paginated(
    view: APIView,
    request: Request,
    queryset: Any,
    serializer_class: type,
    *,
    prepare: Callable[[list[Any]], list[Any]] | None = None,
    **context: Any,
) -> Response:
    """A page of ``queryset`` (or list) serialized; ``prepare`` completes the page's rows
    first (what is too costly to read for every row of the list)."""
    paginator = Pagination()
    page = paginator.paginate_queryset(queryset, request, view=view)
    if prepare is not None:
        page = prepare(list(page or []))
    data = serializer_class(page, many=True, context={"request": request, **context}).data
    return paginator.get_paginated_response(data)


# --- Label maps ---------------------------------------------------------------------------


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "example": "0=negative,1=positive"},
            {"type": "object", "additionalProperties": {"type": "string"}},
        ]
    }
)
class LabelMapField(serializers.Field):
    """A label map as ``"0=negative,1=positive"`` (forms) or a JSON object; see ``bibi.labelmaps``."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", LABEL_MAP_HELP)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict[str, str] | None:
        try:
            if isinstance(data, str):
                label_map = label_map_parse(data)
            elif isinstance(data, dict):
                label_map = label_map_clean(data)
            else:
                raise serializers.ValidationError(
                    "Give the label map as text (0=negative,1=positive) or a JSON object."
                )
        except DjangoValidationError as error:
            raise serializers.ValidationError(error.messages) from None
        return label_map or None

    def to_representation(self, value: Any) -> Any:
        return value


# --- Refused files ------------------------------------------------------------------------


class LineErrorOutput(serializers.Serializer):
    """One problem in an uploaded file: its line (0 for the file as a whole) and why.

    Lines are the file's own (the header of a CSV is line 1) or, for a JSON list, the
    position in the list counted from 1.
    """

    line = serializers.IntegerField()
    reason = serializers.CharField()


class ErrorGroupOutput(serializers.Serializer):
    """Every row with the same problem (one message, or one kind), once: how many, and on
    which lines ("2–246, 300"; empty where the problem is the file as a whole)."""

    reason = serializers.CharField(help_text="The message, or the kind's summary.")
    count = serializers.IntegerField()
    lines = serializers.CharField()
    kind = serializers.CharField(help_text="The rule that refused these rows; empty if none.")
    setting = serializers.CharField(
        help_text="The task setting that rule reads (a field of the shared task); empty if none."
    )
    examples = serializers.ListField(
        child=serializers.CharField(), help_text="A kind's first few distinct messages."
    )


class FileRejectedOutput(serializers.Serializer):
    """A file refused as a whole, and nothing stored.

    ``groups`` summarises every problem by its message, most frequent first; ``errors``
    lists the first ``ERRORS_SHOWN`` rows in line order; ``error_count`` counts them all.
    """

    detail = serializers.CharField()
    encoding = serializers.CharField(allow_null=True)
    format = serializers.CharField(allow_null=True)
    error_count = serializers.IntegerField()
    groups = ErrorGroupOutput(many=True)
    errors = LineErrorOutput(many=True)


def error_groups(errors: RowErrors | Sequence[RowError]) -> list[dict[str, Any]]:
    """Identical messages together: ``[{reason, count, lines}]``, most frequent first."""
    problems = errors if isinstance(errors, RowErrors) else RowErrors(errors)
    return [
        {
            "reason": group.reason,
            "count": group.count,
            "lines": group.lines,
            "kind": group.kind,
            "setting": group.setting,
            "examples": list(group.examples),
        }
        for group in problems.groups()
    ]


def rejected_file_body(rejected: FileRejected) -> dict[str, Any]:
    count = rejected.error_count
    return {
        "detail": f"Nothing was stored: {count} problem(s) in {rejected.source}.",
        "encoding": rejected.encoding,
        "format": rejected.file_format,
        "error_count": count,
        "groups": error_groups(rejected.problems),
        "errors": [{"line": error.line, "reason": error.reason} for error in rejected.errors],
    }


def rejected_file_response(rejected: FileRejected) -> Response:
    """400 for a file refused as a whole, in the one envelope of ``FileRejectedOutput``."""
    return Response(rejected_file_body(rejected), status=status.HTTP_400_BAD_REQUEST)


# --- Reading request bodies ---------------------------------------------------------------


class FileUploadApi(APIView):
    """A view taking a file upload, cut off at ``upload_limit_setting``'s bytes as it streams.

    The limit is installed before anything reads the body (a session's CSRF check does):
    a view must still check who may upload, and whether now, before it reads
    ``request.data``.
    """

    upload_limit_setting: str
    upload_what: str

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        limit = getattr(settings, self.upload_limit_setting)
        request.upload_handlers.insert(
            0, SizeLimitedUpload(request, limit=limit, what=self.upload_what)
        )
        return super().initialize_request(request, *args, **kwargs)
