"""What a refused upload says: a whole file that cannot be read (``FileFormatError``), a
problem with one row (``RowError``), every problem counted and the first shown
(``RowErrors``), and the refusal an app raises (``FileRejected``)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

# A rejection lists at most this many rows, after a summary of every problem by kind: a
# million-row file of the same mistake must not answer with a million errors.
ERRORS_SHOWN = 200
# A summary groups this many distinct messages; the rest are counted together.
MESSAGES_GROUPED = 200
# Line numbers kept, over all groups, to say where each message occurs.
LINES_KEPT = 20_000
# Line ranges named in one group before "and N more".
RANGES_SHOWN = 50
# Distinct messages shown as examples of one kind of problem.
EXAMPLES_SHOWN = 3


class FileFormatError(ValueError):
    """The file as a whole cannot be read. ``line`` is where reading stopped, if anywhere."""

    def __init__(self, reason: str, *, line: int | None = None) -> None:
        super().__init__(f"line {line}: {reason}" if line is not None else reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class RowError:
    """A problem with one row, for the person who has to fix the file. Line 0 is the file.

    ``kind`` names the rule that refused the row ("edit_distance", "missing_prediction"):
    rows of one kind are summarised together however their messages differ (each names its
    own id). ``setting`` names the task setting that rule reads, where there is one
    ("pair_max_edit_distance"), so a page can link to it.
    """

    line: int
    reason: str
    kind: str = ""
    setting: str = ""

    def __str__(self) -> str:
        return f"line {self.line}: {self.reason}" if self.line else self.reason


@dataclass(frozen=True)
class ErrorGroup:
    """Every row with one message, or of one kind: how many, and on which lines ("2–246,
    300"; empty where every one concerns the file as a whole). A kind's ``reason`` is its
    summary ("342 of 540 texts have no prediction") or its first message; ``examples`` are
    its first few distinct messages."""

    reason: str
    count: int
    lines: str
    kind: str = ""
    setting: str = ""
    examples: tuple[str, ...] = ()


class RowErrors:
    """The problems of one file: every one counted, kept only as far as a refusal shows them.

    Keeps the ``ERRORS_SHOWN`` errors with the lowest lines, and for each kind (or, for
    errors without one, each distinct message) its count and where it occurs
    (``LINES_KEPT`` line numbers in all). Past ``MESSAGES_GROUPED`` distinct messages
    without a kind, new ones are counted in one group. So a predictions file of nine
    million wrong rows costs a few hundred objects here. ``summarize`` gives a kind its
    one-line summary.
    """

    OTHER = "other problems (too many different messages to group them)"

    def __init__(self, errors: Iterable[RowError] = ()) -> None:
        self.count = 0
        # A max-heap of the lowest lines (negated), the order of arrival breaking ties.
        self._first: list[tuple[int, int, RowError]] = []
        self._counts: dict[str, int] = {}
        self._lines: dict[str, list[int]] = {}
        self._lines_kept = 0
        self._examples: dict[str, list[str]] = {}
        self._settings: dict[str, str] = {}
        self._kinds: dict[str, str] = {}
        self._summaries: dict[str, str] = {}
        self._whole: dict[str, int] = {}
        self.extend(errors)

    def add(self, line: int, reason: str, *, kind: str = "", setting: str = "") -> None:
        self.count += 1
        error = RowError(line, reason, kind, setting)
        if len(self._first) < ERRORS_SHOWN:
            heapq.heappush(self._first, (-line, -self.count, error))
        elif (-line, -self.count) > self._first[0][:2]:
            heapq.heapreplace(self._first, (-line, -self.count, error))
        key = f"kind:{kind}" if kind else reason
        if key not in self._counts and len(self._counts) >= MESSAGES_GROUPED and not kind:
            key = self.OTHER
        if key not in self._counts:
            self._kinds[key] = kind
            self._settings[key] = setting
        self._counts[key] = self._counts.get(key, 0) + 1
        examples = self._examples.setdefault(key, [])
        if kind and len(examples) < EXAMPLES_SHOWN and reason not in examples:
            examples.append(reason)
        if line == 0:
            # The file as a whole: no line to name, nothing to keep.
            self._whole[key] = self._whole.get(key, 0) + 1
        elif self._lines_kept < LINES_KEPT:
            self._lines.setdefault(key, []).append(line)
            self._lines_kept += 1

    def extend(self, errors: Iterable[RowError]) -> None:
        for error in errors:
            self.add(error.line, error.reason, kind=error.kind, setting=error.setting)

    def summarize(self, kind: str, summary: str) -> None:
        """Say what the rows of ``kind`` have in common, in one line, for its group."""
        self._summaries[kind] = summary

    def __len__(self) -> int:
        return self.count

    # Read as a list, it is the list of the errors kept (``first``): all of them up to
    # ``ERRORS_SHOWN``, then the first that many; ``len`` counts them all.
    def __iter__(self) -> Iterator[RowError]:
        return iter(self.first)

    def __getitem__(self, index: int) -> RowError:
        return self.first[index]

    def __bool__(self) -> bool:
        return self.count > 0

    @property
    def first(self) -> list[RowError]:
        """The errors with the lowest lines, in line order (then in the order found)."""
        return [error for _, _, error in sorted(self._first, key=lambda e: (-e[0], -e[1]))]

    def groups(self) -> list[ErrorGroup]:
        """One group per kind or message, most frequent first (ties: the one found first)."""
        groups = []
        for key, count in self._counts.items():
            kept = self._lines.get(key, [])
            lines = sorted(set(kept))
            where = _line_ranges(lines) if lines else ""
            if len(kept) + self._whole.get(key, 0) < count:
                where = f"{where} and other lines" if where else "lines not kept"
            kind = self._kinds[key]
            examples = tuple(self._examples.get(key, ()))
            reason = self._summaries.get(kind) or (examples[0] if kind else key)
            groups.append(
                ErrorGroup(
                    reason=reason,
                    count=count,
                    lines=where,
                    kind=kind,
                    setting=self._settings[key],
                    examples=examples,
                )
            )
        return sorted(groups, key=lambda group: -group.count)


def _line_ranges(lines: Sequence[int]) -> str:
    ranges: list[str] = []
    start = previous = lines[0]
    for line in [*lines[1:], None]:
        if line is not None and line == previous + 1:
            previous = line
            continue
        ranges.append(str(start) if start == previous else f"{start}–{previous}")
        if line is not None:
            start = previous = line
    shown = ", ".join(ranges[:RANGES_SHOWN])
    hidden = len(ranges) - RANGES_SHOWN
    return f"{shown} and {hidden} more" if hidden > 0 else shown


class FileRejected(ValidationError):
    """An upload refused as a whole: nothing was stored.

    ``problems`` counts every problem and groups them by message (``RowErrors``); ``errors``
    lists the first ``ERRORS_SHOWN`` in line order (line 0: the file as a whole), and
    ``error_count`` how many there are in all. ``source`` names what was read
    ("pairs.csv", "the JSON list"); ``encoding`` and ``file_format`` are what the file was
    read as, None where reading never got that far. The API answers it with one envelope
    (``bibi.api.rejected_file_response``) whichever app raised it.
    """

    def __init__(
        self,
        errors: Iterable[RowError] | RowErrors,
        *,
        source: str = "the file",
        encoding: str | None = None,
        file_format: str | None = None,
    ) -> None:
        self.problems = errors if isinstance(errors, RowErrors) else RowErrors(errors)
        self.errors = self.problems.first
        self.error_count = len(self.problems)
        self.source = source
        self.encoding = encoding or None
        self.file_format = file_format or None
        super().__init__([str(error) for error in self.errors], code="rejected")

    @classmethod
    def from_format_error(cls, error: FileFormatError, **kwargs: Any) -> FileRejected:
        return cls([RowError(line=error.line or 0, reason=error.reason)], **kwargs)
