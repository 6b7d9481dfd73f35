"""Unpacking a builder's model archive without trusting anything in it.

An uploaded archive is someone else's file about to be written onto a worker's disk. Every
member is checked before a byte is written, and the bytes actually written are counted
again while they are copied, because the sizes an archive declares can lie:

- only regular files and directories: no symlinks, hard links, devices or FIFOs;
- relative names that stay inside the destination: no absolute paths, no ``..``, no
  backslashes or NUL bytes;
- at most ``max_files`` entries (directories count: an archive of a million empty folders
  is no model), at most ``max_bytes`` unpacked, and an unpacked size at most ``max_ratio``
  times the archive's (zip bombs).

Members are checked as they are listed, and the listing stops at the first refusal: a
``.tar.gz`` is read as one compressed stream, and is never decompressed past its limits just
to be listed. The format is read from the file's first bytes, not from its name.
"""

from __future__ import annotations

import gzip
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

COPY_CHUNK = 1024 * 1024
# What archivers add beside the files (macOS's resource forks and folder settings).
_PACKING_JUNK = frozenset({"__MACOSX", ".DS_Store"})
# How deep below the top a model's config.json is looked for (outer/model/config.json).
MODEL_ROOT_DEPTH = 3


class ArchiveRejected(ValueError):
    """The archive is unsafe or unreadable; the message says which member and why."""


@dataclass(frozen=True)
class ArchiveLimits:
    max_files: int
    max_bytes: int
    max_ratio: float


@dataclass(frozen=True)
class _Member:
    name: str
    size: int
    is_dir: bool
    open: object  # a zero-argument callable returning a binary file object


def archive_kind(path: Path) -> str:
    with path.open("rb") as handle:
        head = handle.read(4)
    if head.startswith(b"PK\x03\x04") or head.startswith(b"PK\x05\x06"):
        return "zip"
    if head.startswith(b"\x1f\x8b"):
        return "tar.gz"
    raise ArchiveRejected("The upload is neither a .zip nor a .tar.gz archive.")


def _safe_relative_name(name: str) -> PurePosixPath:
    if "\x00" in name or "\\" in name:
        raise ArchiveRejected(f"'{name}': names with backslashes or NUL bytes are refused.")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveRejected(f"'{name}': absolute paths are refused.")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise ArchiveRejected(f"'{name}': paths with '..' are refused.")
    parts = [part for part in path.parts if part not in ("", ".")]
    if not parts:
        raise ArchiveRejected(f"'{name}': an empty member name is refused.")
    return PurePosixPath(*parts)


def _zip_members(archive: zipfile.ZipFile) -> Iterator[_Member]:
    for info in archive.infolist():
        mode = info.external_attr >> 16
        kind = stat.S_IFMT(mode)
        if kind == stat.S_IFLNK:
            raise ArchiveRejected(f"'{info.filename}': symbolic links are refused.")
        if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise ArchiveRejected(
                f"'{info.filename}': only regular files and directories are accepted."
            )
        yield _Member(
            info.filename, info.file_size, info.is_dir(), lambda info=info: archive.open(info)
        )


def _tar_members(archive: tarfile.TarFile) -> Iterator[_Member]:
    for info in archive:
        if info.issym():
            raise ArchiveRejected(f"'{info.name}': symbolic links are refused.")
        if info.islnk():
            raise ArchiveRejected(f"'{info.name}': hard links are refused.")
        if info.isdev() or info.isfifo():
            raise ArchiveRejected(f"'{info.name}': device files and FIFOs are refused.")
        if not (info.isfile() or info.isdir()):
            raise ArchiveRejected(
                f"'{info.name}': only regular files and directories are accepted."
            )
        yield _Member(
            info.name, info.size, info.isdir(), lambda info=info: archive.extractfile(info)
        )


@contextmanager
def _members(
    path: Path, kind: str, archive_size: int, limits: ArchiveLimits
) -> Iterator[list[tuple[PurePosixPath, _Member]]]:
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as archive:
                yield _listing(_zip_members(archive), archive_size, limits)
        else:
            with tarfile.open(path, mode="r:gz") as archive:
                yield _listing(_tar_members(archive), archive_size, limits)
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError, zlib.error) as exc:
        raise ArchiveRejected(f"The archive is damaged or unreadable: {exc}") from None


