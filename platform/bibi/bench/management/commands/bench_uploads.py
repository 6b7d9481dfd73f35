"""Peak memory of a web process that refuses large uploads, one of each kind.

    DATABASE_URL=postgres://... python manage.py bench_uploads [--megabytes 200]

Starts gunicorn (one sync worker) in a subprocess on the configured database, sends each
upload over a plain socket, and reads the worker's peak resident memory from /proc (VmHWM,
reset through clear_refs before each upload). Three rounds:

- **over the limit**: a body of ``--megabytes`` of each kind (examples import, pair-set
  file, predictions, model archive, JSON pair set) from someone who may send it. The
  archive limit is lowered below that size for the round; the other defaults already are;
- **refused sender**: the same bodies from someone who may not upload them, to a server
  whose limits are all above that size: refused before the body is read;
- **bad file at the limit**: a file of wrong rows as large as the default limit allows,
  read whole and refused row by row (what the limit leaves a file able to cost).

Everything it creates (users, two shared tasks) is deleted at the end. Linux only (/proc).
"""

from __future__ import annotations

import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection
from django.utils import timezone
from rest_framework.authtoken.models import Token

from bibi.sharedtasks import services
from bibi.sharedtasks.models import SharedTask
from bibi.systems import services as system_services

MB = 1024 * 1024
CHUNK = 256 * 1024
BOUNDARY = "bibi-bench-boundary"


@dataclass
class Upload:
    kind: str
    path: str
    token: str
    field: str
    filename: str
    form: dict[str, str]
    row: bytes  # repeated to fill the file; after ``header``
    header: bytes = b""
    json_body: bool = False


@dataclass
class Outcome:
    status: str
    sent: int
    peak: int
    before: int
    seconds: float


def _multipart(upload: Upload, size: int) -> tuple[list[bytes], int, Iterator[bytes]]:
    """The body's head and tail, its length, and the file's bytes in chunks."""
    head = b"".join(
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in upload.form.items()
    )
    head += (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="{upload.field}"; '
        f'filename="{upload.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
    ).encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    return [head, tail], len(head) + size + len(tail), _file_chunks(upload, size)


