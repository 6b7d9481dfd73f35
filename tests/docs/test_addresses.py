"""Every address the README and the guides name is one the site serves."""

from __future__ import annotations

import re

import pytest
from django.urls import Resolver404, resolve

from .conftest import DOCS, REPO_ROOT

# What a placeholder stands for in an address that resolves.
PLACEHOLDERS = {
    "slug": "reviews",
    "kind": "build",
    "split": "starter",
    "id": "1",
    "n": "1",
    "pair": "1",
    "token": "abc",
    "table": "builders",
}
# Short API paths that stand at the top of /api/v1/ rather than under a shared task.
TOP_LEVEL = ("invitations/", "task-invitations/", "me/", "pair-sets/", "pairs/", "contests/")
_CODE = re.compile(r"`([^`]+)`")
_METHOD = re.compile(r"^(GET|POST|PATCH|PUT|DELETE) ")
_ADDRESS = re.compile(r"^/?[a-z][a-z0-9_\-{}/]*/(\?\S*)?$")


def _concrete(address: str) -> str:
    address = address.split("?")[0]
    return re.sub(r"\{(\w+)\}", lambda m: PLACEHOLDERS[m.group(1)], address)


def _addresses(text: str) -> list[str]:
    """Backticked addresses, without a method before them (`POST /api/v1/...`)."""
    codes = (_METHOD.sub("", " ".join(code.split())) for code in _CODE.findall(text))
    return [code for code in codes if _ADDRESS.match(code)]


def _site_addresses() -> list[str]:
    """The README's and the guides' addresses that begin with a slash (pages and the API)."""
    texts = [(REPO_ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))]
    found = set()
    for address in (a for text in texts for a in _addresses(text)):
        if address.startswith("organize/"):
            # The README's tour names the organizer's pages after their dashboard.
            address = f"/tasks/{{slug}}/{address}"
        # /api/v1/ is named as the prefix of the API, not as an address of its own.
        if address.startswith("/") and address != "/api/v1/":
            found.add(address)
    return sorted(found)


def _api_resources() -> list[str]:
    """The API paths of docs/api.md's table of resources, as the page says to read them."""
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    table = text[text.index("## Resources") : text.index("## Lists")]
    paths = []
    for row in table.splitlines():
        if not row.startswith("| ") or row.startswith("| resource"):
            continue
        for address in _addresses(row.split("|")[2]):
            if not address.startswith(("shared-tasks/", *TOP_LEVEL)):
                address = f"shared-tasks/{{slug}}/{address}"
            paths.append(f"/api/v1/{address}")
    return paths


def test_the_documents_name_addresses():
    assert len(_site_addresses()) > 20
    assert len(_api_resources()) > 40


@pytest.mark.parametrize("address", _site_addresses() + _api_resources())
def test_an_address_the_documents_name_is_served(address):
    try:
        resolve(_concrete(address))
        served = True
    except Resolver404:
        served = False
    assert served, f"{address} is not an address of the site"
