"""The embedded default (SQLite under var/) takes two people writing at once: every write
waits its turn for the database, none fails with "database is locked".

Two organizers of one task, each with their own HTTP client (and so their own thread and
SQLite connection in the server), vote, save the schedule, save the settings and import
examples at the same time against ``manage.py runserver`` on a file database.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ..conftest import PROCESS_BOUND_SECONDS, REPO_ROOT

pytestmark = pytest.mark.embedded


@pytest.fixture(autouse=True)
def _in_the_embedded_run_only(settings) -> None:
    """The site runs on SQLite whatever the suite's backend: once (the embedded run) is enough."""
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("starts a site on the embedded default: runs in the embedded run only")


FIXTURES = REPO_ROOT / "fixtures" / "docs"
SLUG = "reviews"
ROUNDS = 6


class Client:
    """One person's API calls: a token, and the status and body of each answer."""

    def __init__(self, base: str, token: str) -> None:
        self.api = f"{base}/api/v1"
        self.token = token
        self.last_headers: dict[str, str] = {}
        self.seconds: list[float] = []

    def call(
        self,
        method: str,
        path: str,
        *,
        json_body: object | None = None,
        files: dict[str, tuple[str, bytes]] | None = None,
        fields: dict[str, str] | None = None,
    ) -> tuple[int, bytes]:
        headers = {"Authorization": f"Token {self.token}"}
        data = None
        if json_body is not None:
            data = json.dumps(json_body).encode()
            headers["Content-Type"] = "application/json"
        elif files is not None or fields is not None:
            boundary = uuid.uuid4().hex
            parts = []
            for name, value in (fields or {}).items():
                parts.append(
                    f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
                    f"{value}\r\n".encode()
                )
            for name, (filename, content) in (files or {}).items():
                parts.append(
                    f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
                    f'filename="{filename}"\r\nContent-Type: text/csv\r\n\r\n'.encode()
                    + content
                    + b"\r\n"
                )
            data = b"".join(parts) + f"--{boundary}--\r\n".encode()
            headers["Content-Type"] = f"multipart/form-data; boundary={boundary}"
        request = urllib.request.Request(
            f"{self.api}/{path}", data=data, headers=headers, method=method
        )
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=PROCESS_BOUND_SECONDS) as response:
                self.last_headers = dict(response.headers)
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            self.last_headers = dict(error.headers)
            return error.code, error.read()
        finally:
            self.seconds.append(time.monotonic() - started)

    def ok(self, method: str, path: str, **kwargs) -> object:
        status, body = self.call(method, path, **kwargs)
        assert status < 300, f"{method} {path}: {status} {body[:2000]!r}"
        return json.loads(body) if body else None


