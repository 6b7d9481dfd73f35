"""Checks on every request, before any view runs, and the answer to a database too busy to
take a write."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

from bibi.texts import unstorable_characters

logger = logging.getLogger(__name__)


def refuse_unstorable_query(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Answer 400 to a query string holding NUL (``?search=%00``).

    Views filter rows by their query parameters, and PostgreSQL refuses a query with NUL in
    it: the request would fail deep in the database instead of here, with a reason.
    """

    def middleware(request: HttpRequest) -> HttpResponse:
        for key, values in request.GET.lists():
            found = unstorable_characters("".join([key, *values]))
            if found:
                return JsonResponse(
                    {
                        "detail": f"The query parameter {key!r} holds {', '.join(found)}, "
                        "which no search can hold."
                    },
                    status=400,
                )
        return get_response(request)

    return middleware


# Seconds a client is told to wait before it sends a write refused for a busy database again.
DATABASE_BUSY_RETRY_AFTER = 5
DATABASE_BUSY_MESSAGE = (
    "The database is busy with other people's changes and this one could not wait its turn: "
    "nothing was saved. Send it again in a few seconds."
)


def database_busy(error: BaseException) -> bool:
    """Whether ``error`` is SQLite's lock timeout ("database is locked"): the embedded default
    holds one writer at a time, and a write waited ``SQLITE_TIMEOUT`` seconds in vain."""
    return isinstance(error, OperationalError) and "database is locked" in str(error)


class DatabaseBusyMiddleware:
    """Answer 503 with ``Retry-After`` when a view's write timed out waiting for SQLite's lock.

    The one place this is answered, for pages and the API alike (DRF passes the error on):
    a client is told to retry, and is never shown a 500. The write's transaction was rolled
    back, so nothing of it was stored.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not database_busy(exception):
            return None
        logger.warning("database busy: %s %s answered 503", request.method, request.path)
        response: HttpResponse
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": DATABASE_BUSY_MESSAGE}, status=503)
        else:
            page = render_to_string("503.html", {"message": DATABASE_BUSY_MESSAGE}, request)
            response = HttpResponse(page, status=503)
        response["Retry-After"] = str(DATABASE_BUSY_RETRY_AFTER)
        return response
