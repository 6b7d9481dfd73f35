"""What the documentation tests share: reading a guide's code blocks."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..conftest import REPO_ROOT

DOCS = REPO_ROOT / "docs"
FIXTURES = REPO_ROOT / "fixtures" / "docs"

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class CodeBlock:
    """A fenced block: its language, the ``key=value`` words after it, its text and line."""

    language: str
    options: dict[str, str]
    text: str
    line: int


def code_blocks(name: str) -> list[CodeBlock]:
    """Every fenced code block of ``docs/<name>``, in order.

    The info string is the language, then optional ``key=value`` words that tell a test what
    the block is (GitHub shows the language and ignores the rest): `` ```csv example=good ``.
    """
    text = (DOCS / name).read_text(encoding="utf-8")
    blocks = []
    for match in _FENCE.finditer(text):
        words = match.group(1).split()
        options = dict(word.split("=", 1) for word in words[1:] if "=" in word)
        line = text.count("\n", 0, match.start()) + 1
        blocks.append(CodeBlock(words[0] if words else "", options, match.group(2), line))
    return blocks
