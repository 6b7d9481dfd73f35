"""The vendored browser files are the ones npm locked, and their README says so."""

from __future__ import annotations

import json
import re

from ...conftest import REPO_ROOT

VENDOR = REPO_ROOT / "platform" / "bibi" / "web" / "static" / "vendor"


def test_axe_core_is_the_locked_version_with_its_licence_recorded():
    declared = json.loads((REPO_ROOT / "package.json").read_text())["devDependencies"]["axe-core"]
    locked = json.loads((REPO_ROOT / "package-lock.json").read_text())["packages"][
        "node_modules/axe-core"
    ]
    header = (VENDOR / "axe-core" / "axe.min.js").read_text()[:200]
    shipped = re.match(r"/\*! axe v(\S+)", header).group(1)
    assert declared == locked["version"] == shipped
    readme = (VENDOR / "README.md").read_text()
    assert f"| {shipped} | {locked['license']} " in readme
    assert "Mozilla Public" in (VENDOR / "axe-core" / "LICENSE").read_text()


def test_no_template_loads_anything_from_another_site():
    templates = (REPO_ROOT / "platform" / "bibi" / "web" / "templates").rglob("*.html")
    offsite = [
        (path.name, match)
        for path in templates
        for match in re.findall(r"""(?:src|href)=["'](?:https?:)?//[^"']+""", path.read_text())
    ]
    assert offsite == []
