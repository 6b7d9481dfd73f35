"""Label maps: how the labels of someone's file become the task's labels.

One set of rules for every upload that carries labels (examples, pair sets, self-reported
predictions), whether the map comes as text (``"0=negative,1=positive"``, a form or
command-line option) or as a JSON object:

- a task label always stands for itself, map or no map;
- integer labels match however they are written: ``+1``, ``1`` and ``01`` are one label;
- other labels match ignoring case: ``Positive`` is the task's ``positive``;
- a file label mapped twice is refused, even when both entries agree, as is a map whose
  target is not one of the task's labels.

    >>> lookup = LabelLookup.build(label_map_parse("-1=negative,+1=positive"),
    ...                            labels=["negative", "positive"])
    >>> lookup.resolve("1"), lookup.resolve(" negative "), lookup.resolve("neutral")
    ('positive', 'negative', None)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.core.exceptions import ValidationError

from bibi.texts import unstorable_characters

_INTEGER = re.compile(r"[+-]?\d+")

# A prediction's label outside the task's set is kept as given, up to this length.
OUTSIDE_LABEL_MAX_CHARS = 100
# A refusal suggests a label map from at most this many of the file's labels.
SUGGESTED_LABELS_MAX = 20

LABEL_MAP_HELP = (
    "Translates the file's labels into the task's: FILE_LABEL=TASK_LABEL pairs separated by "
    "commas, e.g. 0=negative,1=positive (integer labels match however they are signed)."
)


def label_key(label: str) -> str:
    """The form labels are compared in: stripped, integers without sign or leading zeros,
    other labels case-folded (``Negative`` is ``negative``)."""
    label = label.strip()
    return str(int(label)) if _INTEGER.fullmatch(label) else label.casefold()


def _label_order(label: str) -> tuple[int, int, str]:
    """Integers first, by value (``-1`` before ``1``), then other labels as text."""
    if _INTEGER.fullmatch(label.strip()):
        return (0, int(label), "")
    return (1, 0, label.casefold())


def label_map_parse(text: str) -> dict[str, str]:
    """Parse ``"0=negative,1=positive"`` into ``{"0": "negative", "1": "positive"}``.

    Raises ``ValidationError`` for an entry that is not ``FROM=TO`` and for a file label
    given twice.
    """
    entries: list[tuple[str, str]] = []
    for entry in text.split(","):
        if not entry.strip():
            continue
        source, separator, target = entry.partition("=")
        if not separator or not source.strip() or not target.strip():
            raise ValidationError(
                f"'{entry.strip()[:100]}' is not a label mapping: write FILE_LABEL=TASK_LABEL, "
                "e.g. 0=negative,1=positive"
            )
        entries.append((source.strip(), target.strip()))
    return label_map_clean(entries)


def label_map_clean(raw: Any) -> dict[str, str]:
    """A label map given as a JSON object (or parsed pairs), checked for shape and repeats.

    Accepts ``None`` or ``{}`` (no map). Raises ``ValidationError`` otherwise.
    """
    if raw in (None, "", {}):
        return {}
    items: Sequence[tuple[Any, Any]]
    if isinstance(raw, Mapping):
        items = list(raw.items())
    elif isinstance(raw, list) and all(isinstance(i, tuple) and len(i) == 2 for i in raw):
        items = raw
    else:
        raise ValidationError("Give the label map as an object of file label → task label.")
    label_map: dict[str, str] = {}
    first: dict[str, str] = {}
    for source, target in items:
        if not isinstance(source, str) or not isinstance(target, str):
            raise ValidationError("Every label and its mapping must be text.")
        source, target = source.strip(), target.strip()
        if not source or not target:
            raise ValidationError("A label map entry has an empty label.")
        unstorable = unstorable_characters(source + target)
        if unstorable:
            raise ValidationError(
                f"A label map entry holds {', '.join(unstorable)}, which cannot be stored."
            )
        key = label_key(source)
        if key in first:
            raise ValidationError(
                f"The label map gives '{source}' twice (also as '{first[key]}')."
                if first[key] != source
                else f"The label map gives '{source}' twice."
            )
        first[key] = source
        label_map[source] = target
    return label_map


@dataclass(frozen=True)
class LabelLookup:
    """File label → task label for one upload. Build it with :meth:`build`."""

    labels: tuple[str, ...]
    label_map: Mapping[str, str]
    _by_key: Mapping[str, str]
    # The labels of the file that stand for no task label (``seeing``), for ``map_example``.
    unknown: tuple[str, ...] = ()

    @classmethod
    def build(cls, label_map: Mapping[str, str] | None, *, labels: Sequence[str]) -> LabelLookup:
        """Check ``label_map`` against the task's ``labels``.

        Raises ``ValidationError`` naming every target that is not a task label.
        """
        by_key = {label_key(label): label for label in labels}
        # A target names a task label the way a file would (``1=Positive``).
        label_map = {
            source: by_key.get(label_key(target), target)
            for source, target in label_map_clean(label_map).items()
        }
        wrong = [
            f"The label map turns '{source}' into '{target}', which is not one of this task's "
            f"labels ({', '.join(labels)})."
            for source, target in label_map.items()
            if target not in labels
        ]
        if wrong:
            raise ValidationError(wrong)
        by_key.update({label_key(source): target for source, target in label_map.items()})
        return cls(labels=tuple(labels), label_map=label_map, _by_key=by_key)

    def resolve(self, raw: str | None) -> str | None:
        """The task label ``raw`` stands for, or None."""
        if raw is None or not raw.strip():
            return None
        return self._by_key.get(label_key(raw))

    def outside(self, raw: str | None) -> str | None:
        """``raw`` kept as a label outside the task's set (a prediction counted wrong), or
        None where it cannot be: empty, a task label, an integer (a code in the file's own
        vocabulary, for a label map to translate), longer than ``OUTSIDE_LABEL_MAX_CHARS`` or
        holding what cannot be stored."""
        label = (raw or "").strip()
        if (
            not label
            or self.resolve(label) is not None
            or _INTEGER.fullmatch(label)
            or len(label) > OUTSIDE_LABEL_MAX_CHARS
            or unstorable_characters(label)
        ):
            return None
        return label

    def problem(self, raw: str | None, *, what: str = "the label") -> str:
        """Why ``raw`` resolves to no task label, in words for the person fixing the file."""
        if raw is None or not raw.strip():
            return f"{what} is missing"
        allowed = ", ".join(self.labels)
        if self.label_map:
            return (
                f"{what} '{raw.strip()[:100]}' is neither in the label map "
                f"({', '.join(self.label_map)}) nor one of this task's labels ({allowed})"
            )
        return (
            f"{what} '{raw.strip()[:100]}' is not one of this task's labels ({allowed}); "
            f"give a label map to translate the file's labels, e.g. {self.map_example()}"
        )

    def seeing(self, raws: Iterable[str | None]) -> LabelLookup:
        """This lookup, knowing the labels of a file (``raws``): those that stand for no task
        label become its ``map_example`` (the first ``SUGGESTED_LABELS_MAX`` distinct)."""
        unknown: dict[str, str] = {}  # by label_key
        for raw in raws:
            label = (raw or "").strip()
            if not label or len(label) > OUTSIDE_LABEL_MAX_CHARS or self.resolve(label):
                continue
            unknown.setdefault(label_key(label), label)
            if len(unknown) >= SUGGESTED_LABELS_MAX:
                break
        return replace(self, unknown=tuple(unknown.values()))

    def map_example(self) -> str:
        """A label map from the file's own labels (``seeing``), in order (integers by value,
        then text), to the task's, in order: ``-1=negative,1=positive`` for a file labelled 1
        and -1, when the file has as many labels the task does not know as the task has labels.
        Otherwise, the task's labels numbered from 0: ``0=negative,1=positive``."""
        if len(self.unknown) != len(self.labels):
            return ",".join(f"{number}={label}" for number, label in enumerate(self.labels))
        ordered = sorted(self.unknown, key=_label_order)
        return ",".join(
            f"{source}={target}" for source, target in zip(ordered, self.labels, strict=True)
        )

    def described(self, raw: str) -> str:
        """``raw`` as the task label it stands for, naming the file's label where a map
        changed it: ``'positive' (the file's '1')``."""
        label = self.resolve(raw)
        if label is None or label == raw.strip():
            return f"'{raw.strip()[:100]}'"
        return f"'{label}' (the file's '{raw.strip()[:100]}')"