def _file_chunks(upload: Upload, size: int) -> Iterator[bytes]:
    block = upload.header + upload.row * (CHUNK // len(upload.row) + 1)
    remaining = size
    first = True
    while remaining > 0:
        chunk = block if first else block[len(upload.header) :]
        first = False
        chunk = chunk[:remaining]
        remaining -= len(chunk)
        yield chunk


def _json_chunks(upload: Upload, size: int) -> tuple[list[bytes], int, Iterator[bytes]]:
    head, tail = b'{"pairs": [', b'{"variant_text": "x"}]}'
    return [head, tail], len(head) + size + len(tail), _file_chunks(upload, size)


def _send(port: int, upload: Upload, size: int) -> tuple[str, int]:
    """POST ``size`` bytes of ``upload``; stop sending once the server answers."""
    (head, tail), length, chunks = (
        _json_chunks(upload, size) if upload.json_body else _multipart(upload, size)
    )
    content_type = (
        "application/json" if upload.json_body else f"multipart/form-data; boundary={BOUNDARY}"
    )
    request = (
        f"POST {upload.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Token {upload.token}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {length}\r\nConnection: close\r\n\r\n"
    ).encode()
    sock = socket.create_connection(("127.0.0.1", port), timeout=600)
    sent = 0
    try:
        sock.sendall(request)
        sock.setblocking(False)
        for part in (head, *chunks, tail):
            view = memoryview(part)
            while view:
                readable, writable, _ = select.select([sock], [sock], [], 600)
                if readable:
                    return _status(sock), sent
                try:
                    count = sock.send(view)
                except (BrokenPipeError, ConnectionResetError):
                    return _status(sock), sent
                view = view[count:]
                sent += count
        return _status(sock), sent
    finally:
        sock.close()


def _status(sock: socket.socket) -> str:
    sock.setblocking(True)
    sock.settimeout(600)
    received = b""
    try:
        while b"\r\n\r\n" not in received:
            data = sock.recv(65536)
            if not data:
                break
            received += data
    except (ConnectionResetError, TimeoutError):
        pass
    if not received:
        return "reset without an answer"
    status = received.split(b"\r\n", 1)[0].decode(errors="replace").split(" ", 1)[-1]
    return status


def _memory(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of ``pid`` in bytes."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024
    return fields["VmRSS"], fields["VmHWM"]


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


class Server:
    """gunicorn with one sync worker, on a free port, with ``limits`` in its environment."""

    def __init__(self, limits: dict[str, int], var_dir: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        env = {
            **os.environ,
            "DATABASE_URL": os.environ.get("DATABASE_URL", ""),
            "SECRET_KEY": "bench-uploads",
            "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1",
            # Plain HTTP on the loopback: no redirect to https before the upload is seen.
            "SECURE_SSL_REDIRECT": "0",
            "VAR_DIR": var_dir,
            "LOG_LEVEL": "ERROR",
            **{name: str(value) for name, value in limits.items()},
        }
        command = [
            sys.executable, "-m", "gunicorn", "bibi.wsgi:application",
            "--workers", "1", "--bind", f"127.0.0.1:{self.port}", "--timeout", "600",
            "--log-level", "warning",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            workers = _children(self.process.pid)
            if workers:
                try:
                    self._warm_up()
                    self.worker = workers[0]
                    return
                except OSError:
                    pass
            time.sleep(0.2)
        self.stop()
        raise CommandError("gunicorn did not start within 60 s")

    def _warm_up(self) -> None:
        """One request, so that the worker has imported the site before anything is measured."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=60) as sock:
            sock.sendall(b"GET /api/v1/shared-tasks/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            sock.recv(1)

    def measure(self, upload: Upload, size: int) -> Outcome:
        Path(f"/proc/{self.worker}/clear_refs").write_text("5")
        before, _ = _memory(self.worker)
        started = time.monotonic()
        status, sent = _send(self.port, upload, size)
        seconds = time.monotonic() - started
        # The worker may still be working after a refusal was sent: let it finish.
        time.sleep(0.5)
        _, peak = _memory(self.worker)
        return Outcome(status=status, sent=sent, peak=peak, before=before, seconds=seconds)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Command(BaseCommand):
    help = "Peak memory of a gunicorn worker refusing large uploads of every kind."

    def add_arguments(self, parser):
        parser.add_argument("--megabytes", type=int, default=200)

    def handle(self, *args, megabytes: int, **options):
        if connection.vendor != "postgresql":
            raise CommandError("Run it on PostgreSQL (DATABASE_URL): gunicorn needs the rows.")
        size = megabytes * MB
        tag = uuid.uuid4().hex[:8]
        created = _World.build(tag)
        try:
            with tempfile.TemporaryDirectory(prefix="bench-uploads-") as var_dir:
                self._rounds(created, size, var_dir)
        finally:
            created.delete()

    def _rounds(self, world: _World, size: int, var_dir: str) -> None:
        over = {"SYSTEM_UPLOAD_MAX_BYTES": size // 2}
        above = {
            name: 2 * size
            for name in (
                "EXAMPLES_UPLOAD_MAX_BYTES",
                "PAIR_SET_UPLOAD_MAX_BYTES",
                "PREDICTIONS_UPLOAD_MAX_BYTES",
                "SYSTEM_UPLOAD_MAX_BYTES",
                "DATA_UPLOAD_MAX_MEMORY_SIZE",
            )
        }
        self.stdout.write(
            f"{'round':<22}{'upload':<14}{'answer':<30}{'sent':>10}{'RSS before':>12}"
            f"{'peak RSS':>10}{'time':>8}"
        )
        rounds = [
            ("over the limit", over, world.allowed(), None),
            ("refused sender", above, world.refused(), None),
            ("bad file at limit", {}, world.bad_rows(), "limit"),
        ]
        for name, limits, uploads, sized in rounds:
            server = Server(limits, var_dir)
            try:
                for upload in uploads:
                    upload_size = size
                    if sized == "limit":
                        upload_size = getattr(settings, _LIMITS[upload.kind]) - 64 * 1024
                    outcome = server.measure(upload, upload_size)
                    self.stdout.write(
                        f"{name:<22}{upload.kind:<14}{outcome.status[:29]:<30}"
                        f"{outcome.sent / MB:>8.1f}MB{outcome.before / MB:>10.0f}MB"
                        f"{outcome.peak / MB:>8.0f}MB{outcome.seconds:>7.1f}s"
                    )
            finally:
                server.stop()


_LIMITS = {
    "examples": "EXAMPLES_UPLOAD_MAX_BYTES",
    "pair-set": "PAIR_SET_UPLOAD_MAX_BYTES",
    "predictions": "PREDICTIONS_UPLOAD_MAX_BYTES",
    "json-pairs": "DATA_UPLOAD_MAX_MEMORY_SIZE",
}


@dataclass
class _World:
    """Two shared tasks (one in its build phase, one in its break phase) and their people."""

    tag: str
    tasks: list[SharedTask]
    users: list
    tokens: dict[str, str]
    predictions_system: int
    hosted_system: int

    @classmethod
    def build(cls, tag: str) -> _World:
        users = get_user_model().objects
        people = {
            role: users.create_user(f"bench-{tag}-{role}")
            for role in ("organizer", "builder", "breaker")
        }
        tokens = {role: Token.objects.create(user=user).key for role, user in people.items()}
        tasks = []
        for current in ("build", "break"):
            slug = f"bench-{tag}-{current}"
            task = services.shared_task_create(creator=people["organizer"], name=slug, slug=slug)
            start = timezone.now() - timedelta(days=1 if current == "build" else 11)
            for kind in ("build", "break", "contest", "results"):
                services.phase_create(
                    shared_task=task,
                    actor=people["organizer"],
                    kind=kind,
                    starts_at=start,
                    ends_at=start + timedelta(days=10),
                )
                start += timedelta(days=10)
            services.team_create(
                shared_task=task, owner=people["builder"], kind="builder", name=f"b-{current}"
            )
            services.team_create(
                shared_task=task, owner=people["breaker"], kind="breaker", name=f"k-{current}"
            )
            tasks.append(task)
        builders = tasks[0].teams.get(kind="builder")
        predictions = system_services.system_create(
            team=builders, actor=people["builder"], name="by hand", kind="self_reported"
        )
        hosted = system_services.system_create(
            team=builders, actor=people["builder"], name="model", kind="hosted"
        )
        return cls(
            tag=tag,
            tasks=tasks,
            users=list(people.values()),
            tokens=tokens,
            predictions_system=predictions.id,
            hosted_system=hosted.id,
        )

    def _uploads(self, who: dict[str, str], rows: dict[str, bytes]) -> list[Upload]:
        build, breaking = (f"/api/v1/shared-tasks/{task.slug}" for task in self.tasks)
        uploads = [
            Upload(
                "examples",
                f"{build}/datasets/train/import/",
                self.tokens[who["examples"]],
                "file",
                "train.csv",
                {},
                rows["examples"],
                b"id,text,label\n",
            ),
            Upload(
                "pair-set",
                f"{breaking}/pair-sets/",
                self.tokens[who["pair-set"]],
                "file",
                "pairs.csv",
                {},
                rows["pair-set"],
                b"original_id,variant_text,variant_label\n",
            ),
            Upload(
                "predictions",
                f"{build}/systems/{self.predictions_system}/predictions/",
                self.tokens[who["predictions"]],
                "file",
                "dev.csv",
                {"source": "blind_dev"},
                rows["predictions"],
                b"id,label\n",
            ),
            Upload(
                "json-pairs",
                f"{breaking}/pair-sets/",
                self.tokens[who["pair-set"]],
                "",
                "",
                {},
                rows["json-pairs"],
                json_body=True,
            ),
        ]
        if "archive" in rows:
            uploads.append(
                Upload(
                    "archive",
                    f"{build}/systems/{self.hosted_system}/versions/",
                    self.tokens[who["archive"]],
                    "archive",
                    "model.zip",
                    {},
                    rows["archive"],
                )
            )
        return uploads

    ROWS = {
        "examples": b"x1,,positive\n",
        "pair-set": b"nope,a variant,positive\n",
        "predictions": b"nope,positive\n",
        "json-pairs": json.dumps({"original_id": "nope", "variant_text": "x"}).encode() + b",",
        "archive": b"PK\x03\x04" + bytes(60),
    }

    def allowed(self) -> list[Upload]:
        who = {"examples": "organizer", "pair-set": "breaker", "predictions": "builder"}
        return self._uploads({**who, "archive": "builder"}, self.ROWS)

    def refused(self) -> list[Upload]:
        who = {"examples": "breaker", "pair-set": "builder", "predictions": "organizer"}
        return self._uploads({**who, "archive": "organizer"}, self.ROWS)

    def bad_rows(self) -> list[Upload]:
        who = {"examples": "organizer", "pair-set": "breaker", "predictions": "builder"}
        rows = {name: row for name, row in self.ROWS.items() if name != "archive"}
        return self._uploads(who, rows)

    def delete(self) -> None:
        for task in self.tasks:
            task.delete()
        for user in self.users:
            user.delete()
