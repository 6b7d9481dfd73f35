"""The demo path: the site on the embedded default, with no PostgreSQL or Redis."""

from __future__ import annotations

import json
import urllib.request


def test_the_embedded_site_migrates_and_serves_healthz(embedded_site):
    assert (embedded_site.var_dir / "bibi.sqlite3").exists()
    with urllib.request.urlopen(f"{embedded_site.url}/healthz", timeout=60) as response:
        status, body = response.status, json.load(response)
    assert status == 200
    assert body["status"] == "ok"
    assert body["database"]["detail"] == "sqlite answered"
