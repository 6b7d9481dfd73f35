"""Where a worker gets a builder's model files: by the archive's digest, into a local cache.

Workers share no filesystem with the web process. A version's archive is known by its
SHA-256 (``SystemVersion.archive_sha256``), and a worker takes it from the first source that
has it:

1. the upload itself (``UPLOAD_ROOT/archive_path``), where the worker runs beside the web
   process or shares its volume;
2. the ``archives`` storage, when the operator configures one (an S3-compatible bucket
   through django-storages: ``SYSTEM_ARCHIVE_BUCKET``), where uploads are copied by digest;
3. the platform itself (``WORKER_PLATFORM_URL``), which serves archives by digest to the
   worker credential ``WORKER_TOKEN`` only (``bibi.systems.worker_apis``).

Whatever the source, the bytes are hashed as they arrive and refused unless they match the
digest, then unpacked with the upload's own limits (``archives.unpack_archive``) into
``MODEL_STORE/<version uuid>``, the layout validation writes, so ``version.model_dir`` names
the model on every machine. ``MODEL_STORE`` is a cache: at most
``SYSTEM_MODEL_STORE_MAX_BYTES`` on disk, the least recently used models removed first (a
removed model is fetched again when next needed; the archive is the record, not the cache).

Processes of one machine share its store: a file lock makes one of them fetch, pin and
evict while the others wait. A process pins the model it opens (``.pins/``) before it lets go
of the lock, and eviction skips pinned models, so a model being loaded is never evicted under
its reader; a pin left by a killed process is dropped at the next eviction.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from django.conf import settings
from django.core.files.storage import storages

from bibi.systems.archives import COPY_CHUNK, ArchiveLimits, ArchiveRejected, unpack_archive
from bibi.systems.models import SystemVersion

logger = logging.getLogger(__name__)

# The storage alias of the bucket that holds archives by digest, when one is configured.
ARCHIVE_STORAGE = "archives"
# The folder of pins, one file per model in use by a process (``_Pin``).
PINS = ".pins"
# Fetches abandoned by a killed process are removed once they are this old.
STALE_FETCH_SECONDS = 24 * 3600
# Called with the version once ``model_files`` has let go of the store lock and before it
# opens the model: a test holds a process there while another one changes the store.
between_lock_steps: Callable[[SystemVersion], None] | None = None


class ArchiveUnavailable(RuntimeError):
    """No source gave the archive with its digest: the platform's failure, never the
    builder's (the message names each source tried and what went wrong)."""


def archive_limits() -> ArchiveLimits:
    return ArchiveLimits(
        max_files=settings.SYSTEM_ARCHIVE_MAX_FILES,
        max_bytes=settings.SYSTEM_ARCHIVE_MAX_UNPACKED_BYTES,
        max_ratio=settings.SYSTEM_ARCHIVE_MAX_RATIO,
    )


def archive_key(sha256: str) -> str:
    """The archive's name in the ``archives`` storage."""
    return f"archives/{sha256}.archive"


def bucket_configured() -> bool:
    return ARCHIVE_STORAGE in settings.STORAGES


def _from_upload(version: SystemVersion) -> IO[bytes] | None:
    path = Path(settings.UPLOAD_ROOT) / version.archive_path
    return path.open("rb") if version.archive_path and path.is_file() else None


def _from_bucket(version: SystemVersion) -> IO[bytes] | None:
    if not bucket_configured():
        return None
    bucket = storages[ARCHIVE_STORAGE]
    key = archive_key(version.archive_sha256)
    return bucket.open(key, "rb") if bucket.exists(key) else None  # type: ignore[return-value]


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are refused (they surface as the HTTP error they are): following one would
    send the worker credential wherever the redirect points."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


def _from_platform(version: SystemVersion) -> IO[bytes] | None:
    base = settings.WORKER_PLATFORM_URL.rstrip("/")
    if not base:
        return None
    request = urllib.request.Request(
        f"{base}/api/v1/worker/archives/{version.archive_sha256}/",
        headers={"Authorization": f"Worker {settings.WORKER_TOKEN}"},
    )
    return _OPENER.open(request, timeout=settings.WORKER_FETCH_TIMEOUT)  # type: ignore[no-any-return]


SOURCES = (("upload", _from_upload), ("bucket", _from_bucket), ("platform", _from_platform))


def archive_fetch(version: SystemVersion, destination: Path) -> str:
    """Write ``version``'s archive to ``destination``, checked against its digest; return the
    name of the source that gave it. Raises ``ArchiveUnavailable`` when none did."""
    tried: list[str] = []
    for name, source in SOURCES:
        try:
            handle = source(version)
            if handle is None:
                continue
            digest = hashlib.sha256()
            with handle, destination.open("wb") as sink:
                while chunk := handle.read(COPY_CHUNK):
                    digest.update(chunk)
                    sink.write(chunk)
                    if sink.tell() > settings.SYSTEM_UPLOAD_MAX_BYTES:
                        raise OSError("it sends more bytes than any upload may have")
        except (OSError, urllib.error.URLError) as exc:
            tried.append(f"{name}: {exc}")
            continue
        if digest.hexdigest() == version.archive_sha256:
            logger.info("archive of version %s fetched from the %s", version.uuid, name)
            return name
        tried.append(f"{name}: the bytes have digest {digest.hexdigest()}")
    destination.unlink(missing_ok=True)
    raise ArchiveUnavailable(
        f"No source gave the archive {version.archive_sha256} of version {version.uuid} "
        f"({'; '.join(tried) or 'no source is configured'})."
    )


