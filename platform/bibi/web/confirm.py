"""A second step before an action that cannot be undone (replacing an API token, revoking a
link): the first POST shows what will happen and asks again; only a POST that carries
``confirm=yes`` acts. Pages call :func:`confirm_first` at the top of the view."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

CONFIRM_FIELD = "confirm"


@dataclass(frozen=True)
class Confirmation:
    """What the confirmation page says: ``title`` (its heading, a question), ``consequence``
    (what happens, in one or two sentences), ``button`` (the label of the button that acts)
    and ``back_url`` (where "keep it" leads, acting on nothing)."""

    title: str
    consequence: str
    button: str
    back_url: str


def confirm_first(request: HttpRequest, confirmation: Confirmation) -> HttpResponse | None:
    """None once the POST says ``confirm=yes``; otherwise the page that asks, posting the
    same URL again with the confirmation."""
    if request.POST.get(CONFIRM_FIELD) == "yes":
        return None
    return render(
        request,
        "web/confirm.html",
        {"confirmation": confirmation, "action": request.path, "field": CONFIRM_FIELD},
    )
