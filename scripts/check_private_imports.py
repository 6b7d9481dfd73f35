"""No private helper is imported across modules, checked by ``make lint``.

A name that starts with one underscore is its module's own: another module that needs it
needs a public name (or the helper belongs elsewhere). This reads the project's sources as
text (``ast``), runs nothing, and reports every

- ``from package.module import _name``, and
- ``module._name`` where ``module`` is a project module imported under that name,

in ``platform/``, ``scoring/``, ``fim_engine/`` and ``edits/`` outside migrations; a package
importing from its own submodules (``from .x import _y`` inside the same package's
``__init__``) is reported too. Dunder names (``__version__``) and Django's ``_meta`` are
public.

Usage: ``python scripts/check_private_imports.py [ROOT ...]``; exits 1 and lists each
import with its file and line.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

PROJECT = ("bibi", "scoring", "fim_engine", "edits")
ROOTS = ("platform", "scoring", "fim_engine", "edits")


# Frameworks' public names that start with an underscore (Django's model options).
PUBLIC = frozenset({"_meta"})


def _private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in PUBLIC


def _sources(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        if "migrations" not in path.parts:
            yield path


def _project(module: str) -> bool:
    return module.split(".", 1)[0] in PROJECT


def problems_in(path: Path, text: str) -> list[str]:
    """Every private import of ``text`` (the source of ``path``), one line each."""
    tree = ast.parse(text, filename=str(path))
    found: list[str] = []
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and _project(node.module):
            for alias in node.names:
                if _private(alias.name):
                    found.append(
                        f"{path}:{node.lineno}: imports {alias.name} from {node.module}: "
                        "give it a public name, or move it where it is used"
                    )
                else:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _project(alias.name):
                    aliases[alias.asname or alias.name.split(".", 1)[0]] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and _private(node.attr)
        ):
            found.append(
                f"{path}:{node.lineno}: uses {node.value.id}.{node.attr} of another module: "
                "give it a public name, or move it where it is used"
            )
    return found


def problems(root: Path) -> list[str]:
    found: list[str] = []
    for path in _sources(root):
        found += problems_in(path, path.read_text(encoding="utf-8"))
    return found


def main(argv: list[str]) -> int:
    roots = [Path(arg) for arg in argv] or [Path(root) for root in ROOTS if Path(root).is_dir()]
    found = [problem for root in roots for problem in problems(root)]
    for problem in found:
        print(problem)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
