"""The registry of task types: one instance per ``SharedTask.task_type`` value.

Each type module registers itself when ``bibi.tasktypes`` is imported; ``task_type(key)``
is how every app finds a task's type (``SharedTask.kind`` calls it).
"""

from __future__ import annotations

from typing import Any

# Types are ``bibi.tasktypes.base.TaskType`` instances; this module is below base (base reads
# the pair layouts, which ask the registry for every type's), so it names them ``Any``.
TaskType = Any

_TYPES: dict[str, TaskType] = {}


def register(kind: TaskType) -> TaskType:
    """Add ``kind`` under its key; a key registered twice is a programming error."""
    if kind.key in _TYPES:
        raise ValueError(f"the task type {kind.key!r} is registered already")
    _TYPES[kind.key] = kind
    return kind


def task_type(key: str) -> TaskType:
    """The type registered under ``key``; ``LookupError`` names the known ones otherwise."""
    try:
        return _TYPES[key]
    except KeyError:
        known = ", ".join(sorted(_TYPES))
        raise LookupError(f"{key!r} is not a task type: the types are {known}") from None


def task_types() -> list[TaskType]:
    """Every registered type, in the order registered (the order choices are shown in)."""
    return list(_TYPES.values())


def choices() -> list[tuple[str, str]]:
    """(key, name) of every type: the choices of ``SharedTask.task_type``."""
    return [(kind.key, kind.name) for kind in _TYPES.values()]


def example_formats() -> list[str]:
    """Every examples file format some type reads, each once (for a format chooser that
    comes before the task is known, as a command-line option)."""
    return list(dict.fromkeys(fmt for kind in _TYPES.values() for fmt in kind.example_formats))