@contextmanager
def store_lock() -> Iterator[Path]:
    """Hold this machine's model store exclusively, to change it (fetch, pin, evict)."""
    store = Path(settings.MODEL_STORE)
    store.mkdir(parents=True, exist_ok=True)
    with (store / ".lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield store
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


class _Pin:
    """A model's entry in use by this process: ``PINS/<entry>.<token>``, locked for as long
    as the pin holds. Eviction skips a pinned entry; a pin whose process died is unlocked,
    and the next eviction removes it."""

    def __init__(self, store: Path, name: str) -> None:
        pins = store / PINS
        pins.mkdir(exist_ok=True)
        self.path = pins / f"{name}.{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.handle = self.path.open("w")
        fcntl.flock(self.handle, fcntl.LOCK_EX)

    def release(self) -> None:
        self.path.unlink(missing_ok=True)
        self.handle.close()


def _pinned(store: Path) -> set[str]:
    """The entries some live process holds a pin on; the caller holds the store lock."""
    pinned: set[str] = set()
    pins = store / PINS
    if not pins.is_dir():
        return pinned
    for pin in pins.iterdir():
        try:
            with pin.open("r") as handle:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pinned.add(pin.name.split(".", 1)[0])
        except FileNotFoundError:
            continue  # released meanwhile
        else:
            pin.unlink(missing_ok=True)  # its process is gone
    return pinned


def _fetch_and_unpack(version: SystemVersion, store: Path) -> None:
    """``MODEL_STORE/<uuid>`` from the archive; the caller holds the store lock."""
    scratch = store / f".fetch-{version.uuid}-{uuid.uuid4().hex[:8]}"
    archive = scratch.with_suffix(".archive")
    try:
        archive_fetch(version, archive)
        try:
            unpack_archive(archive, scratch, limits=archive_limits())
        except ArchiveRejected as exc:
            # It passed these checks at validation: the limits changed since, or the platform
            # holds another file under this digest. Either way the operators must look.
            raise ArchiveUnavailable(f"The stored archive is refused now: {exc}") from None
        scratch.rename(store / str(version.uuid))
    finally:
        archive.unlink(missing_ok=True)
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def model_files(version: SystemVersion) -> Iterator[Path]:
    """The directory of a ready version's model on this machine, fetched when missing, for
    as long as the block runs (the model is pinned: no process evicts it meanwhile).

    The entry is pinned before the store lock is let go, so another process's eviction
    cannot slip in between. An entry that vanished all the same (removed by hand) is fetched
    once more. Raises ``ArchiveUnavailable`` when the model is missing and cannot be fetched,
    or when the archive holds no model at ``model_dir``.
    """
    for attempt in range(2):
        with store_lock() as store:
            entry = store / str(version.uuid)
            if not entry.is_dir():
                _fetch_and_unpack(version, store)
            os.utime(entry)
            store_evict(store, keep={entry.name})
            pin = _Pin(store, entry.name)
        try:
            if between_lock_steps is not None:
                between_lock_steps(version)
            path = store / version.model_dir
            if not path.is_dir() and entry.is_dir():
                raise ArchiveUnavailable(
                    f"The model of version {version.uuid} is not at '{version.model_dir}' "
                    "in its archive."
                )
            if path.is_dir():
                yield path
                return
        finally:
            pin.release()
        logger.warning(
            "the model of version %s vanished from the model store while pinned (attempt %d)",
            version.uuid,
            attempt + 1,
        )
    raise ArchiveUnavailable(
        f"The model of version {version.uuid} vanished from the model store twice while "
        "pinned: something other than the store's eviction removes files there."
    )


def _size(directory: Path) -> int:
    return sum(
        (Path(root) / name).stat().st_size
        for root, _, names in os.walk(directory)
        for name in names
    )


def store_evict(store: Path, *, keep: set[str]) -> list[str]:
    """Remove the least recently used models until the store holds at most
    ``SYSTEM_MODEL_STORE_MAX_BYTES`` (never those named in ``keep`` nor those pinned: the
    store may stay over its bound while they are in use), and fetches abandoned long ago;
    return the names removed. The caller holds the store lock."""
    now = time.time()
    for stale in store.glob(".fetch-*"):
        if now - stale.stat().st_mtime > STALE_FETCH_SECONDS:
            shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink()
    keep = keep | _pinned(store)
    entries = sorted(
        (entry for entry in store.iterdir() if entry.is_dir() and not entry.name.startswith(".")),
        key=lambda entry: entry.stat().st_mtime,
    )
    sizes = {entry.name: _size(entry) for entry in entries}
    total = sum(sizes.values())
    removed = []
    for entry in entries:
        if total <= settings.SYSTEM_MODEL_STORE_MAX_BYTES:
            break
        if entry.name in keep:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        total -= sizes[entry.name]
        removed.append(entry.name)
    if removed:
        logger.info("model store over its bound: removed %s", ", ".join(removed))
    return removed
