from __future__ import annotations

import gzip
import io
import random
import tarfile
import zipfile
from pathlib import Path

import pytest

from bibi.systems.archives import ArchiveLimits, ArchiveRejected, unpack_archive

LIMITS = ArchiveLimits(max_files=10, max_bytes=1_000_000, max_ratio=20)


def make_zip(
    path: Path, members: dict[str, bytes], *, symlinks: dict[str, str] | None = None
) -> Path:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (symlinks or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target)
    return path


def make_tar(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        for member in members:
            if isinstance(member, tarfile.TarInfo):
                archive.addfile(member)
            else:
                name, data = member
                info = tarfile.TarInfo(name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    return path


def special(name: str, kind: bytes, linkname: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info


MODEL = {"config.json": b"{}", "model.safetensors": b"\x00" * 100, "vocab.json": b"{}"}


@pytest.mark.parametrize("maker", ["zip", "tar"])
def test_a_plain_model_directory_unpacks(tmp_path, maker):
    archive = tmp_path / "model.archive"
    if maker == "zip":
        make_zip(archive, MODEL)
    else:
        make_tar(archive, list(MODEL.items()))
    root = unpack_archive(archive, tmp_path / "out", limits=LIMITS)
    assert root == tmp_path / "out"
    assert sorted(p.name for p in root.iterdir()) == [
        "config.json",
        "model.safetensors",
        "vocab.json",
    ]


def test_an_archive_wrapping_one_folder_unpacks_to_that_folder(tmp_path):
    archive = make_zip(
        tmp_path / "m.zip", {f"my-model/{name}": data for name, data in MODEL.items()}
    )
    root = unpack_archive(archive, tmp_path / "out", limits=LIMITS)
    assert root == tmp_path / "out" / "my-model"
    assert (root / "config.json").read_bytes() == b"{}"


CASES = {
    "absolute path": (lambda p: make_zip(p, {"/etc/passwd": b"x"}), "absolute paths are refused"),
    "parent directory": (
        lambda p: make_zip(p, {"model/../../escape.txt": b"x"}),
        "'..' are refused",
    ),
    "backslash": (lambda p: make_zip(p, {"..\\escape.txt": b"x"}), "backslashes"),
    "zip symlink": (
        lambda p: make_zip(p, MODEL, symlinks={"link": "/etc/passwd"}),
        "symbolic links are refused",
    ),
    "tar symlink": (
        lambda p: make_tar(p, [special("link", tarfile.SYMTYPE, "/etc/passwd")]),
        "symbolic links are refused",
    ),
    "tar hard link": (
        lambda p: make_tar(p, [("a", b"x"), special("b", tarfile.LNKTYPE, "a")]),
        "hard links are refused",
    ),
    "character device": (lambda p: make_tar(p, [special("dev", tarfile.CHRTYPE)]), "device files"),
    "block device": (lambda p: make_tar(p, [special("dev", tarfile.BLKTYPE)]), "device files"),
    "fifo": (lambda p: make_tar(p, [special("pipe", tarfile.FIFOTYPE)]), "FIFOs"),
    "too many files": (
        lambda p: make_zip(p, {f"f{i}": b"x" for i in range(11)}),
        "holds more than 10 entries",
    ),
    "too large": (
        lambda p: make_zip(p, {"big": b"\x01" * 1_100_000}),
        "at most 1000000 are accepted",
    ),
    "zip bomb": (lambda p: make_zip(p, {"zeros": b"\x00" * 900_000}), "zip bomb"),
    "duplicate member": (lambda p: make_tar(p, [("a", b"x"), ("a", b"y")]), "appears twice"),
    "not an archive": (
        lambda p: p.write_bytes(b"just some text") and p,
        "neither a .zip nor a .tar.gz",
    ),
    "truncated zip": (
        lambda p: p.write_bytes(make_zip(p, MODEL).read_bytes()[:60]) and p,
        "damaged or unreadable",
    ),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_an_unsafe_archive_is_refused_and_leaves_nothing(tmp_path, case):
    build, message = CASES[case]
    archive = build(tmp_path / "upload.archive")
    destination = tmp_path / "store" / "version"
    with pytest.raises(ArchiveRejected, match=message):
        unpack_archive(archive, destination, limits=LIMITS)
    assert not destination.exists()
    assert not (tmp_path / "escape.txt").exists()


def test_directories_count_toward_the_entry_limit(tmp_path):
    with zipfile.ZipFile(tmp_path / "m.zip", "w") as archive:
        for name, data in MODEL.items():
            archive.writestr(name, data)
        for i in range(8):
            archive.writestr(f"empty-{i}/", b"")
    with pytest.raises(ArchiveRejected, match="more than 10 entries"):
        unpack_archive(tmp_path / "m.zip", tmp_path / "out", limits=LIMITS)


def tar_gz_with_a_damaged_tail(path: Path, members: list[tuple[str, bytes]]) -> Path:
    """A .tar.gz whose listed members come first and whose compressed stream then breaks."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    raw = gzip.compress(buffer.getvalue() + b"\0" * 4096)
    path.write_bytes(raw[: len(raw) * 2 // 3] + b"not gzip any more" * 64)
    return path


def test_a_tar_listing_stops_at_the_entry_limit_before_reading_the_rest(tmp_path):
    # Eleven entries, then a broken stream: the limit is reached before the break.
    noise = random.Random(0).randbytes(60_000)
    members = [(f"f{i}", b"x" * 200) for i in range(11)] + [("tail", noise)]
    archive = tar_gz_with_a_damaged_tail(tmp_path / "m.archive", members)
    with pytest.raises(ArchiveRejected, match="more than 10 entries"):
        unpack_archive(archive, tmp_path / "out", limits=LIMITS)


def test_a_tar_listing_stops_at_the_size_limit_before_decompressing_the_rest(tmp_path):
    # The first member's header declares more than the limit; decompressing it would take
    # the whole stream, which breaks further on.
    big = random.Random(0).randbytes(1_100_000)
    archive = tar_gz_with_a_damaged_tail(tmp_path / "m.archive", [("weights", big)])
    with pytest.raises(ArchiveRejected, match="unpacks to more than 1000000 bytes"):
        unpack_archive(archive, tmp_path / "out", limits=LIMITS)


def test_a_model_two_folders_down_unpacks_from_its_folder(tmp_path):
    members = {f"export/my-model/{name}": data for name, data in MODEL.items()}
    members["README.md"] = b"how I trained it"
    archive = make_zip(tmp_path / "m.zip", members)
    root = unpack_archive(archive, tmp_path / "out", limits=LIMITS)
    assert root == tmp_path / "out" / "export" / "my-model"


def test_an_archive_of_several_model_folders_names_them(tmp_path):
    members = {f"{folder}/{name}": data for folder in "ab" for name, data in MODEL.items()}
    archive = make_zip(tmp_path / "m.zip", members)
    with pytest.raises(ArchiveRejected, match=r"several model folders \(a/, b/\)"):
        unpack_archive(archive, tmp_path / "out", limits=LIMITS)
