"""Checks on every request, before any view runs."""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse

from bibi.texts import unstorable_characters


def refuse_unstorable_query(
    get_response: Callable[[HttpRequest], HttpResponse],
) -> Callable[[HttpRequest], HttpResponse]:
    """Answer 400 to a query string holding NUL (``?search=%00``), 404 to a path holding one
    (``/tasks/sst/data/%00/``).

    Views filter rows by their query parameters and by the parts of their address, and
    PostgreSQL refuses a query with NUL in it: the request would fail deep in the database
    instead of here, with a reason. (Tokens and digests in addresses are narrower still: the
    ``<token:...>`` converter, ``bibi.converters``.)
    """

    def middleware(request: HttpRequest) -> HttpResponse:
        if unstorable_characters(request.path_info):
            raise Http404("No page has an address holding NUL.")
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