def _listing(
    members: Iterator[_Member], archive_size: int, limits: ArchiveLimits
) -> list[tuple[PurePosixPath, _Member]]:
    """Every member with its checked name, refused at the first one that passes a limit."""
    listed: list[tuple[PurePosixPath, _Member]] = []
    declared = 0
    for member in members:
        if member.is_dir and member.name.strip("/") in ("", "."):
            # The archive's own top folder, as `tar -czf model.tar.gz -C model .` writes it.
            continue
        listed.append((_safe_relative_name(member.name), member))
        if len(listed) > limits.max_files:
            raise ArchiveRejected(
                f"The archive holds more than {limits.max_files} entries (files and directories "
                f"count); at most {limits.max_files} are accepted."
            )
        if not member.is_dir:
            declared += member.size
        if declared > limits.max_bytes:
            raise ArchiveRejected(
                f"The archive unpacks to more than {limits.max_bytes} bytes; at most "
                f"{limits.max_bytes} are accepted."
            )
        if declared > limits.max_ratio * max(archive_size, 1):
            raise ArchiveRejected(
                f"The archive unpacks to more than {declared / max(archive_size, 1):.0f} times "
                f"its own size; at most {limits.max_ratio:g} times is accepted (this looks like "
                "a zip bomb)."
            )
    return listed


def unpack_archive(archive_path: Path, destination: Path, *, limits: ArchiveLimits) -> Path:
    """Unpack ``archive_path`` into the new directory ``destination``; return the model root.

    The model root is ``destination`` itself, or its only subdirectory when the archive
    wraps everything in one folder (as ``zip -r model.zip model/`` does). On any refusal
    ``destination`` is removed again and :class:`ArchiveRejected` is raised.
    """
    kind = archive_kind(archive_path)
    archive_size = archive_path.stat().st_size
    destination.mkdir(parents=True, exist_ok=False)
    try:
        with _members(archive_path, kind, archive_size, limits) as names:
            seen: set[PurePosixPath] = set()
            written = 0
            for relative, member in names:
                target = destination.joinpath(*relative.parts)
                if member.is_dir:
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                if relative in seen:
                    raise ArchiveRejected(f"'{member.name}' appears twice in the archive.")
                seen.add(relative)
                target.parent.mkdir(parents=True, exist_ok=True)
                written = _copy_member(member, target, written, archive_size, limits)
        return _model_root(destination)
    except BaseException:
        shutil.rmtree(destination, ignore_errors=True)
        raise


def _copy_member(
    member: _Member, target: Path, written: int, archive_size: int, limits: ArchiveLimits
) -> int:
    budget = min(limits.max_bytes, int(limits.max_ratio * max(archive_size, 1)))
    try:
        source: IO[bytes] = member.open()  # type: ignore[operator]
        with source, target.open("xb") as sink:
            while chunk := source.read(COPY_CHUNK):
                written += len(chunk)
                if written > budget:
                    raise ArchiveRejected(
                        f"'{member.name}' unpacks to more than it declares: the archive exceeds "
                        f"the unpacked size limit of {budget} bytes."
                    )
                sink.write(chunk)
    except FileExistsError:
        raise ArchiveRejected(
            f"'{member.name}' clashes with another member of the same name."
        ) from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise ArchiveRejected(f"'{member.name}' is damaged: {exc}") from None
    return written


def _model_root(destination: Path) -> Path:
    """The folder the model is in: ``destination``, its only folder (``zip -r model.zip
    model/``), or the one folder below that holds ``config.json`` when the top has none
    (an archive of ``outer/model/``, or a folder beside stray files). Several folders
    with a ``config.json`` and none at the top: refused, naming them."""
    entries = [entry for entry in destination.iterdir() if entry.name not in _PACKING_JUNK]
    if len(entries) == 1 and entries[0].is_dir():
        destination = entries[0]
    if (destination / "config.json").is_file():
        return destination
    configs = sorted(
        path.parent
        for path in destination.rglob("config.json")
        if not _PACKING_JUNK.intersection(path.relative_to(destination).parts)
        and len(path.relative_to(destination).parts) <= MODEL_ROOT_DEPTH
    )
    if len(configs) == 1:
        return configs[0]
    if len(configs) > 1:
        folders = ", ".join(f"{path.relative_to(destination).as_posix()}/" for path in configs)
        raise ArchiveRejected(
            f"The archive holds several model folders ({folders}) and no config.json at its "
            "top: upload one model per archive."
        )
    return destination
