"""What every API of bibi shares: the error format and the root of /api/v1/."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import exceptions
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
