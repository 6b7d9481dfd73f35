"""JSON that bibi takes: valid, not nested too deep, and every string storable."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from bibi.files.errors import ERRORS_SHOWN
from bibi.texts import unstorable_characters

# Nesting no upload or request body needs: a pair set is a list of objects with a list of
# tags. Deeper input is refused before it costs a recursion.
JSON_MAX_DEPTH = 32


class JsonRefused(ValueError):
    """JSON that bibi does not take. ``reason`` says why in a phrase that follows "line N:"
    or the name of what was read; ``fields`` maps the path of each string at fault
    (``pairs[2].variant_text``) to what is wrong with it, when that is why."""

    def __init__(self, reason: str, fields: dict[str, list[str]] | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fields = fields or {}


def _not_a_number(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON number")


def json_parse(text: str | bytes, *, max_depth: int = JSON_MAX_DEPTH) -> Any:
    """Parse ``text`` as JSON whose every string a database can store.

    Raises ``JsonRefused`` for text that is not JSON (``NaN`` and ``Infinity`` included),
    that nests arrays and objects deeper than ``max_depth``, or that has a string or key
    holding NUL or a lone surrogate (``"\u0000"``, ``"\ud800"``): PostgreSQL refuses the
    first and no UTF-8 text holds the second, so they would fail far from where they came in.
    """
    try:
        value = json.loads(text, parse_constant=_not_a_number)
    except json.JSONDecodeError as error:
        raise JsonRefused(f"is not valid JSON: {error.msg}") from None
    except ValueError as error:
        raise JsonRefused(f"is not valid JSON: {error}") from None
    except RecursionError:
        raise JsonRefused(f"nests arrays or objects deeper than {max_depth} levels") from None
    fields: dict[str, list[str]] = {}
    # Depth first, one iterator per open container: a list of a million objects costs no
    # more to walk than one object.
    stack: list[Iterator[tuple[str, Any]]] = [iter([("", value)])]
    while stack and len(fields) < ERRORS_SHOWN:
        for path, item in stack[-1]:
            if isinstance(item, str):
                _unstorable(item, path, fields, what="holds")
            elif isinstance(item, dict | list):
                if len(stack) > max_depth:
                    raise JsonRefused(f"nests arrays or objects deeper than {max_depth} levels")
                stack.append(_json_children(item, path, fields))
                break
        else:
            stack.pop()
    if fields:
        described = [
            f'"{path}" {problems[0]}' if path else problems[0]
            for path, problems in sorted(fields.items())
        ]
        more = f" (and {len(described) - 3} more)" if len(described) > 3 else ""
        raise JsonRefused("; ".join(described[:3]) + more, fields)
    return value


def _json_children(
    item: dict[str, Any] | list[Any], path: str, fields: dict[str, list[str]]
) -> Iterator[tuple[str, Any]]:
    if isinstance(item, list):
        for index, child in enumerate(item):
            yield f"{path}[{index}]", child
        return
    for key, child in item.items():
        name = f"{path}.{_path_key(key)}" if path else _path_key(key)
        _unstorable(key, name, fields, what="has a name that holds")
        yield name, child


def _path_key(key: str) -> str:
    # The name of a field at fault may hold the very character that is refused.
    return json.dumps(key)[1:-1] if unstorable_characters(key) else key


def _unstorable(text: str, path: str, fields: dict[str, list[str]], *, what: str) -> None:
    found = unstorable_characters(text)
    if found:
        fields.setdefault(path, []).append(f"{what} {', '.join(found)}, which cannot be stored")


def json_field_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
