"""Signing up and the API token page. Logging in and out and password resets are
``django.contrib.auth``'s views with this site's templates (see ``bibi.web.urls``)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from bibi import accounts
from bibi.web.confirm import Confirmation, confirm_first
from bibi.web.forms import SignupForm


def signup(request: HttpRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("web:home")
    form = SignupForm(request.POST or None)
    # Where to go afterwards, e.g. back to the invitation that sent the visitor here.
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        next_url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        next_url = ""
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {user.get_username()}: your account is ready.")
        return redirect(next_url or "web:home")
    status = 400 if form.is_bound else 200
    context = {"form": form, "next": next_url}
    return render(request, "web/accounts/signup.html", context, status=status)


@login_required
def api_token(request: HttpRequest) -> HttpResponse:
    token = accounts.api_token_get(user=request.user)
    return render(request, "web/accounts/token.html", {"token": token})


@login_required
@require_POST
def api_token_rotate(request: HttpRequest) -> HttpResponse:
    had_one = accounts.api_token_get(user=request.user) is not None
    if had_one:
        asked = confirm_first(
            request,
            Confirmation(
                title="Replace your API token?",
                consequence="The token you have now stops working at once: every program "
                "that uses it must be given the new one.",
                button="Replace my token",
                back_url=reverse("web:api-token"),
            ),
        )
        if asked is not None:
            return asked
    accounts.api_token_rotate(user=request.user)
    if had_one:
        messages.success(request, "Your new API token is below. The old one no longer works.")
    else:
        messages.success(request, "Your API token is below.")
    return redirect("web:api-token")
