"""No task-type branch outside the task-type package, checked by ``make lint``.

A task's type is a plug-in (``platform/bibi/tasktypes/``): apps ask the type for what they
need (``shared_task.kind.labelled``, ``kind.segments``, ``kind.pair_input(...)``) or a
``Parts`` registry for their part of it (``PARTS.of(shared_task.kind)``); pages choose a
type's fragment with ``{% kind_include %}`` and its words with ``|kind_word``
(``bibi/web/kinds.py``). What this check refuses is asking *which* type a task is:

- Python: ``is_span``; members of a ``TaskType`` enum (``SharedTask.TaskType.SPAN_EXTRACTION``);
  a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``, ``is not``) or an ``isinstance``
  whose sides mention ``task_type``, the ``.key`` or ``.answers`` of a kind,
  ``SPAN_EXTRACTION`` / ``TEXT_CLASSIFICATION`` or a type's class. Naming those constants
  elsewhere (registering a part under them) is allowed;
- templates: ``is_span``, and ``{% if %}`` / ``{% elif %}`` conditions that mention
  ``task_type``, ``kind.key`` or ``kind.answers``.

The task-type package itself and migrations are left out.

Usage: ``python scripts/check_task_types.py [ROOT ...]`` (default: ``platform``); exits 1 and
lists every branch found as ``path:line: what`` with a hint.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterator
from pathlib import Path

EXCLUDED_PARTS = ("tasktypes", "migrations")
TEMPLATE_SUFFIXES = (".html", ".txt")
TYPE_CONSTANTS = {"SPAN_EXTRACTION", "TEXT_CLASSIFICATION", "SpanExtraction", "TextClassification"}
COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)

PYTHON_HINT = (
    "ask the task's type (shared_task.kind: .labelled, .segments, ...) or a Parts registry "
    "filled by answer kind or type (bibi.tasktypes.Parts) instead"
)
TEMPLATE_HINT = (
    'choose the type\'s fragment with {% kind_include "name" %} or its words with '
    '{{ shared_task|kind_word:"name" }} (bibi/web/kinds.py) instead'
)

# A template condition: the inside of {% if ... %} or {% elif ... %}.
CONDITION = re.compile(r"{%-?\s*(?:el)?if\b(.*?)-?%}", re.DOTALL)
TEMPLATE_MENTIONS = re.compile(r"\btask_type\b|\bkind\.(?:key|answers)\b")


def _sources(root: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    paths = [root] if root.is_file() else sorted(root.rglob("*"))
    for path in paths:
        if path.suffix in suffixes and not set(EXCLUDED_PARTS) & set(path.parts):
            yield path


def _of_a_kind(node: ast.expr) -> bool:
    """``node`` is a task's type: ``kind``, ``shared_task.kind``, ``snapshot_kind(s)``..."""
    return "kind" in ast.unparse(node).lower()


def _type_mention(node: ast.AST) -> str | None:
    """What in ``node`` names a task's type, or None."""
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and part.id in TYPE_CONSTANTS | {"task_type"}:
            return part.id
        if isinstance(part, ast.Attribute):
            if part.attr in TYPE_CONSTANTS | {"task_type"}:
                return part.attr
            if part.attr in ("key", "answers") and _of_a_kind(part.value):
                return ast.unparse(part)
        if isinstance(part, ast.Subscript) and _is_task_type(part.slice):
            return ast.unparse(part)
        if (
            isinstance(part, ast.Call)
            and isinstance(part.func, ast.Name)
            and part.func.id == "getattr"
            and len(part.args) >= 2
            and _is_task_type(part.args[1])
        ):
            return ast.unparse(part)
    return None


def _is_task_type(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == "task_type"


def _constant(node: ast.AST) -> str | None:
    """The type constant or class ``node`` names, or None."""
    for part in ast.walk(node):
        name = part.id if isinstance(part, ast.Name) else getattr(part, "attr", None)
        if name in TYPE_CONSTANTS:
            return name
    return None


def _compared(node: ast.Compare) -> str | None:
    """What names a type in a comparison that asks which type something is: any comparison
    with a type constant, and a type's field compared with anything but another type's field
    (one task's type compared with another's, as "the type never changes" does, asks nothing
    of either)."""
    sides = (node.left, *node.comparators)
    constant = next((name for side in sides if (name := _constant(side))), None)
    if constant:
        return constant
    mentions = [_type_mention(side) for side in sides]
    if all(mentions):
        return None
    return next((mention for mention in mentions if mention), None)


def _python_branches(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if "is_span" in (getattr(node, "attr", None), getattr(node, "id", None)):
            yield node.lineno, "is_span"
        elif isinstance(node, ast.Attribute) and (
            (isinstance(node.value, ast.Name) and node.value.id == "TaskType")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "TaskType")
        ):
            yield node.lineno, f"{ast.unparse(node)} (a TaskType member)"
        elif isinstance(node, ast.Compare) and any(isinstance(op, COMPARISONS) for op in node.ops):
            mention = _compared(node)
            if mention:
                yield node.lineno, f"a comparison with {mention}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
        ):
            mention = _type_mention(node.args[1])
            if mention:
                yield node.lineno, f"isinstance of {mention}"


def _template_branches(text: str) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(text.splitlines(), start=1):
        if "is_span" in line:
            yield number, "is_span"
    for match in CONDITION.finditer(text):
        mention = TEMPLATE_MENTIONS.search(match.group(1))
        if mention:
            number = text.count("\n", 0, match.start()) + 1
            yield number, f"a condition on {mention.group(0)}"


def problems(root: Path) -> list[str]:
    """Every task-type branch under ``root``, one line each, with its hint."""
    found: list[str] = []
    for path in _sources(root, (".py",)):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        branches = sorted(set(_python_branches(tree)))
        found += [f"{path}:{line}: {what}: {PYTHON_HINT}" for line, what in branches]
    for path in _sources(root, TEMPLATE_SUFFIXES):
        branches = sorted(set(_template_branches(path.read_text(encoding="utf-8"))))
        found += [f"{path}:{line}: {what}: {TEMPLATE_HINT}" for line, what in branches]
    return found


def main(argv: list[str]) -> int:
    roots = [Path(argument) for argument in argv] or [Path("platform")]
    found = [line for root in roots for line in problems(root)]
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} task-type branch(es) outside platform/bibi/tasktypes/")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