def _tokens(var_dir: Path, usernames: list[str]) -> dict[str, str]:
    """Accounts with API tokens, made by a ``manage.py shell`` of their own on the site's var/."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(DEBUG="1", VAR_DIR=str(var_dir))
    script = (
        "import json\n"
        "from django.contrib.auth import get_user_model\n"
        "from rest_framework.authtoken.models import Token\n"
        "tokens = {}\n"
        f"for name in {usernames!r}:\n"
        "    user = get_user_model().objects.create_user(name, f'{name}@example.org', 'pw-' + name)\n"
        "    tokens[name] = Token.objects.create(user=user).key\n"
        "print(json.dumps(tokens))\n"
    )
    made = subprocess.run(
        [sys.executable, str(REPO_ROOT / "manage.py"), "shell", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=PROCESS_BOUND_SECONDS,
    )
    assert made.returncode == 0, made.stderr
    return json.loads(made.stdout.strip().splitlines()[-1])


def _at(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def _task_in_validation(olga: Client, oscar_name: str, breaker: Client) -> None:
    """A task whose break is over, with a breaker's pairs waiting for votes from both
    organizers (validation of every pair, two votes each)."""
    olga.ok(
        "POST",
        "shared-tasks/",
        json_body={
            "slug": SLUG,
            "name": "Review sentiment",
            "labels": ["negative", "positive"],
            "validation_mode": "all",
            "validations_per_pair": 2,
        },
    )
    task = f"shared-tasks/{SLUG}"
    olga.ok("POST", f"{task}/organizers/", json_body={"username": oscar_name})
    day = timedelta(days=1)
    for kind, starts, ends in (
        ("build", -timedelta(minutes=1), day),
        ("break", day, 2 * day),
        ("contest", 2 * day, 3 * day),
        ("results", 3 * day, 30 * day),
    ):
        olga.ok(
            "POST",
            f"{task}/phases/",
            json_body={"kind": kind, "starts_at": _at(starts), "ends_at": _at(ends)},
        )
    for split in ("train", "blind_dev", "starter"):
        content = (FIXTURES / f"{split}.csv").read_bytes()
        olga.ok(
            "POST", f"{task}/datasets/{split}/import/", files={"file": (f"{split}.csv", content)}
        )
    olga.ok("POST", f"{task}/phases/build/close-now/")
    breaker.ok("POST", f"{task}/teams/", json_body={"kind": "breaker", "name": "Negators"})
    pairs = (FIXTURES / "pairs.csv").read_bytes()
    breaker.ok("POST", f"{task}/pair-sets/", files={"file": ("pairs.csv", pairs)})
    olga.ok("POST", f"{task}/phases/break/close-now/")


def _writes(client: Client, me: str, start: threading.Barrier, answers: list) -> None:
    """Each round: a vote, a schedule save, a settings save and an import of new examples."""
    task = f"shared-tasks/{SLUG}"
    start.wait(PROCESS_BOUND_SECONDS)
    for r in range(ROUNDS):
        status, body = client.call("POST", f"{task}/validation/next/")
        answers.append(("validation next", status, body))
        if status == 200:
            item = json.loads(body)
            status, body = client.call(
                "POST", f"validations/{item['id']}/", json_body={"label": "negative"}
            )
            answers.append(("vote", status, body))
        status, body = client.call(
            "PATCH",
            f"{task}/phases/results/",
            json_body={
                "starts_at": _at(timedelta(days=3)),
                "ends_at": _at(timedelta(days=30 + r, hours=1 if me == "olga" else 2)),
            },
        )
        answers.append(("schedule save", status, body))
        status, body = client.call(
            "PATCH", f"{task}/", json_body={"description": f"Saved by {me}, round {r}."}
        )
        answers.append(("settings save", status, body))
        rows = "".join(
            f"{me}-{r}-{n},A {me} example number {n} of round {r}.,positive\n" for n in range(20)
        )
        status, body = client.call(
            "POST",
            f"{task}/datasets/train/import/",
            files={"file": ("more.csv", f"id,text,label\n{rows}".encode())},
        )
        answers.append(("dataset import", status, body))


def test_two_people_writing_at_once_on_the_embedded_default_all_succeed(embedded_site):
    tokens = _tokens(embedded_site.var_dir, ["olga", "oscar", "brian"])
    olga, oscar, brian = (
        Client(embedded_site.url, tokens[name]) for name in ("olga", "oscar", "brian")
    )
    _task_in_validation(olga, "oscar", brian)

    start = threading.Barrier(2)
    answers: dict[str, list] = {"olga": [], "oscar": []}
    writers = [
        threading.Thread(target=_writes, args=(client, name, start, answers[name]))
        for name, client in (("olga", olga), ("oscar", oscar))
    ]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(PROCESS_BOUND_SECONDS)
        assert not writer.is_alive()

    failed = [
        (name, what, status, body[:300])
        for name, calls in answers.items()
        for what, status, body in calls
        if status >= 300 and not (what == "validation next" and status == 204)
    ]
    assert failed == [], f"{len(failed)} failed: {failed}"
    votes = [what for calls in answers.values() for what, *_ in calls if what == "vote"]
    # Five pairs, two votes each: both organizers vote on every one.
    assert len(votes) == 10
    imported = olga.ok("GET", f"shared-tasks/{SLUG}/datasets/train/examples/?page_size=1")
    assert imported["count"] == 12 + 2 * ROUNDS * 20
    requests = sum(len(calls) for calls in answers.values())
    slowest = max(olga.seconds[-len(answers["olga"]) :] + oscar.seconds)
    print(f"{requests} concurrent requests, {len(votes)} votes, slowest {slowest:.2f} s")


@pytest.fixture
def short_lock_wait(monkeypatch) -> None:
    """The site (started after this) waits one second for the write lock, not twenty."""
    monkeypatch.setenv("SQLITE_TIMEOUT", "1")


def test_a_write_that_cannot_get_the_lock_in_time_answers_503_with_retry_after(
    short_lock_wait, embedded_site
):
    olga = Client(embedded_site.url, _tokens(embedded_site.var_dir, ["olga"])["olga"])
    olga.ok(
        "POST", "shared-tasks/", json_body={"slug": SLUG, "name": "Reviews", "labels": ["a", "b"]}
    )

    # Another program holds SQLite's write lock past the site's timeout.
    holder = sqlite3.connect(embedded_site.var_dir / "bibi.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        status, body = olga.call(
            "PATCH", f"shared-tasks/{SLUG}/", json_body={"description": "Not saved."}
        )
        headers = olga.last_headers
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert status == 503, body[:500]
    assert headers["Retry-After"] == "5"
    assert "nothing was saved" in json.loads(body)["detail"]

    # Once the lock is free the same write goes through.
    saved = olga.ok("PATCH", f"shared-tasks/{SLUG}/", json_body={"description": "Saved."})
    assert saved["description"] == "Saved."
