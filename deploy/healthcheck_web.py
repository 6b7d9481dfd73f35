"""The web container's health check: does this gunicorn serve ``/healthz`` and reach its database?

    python deploy/healthcheck_web.py

Exits 0 when healthy; otherwise 1, with one line saying why (``docker inspect`` shows it).
``/healthz`` also answers 503 when no Celery worker answers or the broker is down; those have
health checks of their own (the worker and redis containers), and a web container marked
unhealthy for them would be restarted by an orchestrator for nothing. Standard library only:
slim images have no curl, and the check must not pay for a Django start-up.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

TIMEOUT_SECONDS = 10.0


class _KeepRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect (say, to https) is an answer to report, not a request to follow."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def host_header(allowed_hosts: str) -> str:
    """A Host the site accepts, from ``ALLOWED_HOSTS`` (``.example.org`` allows example.org)."""
    for entry in (item.strip() for item in allowed_hosts.split(",")):
        if entry and entry != "*":
            return entry.lstrip(".")
    return "localhost"


def check(port: str, allowed_hosts: str) -> str | None:
    """None when healthy, else why not."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/healthz", headers={"Host": host_header(allowed_hosts)}
    )
    opener = urllib.request.build_opener(_KeepRedirects)
    try:
        with opener.open(request, timeout=TIMEOUT_SECONDS) as response:
            raw = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code != 503:
            location = exc.headers.get("Location")
            return f"/healthz answered {exc.code}" + (f" to {location}" if location else "")
        raw = exc.read()
    except OSError as exc:
        return f"/healthz did not answer on port {port}: {exc}"
    try:
        database = json.loads(raw)["database"]
    except (ValueError, KeyError, TypeError):
        database = None
    if not isinstance(database, dict):
        return f"/healthz answered something that is not its report: {raw[:200]!r}"
    if database.get("ok") is not True:
        return f"the site is up but its database is not: {database.get('detail')}"
    return None


def main() -> int:
    problem = check(os.environ.get("PORT", "8000"), os.environ.get("ALLOWED_HOSTS", ""))
    if problem:
        print(problem, file=sys.stderr)
        return 1
    print("web answers /healthz and reaches its database")
    return 0


if __name__ == "__main__":
    sys.exit(main())
