"""Reading a safetensors file's header (tensor names, dtypes, shapes, byte ranges) without
reading its tensor data: what :func:`fim_engine.check_model_dir` knows of the weights before
anything is loaded.

Example:
    >>> read_safetensors_header(Path("upload/model.safetensors"))["classifier.weight"]
    (2, 384)
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path

from fim_engine.errors import ModelFormatError, WeightValueError

# safetensors dtypes torch loads on every device, with their size in bytes.
SAFETENSORS_DTYPES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "I16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "F32": 4,
    "I64": 8,
    "F64": 8,
}


def read_safetensors_header(file: Path) -> dict[str, tuple[int, ...]]:
    """Tensor name → shape from a safetensors header, without reading tensor data."""
    size = file.stat().st_size
    with file.open("rb") as handle:
        prefix = handle.read(8)
        if len(prefix) < 8:
            raise ModelFormatError(f"{file.name} is not a safetensors file (too short)")
        (length,) = struct.unpack("<Q", prefix)
        if length > min(size - 8, 100_000_000):
            raise ModelFormatError(f"{file.name} is not a safetensors file (bad header length)")
        try:
            header = json.loads(handle.read(length).decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ModelFormatError(
                f"{file.name} is not a safetensors file (unreadable header)"
            ) from error
    if not isinstance(header, dict):
        raise ModelFormatError(f"{file.name} is not a safetensors file (header is not an object)")
    shapes = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        shape = entry.get("shape") if isinstance(entry, dict) else None
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        if (
            not isinstance(shape, list)
            or not isinstance(offsets, list)
            or len(offsets) != 2
            or not all(
                isinstance(x, int) and not isinstance(x, bool) and x >= 0
                for x in [*shape, *offsets]
            )
            or not offsets[0] <= offsets[1] <= size - 8 - length
        ):
            raise ModelFormatError(f"{file.name}: tensor {name!r} has a malformed header entry")
        if dtype not in SAFETENSORS_DTYPES:
            raise WeightValueError(
                f"{file.name}: tensor {name!r} has dtype {dtype!r}; bibi loads "
                f"{', '.join(SAFETENSORS_DTYPES)}"
            )
        if offsets[1] - offsets[0] != math.prod(shape) * SAFETENSORS_DTYPES[dtype]:
            raise WeightValueError(
                f"{file.name}: tensor {name!r} declares shape {tuple(shape)} of {dtype} but "
                f"{offsets[1] - offsets[0]} bytes of data"
            )
        shapes[name] = tuple(shape)
    return shapes
