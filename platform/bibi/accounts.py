"""People's accounts beyond what ``django.contrib.auth`` does: the API token.

One token per user (DRF's ``authtoken``). Rotating it makes the old one stop working at
once, so a token that leaked is dead as soon as its owner notices.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from rest_framework.authtoken.models import Token


def api_token_get(*, user: AbstractBaseUser) -> Token | None:
    return Token.objects.filter(user=user).first()


@transaction.atomic
def api_token_rotate(*, user: AbstractBaseUser) -> Token:
    """A new token for ``user``; the previous one, if any, no longer authenticates."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)
