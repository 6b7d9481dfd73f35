"""Whether a file is a pickle, by content: nothing is ever unpickled (see :mod:`fim_engine.formats`)."""

from __future__ import annotations

import io
import pickletools
import zipfile
from pathlib import Path

# Enough of a file to tell a pickle's opcode stream from text or another binary format.
PICKLE_SNIFF_BYTES = 64 * 1024
# How long a text pickle's argument line may be where the window cuts it.
LINE_SLACK_BYTES = 4096


def looks_pickled(file: Path) -> bool:
    """Sniff content, whatever the name: ``model.bin`` renamed ``notes.txt`` is still a pickle.
    The caller rules out safetensors files first (their header length may look like an opcode)."""
    with file.open("rb") as handle:
        head = handle.read(PICKLE_SNIFF_BYTES)
        truncated = bool(handle.read(1))
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return True
    if head[:2] == b"PK" and zipfile.is_zipfile(file):
        # torch.save writes a zip archive with a data.pkl inside.
        with zipfile.ZipFile(file) as archive:
            return any(member.endswith(".pkl") for member in archive.namelist())
    return _parses_as_pickle(head, truncated=truncated)


def _parses_as_pickle(head: bytes, *, truncated: bool) -> bool:
    """Whether ``head`` is a pickle opcode stream (protocols 0 and 1 have no magic bytes).

    ``pickletools.genops`` only parses opcodes, it never executes them. Text and other binary
    formats hit an unknown opcode within a few bytes; a pickle reaches its STOP opcode, or
    runs past the sniffed window without a wrong opcode.
    """
    last = 0
    try:
        for opcode, _, position in pickletools.genops(io.BytesIO(head)):
            if opcode.name == "STOP":
                return bool(position)
            last = position or last
    except ValueError as error:
        reason = str(error)
        if not truncated or "unknown" in reason:
            return False
        # A pickle's argument lines are short (names, numbers): one cut by the end of the
        # window started near it. Text that starts with an opcode letter ("c" is GLOBAL, which
        # reads a line) and has no newline for the whole window is no pickle.
        return "no newline found" not in reason or len(head) - last <= LINE_SLACK_BYTES
    return truncated and "unknown" not in reason and "no newline found" not in reason
    return truncated
