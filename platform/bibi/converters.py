"""The path converter for the tokens and digests that addresses carry.

Invitation tokens are ``secrets.token_urlsafe`` (letters, digits, ``-`` and ``_``) and an
archive digest is SHA-256 in hex, within the same alphabet. A ``<token:...>`` part admits that
alphabet alone: an address with any other character (a NUL, which PostgreSQL refuses in a
query and so answered 500, a space, a dot, a letter outside ASCII) matches no URL and answers
404 before any view or query runs. Importing this module registers it (once, as Django
wants): each URLconf that uses it imports it first.
"""

from __future__ import annotations

from django.urls import register_converter


class TokenConverter:
    """``<token:name>``: one or more of ``A-Z a-z 0-9 - _``, at most 128."""

    regex = "[A-Za-z0-9_-]{1,128}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(TokenConverter, "token")
