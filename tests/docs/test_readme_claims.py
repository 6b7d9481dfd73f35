"""The READMEs name only what exists: every `manage.py` command, `make` target, repository
path and API address they mention is checked against the code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands
from django.urls import Resolver404, resolve

from .conftest import DOCS, REPO_ROOT

SKIP = {".venv", "node_modules", ".pytest_cache", "var", ".git"}
# Every Markdown file of the project's own (not under the virtualenv, npm or vendored files).
MARKDOWN = sorted(
    {REPO_ROOT / "README.md"}
    | {
        path
        for top in REPO_ROOT.iterdir()
        if top.is_dir() and top.name not in SKIP
        for path in top.rglob("*.md")
        if "vendor" not in path.relative_to(REPO_ROOT).parts
    }
)
COMMAND = re.compile(r"manage\.py ([a-z_]+)")
MAKE = re.compile(r"`make ([a-z-]+)")
# Repository paths written in backticks: a top folder of this repository, then more.
TOP = "|".join(sorted(p.name for p in REPO_ROOT.iterdir() if p.is_dir() and p.name not in SKIP))
PATH = re.compile(rf"`((?:{TOP})/[\w./-]*[\w/])`")
API = re.compile(r"(/api/v1/[\w{}<>./:-]*)")


def _text(doc: Path) -> str:
    return doc.read_text(encoding="utf-8")


def _name(doc: Path) -> str:
    return str(doc.relative_to(REPO_ROOT))


@pytest.mark.parametrize("doc", MARKDOWN, ids=_name)
def test_every_management_command_named_exists(doc):
    known = set(get_commands())
    named = set(COMMAND.findall(_text(doc)))
    assert named <= known, f"{_name(doc)} names missing commands: {sorted(named - known)}"


@pytest.mark.parametrize("doc", MARKDOWN, ids=_name)
def test_every_make_target_named_exists(doc):
    makefile = (REPO_ROOT / "Makefile").read_text()
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, flags=re.M))
    named = set(MAKE.findall(_text(doc)))
    assert named <= targets, f"{_name(doc)} names missing make targets: {sorted(named - targets)}"


@pytest.mark.parametrize("doc", MARKDOWN, ids=_name)
def test_every_repository_path_named_exists(doc):
    missing = []
    for raw in PATH.findall(_text(doc)):
        path = raw.split("::")[0].rstrip("/")
        if "*" in path or "<" in path:
            continue
        if not (REPO_ROOT / path).exists():
            missing.append(raw)
    assert not missing, f"{_name(doc)} names paths that do not exist: {missing}"


def _example(address: str) -> str:
    """An address of the API with its placeholders filled in."""
    address = re.sub(r"\{[^}]*\}|<[^>]*>", "1", address.rstrip(".:,"))
    return address if address.endswith("/") else address + "/"


# The top README and docs/ have their addresses checked, pages too, by test_addresses.py.
APP_DOCS = [doc for doc in MARKDOWN if doc.parent not in (REPO_ROOT, DOCS)]


@pytest.mark.parametrize("doc", APP_DOCS, ids=_name)
def test_every_api_address_named_resolves(doc):
    unresolved = []
    for address in API.findall(_text(doc)):
        if address == "/api/v1/":  # the prefix, named as such
            continue
        example = _example(address)
        try:
            resolve(example)
        except Resolver404:
            try:
                resolve(example.rstrip("/"))
            except Resolver404:
                unresolved.append(address)
    assert not unresolved, f"{_name(doc)} names API addresses that do not exist: {unresolved}"
