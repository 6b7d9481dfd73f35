"""What every API of bibi shares: the error format and the root of /api/v1/."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _messages(error: DjangoValidationError) -> Any:
    if hasattr(error, "error_dict"):
        return {
            field: [m for e in errors for m in e.messages]
            for field, errors in error.error_dict.items()
        }
    return {"detail": error.messages if len(error.messages) > 1 else error.messages[0]}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Services raise Django's ValidationError; the API answers it as a 400 with its messages."""
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(_messages(exc))
    return drf_exception_handler(exc, context)


class LineErrorOutput(serializers.Serializer):
    """One problem in an uploaded file: its line (0 for the file as a whole) and why."""

    line = serializers.IntegerField()
    reason = serializers.CharField()


def rejected_file_response(*, detail: str, errors: list[Any], **extra: Any) -> Response:
    """400 for a file refused as a whole: a summary, anything ``extra``, and every bad row."""
    body = {"detail": detail, **extra, "errors": LineErrorOutput(errors, many=True).data}
    return Response(body, status=status.HTTP_400_BAD_REQUEST)
