"""Size limits of the platform's code, checked by ``make lint``.

No module under ``platform/``, ``scoring/``, ``fim_engine/`` or ``edits/`` is longer than 500 lines and no
function or method is longer than 60 lines (from its ``def`` line to its last line, docstring
included). Migrations are generated and left out; so are the tests, which live in ``tests/``.

Usage: ``python scripts/check_sizes.py [ROOT ...]`` (default: ``platform``, ``scoring``,
``fim_engine`` and ``edits``); exits 1 and lists every module and function over its limit.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

MODULE_LINES = 500
FUNCTION_LINES = 60


def _sources(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def problems(root: Path) -> list[str]:
    """Every module and function under ``root`` that is over its limit, one line each."""
    found: list[str] = []
    for path in _sources(root):
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MODULE_LINES:
            found.append(f"{path}: {lines} lines (at most {MODULE_LINES} per module)")
        for node in ast.walk(ast.parse(text, filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LINES:
                    found.append(
                        f"{path}:{node.lineno}: {node.name} is {length} lines "
                        f"(at most {FUNCTION_LINES} per function)"
                    )
    return found


def main(argv: list[str]) -> int:
    roots = [Path(argument) for argument in argv] or [
        Path("platform"),
        Path("scoring"),
        Path("fim_engine"),
        Path("edits"),
    ]
    found = [line for root in roots for line in problems(root)]
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
