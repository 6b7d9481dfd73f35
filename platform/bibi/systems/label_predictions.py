"""Self-reported predictions of a labelled task: a label per item, checked, then stored.

Blind dev rows give ``id`` (the example's id) and ``label``; pair-item rows give the item's
texts in its type's columns (``text``, or ``sentence`` as the 2017 files name it, for one text;
``premise`` and ``hypothesis`` for a sentence pair) and ``label``; a headerless 2017 file
names a blind-dev example by its text or (a label alone) its place. Every item must be
predicted; a repeat with the same label counts once (a 2017 builder's per-breaker-team files
repeat the shared originals), with another label it is refused; otherwise every problem is
listed, summarised by kind (``PredictionsRejected``), and nothing is stored. A label is the task's (or one a label map translates, see
``bibi.labelmaps``); any other word ("neutral" in a binary task) is kept as given, counted
wrong when scored and in the version's ``outside_label_count``, never mapped to a task label,
as the 2017 organizers counted them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from bibi.files import Row, RowErrors
from bibi.labelmaps import LabelLookup
from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks.models import Dataset, Example, SharedTask
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.systems.reported import (
    PredictionsFile,
    predictions_recorded,
    row_file,
    row_place,
    sentence_as_text,
    version_to_write,
)
from bibi.systems.selectors import dataset_examples, dev_scores
from bibi.uploads import upload_digest


def _a(words: str) -> str:
    """``words`` with its indefinite article: "an id", "a text"."""
    return ("an " if words[:1].lower() in "aeiou" else "a ") + words


# Why a label alone names no pair text.
_LABEL_ALONE = (
    " (a label alone answers the blind dev set only, its texts in order: give each pair "
    "text's sentence after its label and a tab)"
)


def _key_problem(
    row: Row, value: str, *, key: str, expected: dict[str, None]
) -> tuple[str, str] | None:
    """Why ``row`` (naming ``value``) names no item to predict, with its kind; or None."""
    if row.error:
        return row.error, "unreadable"
    if not value.strip():
        return f"the {key} is missing{_LABEL_ALONE if 'position' in row.fields else ''}", (
            "missing_key"
        )
    if value not in expected:
        return f"{key} {value[:80]!r} is not one of the texts to predict", "unknown"
    return None


def _check_predictions(
    rows: Iterable[Row],
    *,
    expected: Iterable[str],
    key: str,
    key_of: Callable[[dict[str, str]], str],
    labels: LabelLookup,
    rejected: Callable[[RowErrors], PredictionsRejected],
) -> tuple[dict[str, str], int]:
    """Every expected key predicted with a label, and the number of repeats; else every
    problem, by kind. An item predicted again with the same label (a 2017 builder's files
    repeat the shared originals) is a repeat, counted once; with another, both lines are named.
    ``key_of`` reads a row's key ('' if none), ``key`` names it in messages. A word outside the
    task's labels is kept as given (``LabelLookup.outside``), unless most predictions are
    outside them: the file then speaks another vocabulary and needs a label map."""
    expected = dict.fromkeys(expected)
    errors = RowErrors()
    seen: dict[str, tuple[str, str]] = {}  # key -> (where it was first predicted, its label)
    found: dict[str, str] = {}
    outside: list[tuple[int, str]] = []
    repeats = 0
    for row in rows:
        place = row_place(row)
        value = "" if row.error else key_of(row.fields)
        problem = _key_problem(row, value, key=key, expected=expected)
        if problem is not None:
            errors.add(row.line, place + problem[0], kind=problem[1])
            continue
        raw_label = (row.fields.get("label") or "").strip()
        said = labels.resolve(raw_label) or raw_label
        if value in seen:
            first, first_label = seen[value]
            if said == first_label:
                repeats += 1
                continue
            errors.add(
                row.line,
                f"{place}{key} {value[:80]!r} is predicted {raw_label!r} here but "
                f"{first_label!r} on {first}",
                kind="duplicate",
            )
            continue
        seen[value] = (f"line {row.line}" + (f" of {row_file(row)}" if place else ""), said)
        label = labels.resolve(raw_label) or labels.outside(raw_label)
        if label is None:
            errors.add(row.line, place + labels.problem(raw_label), kind="label")
            continue
        if labels.resolve(raw_label) is None:
            outside.append((row.line, raw_label))
        found[value] = label
    if 2 * len(outside) > len(found):
        for line, raw_label in outside:
            errors.add(line, labels.problem(raw_label), kind="label")
    missing = [value for value in expected if value not in seen]
    for value in missing:
        errors.add(0, f"no prediction for {key} {value[:80]!r}", kind="missing_prediction")
    if errors:
        _summarize(errors, key=key, expected=len(expected), missing=len(missing))
        raise rejected(errors)
    return found, repeats


def _summarize(errors: RowErrors, *, key: str, expected: int, missing: int) -> None:
    errors.summarize("missing_prediction", f"{missing:,} of {expected:,} texts have no prediction")
    errors.summarize(
        "duplicate",
        f"{_a(key)} predicted again with another label (a repeat must give the same label)",
    )
    errors.summarize("unknown", f"{_a(key)} that is not one of the texts to predict")
    errors.summarize("missing_key", f"a row without {_a(key)}")


# One predicted item: its example (blind dev) or None (a pair item), the item, the label.
Cell = tuple[Example | None, tuple[str, ...], str]


def _item_key_of(columns: list[str]) -> tuple[str, Callable[[dict[str, str]], str]]:
    """How a pair-item row names its item: its one text as it is, or the JSON list of its
    texts (in the type's columns); and what messages call that."""
    if len(columns) == 1:
        return columns[0], lambda fields: fields.get(columns[0]) or ""

    def key_of(fields: dict[str, str]) -> str:
        texts = [fields.get(column) or "" for column in columns]
        return json.dumps(texts, ensure_ascii=False) if all(t.strip() for t in texts) else ""

    return " and ".join(columns), key_of


def _blind_dev_key_of(examples: list[Example]) -> Callable[[dict[str, str]], str]:
    """How a blind-dev row names its example: its ``id``; in the 2017 layout its place (a
    label alone, ``position``) or its text, when no other example has that text."""
    by_text: dict[str, list[str]] = {}
    for example in examples:
        by_text.setdefault(example.text.strip(), []).append(example.external_id)

    def key_of(fields: dict[str, str]) -> str:
        if "id" in fields:
            return (fields.get("id") or "").strip()
        place = fields.get("position") or ""
        if place.isdecimal():
            number = int(place)
            return examples[number - 1].external_id if 0 < number <= len(examples) else place
        text = (fields.get("text") or fields.get("sentence") or "").strip()
        ids = by_text.get(text, [])
        return ids[0] if len(ids) == 1 else text

    return key_of


def _predicted_cells(
    file: PredictionsFile, *, shared_task: SharedTask, source: str, lookup: LabelLookup
) -> tuple[list[Cell], int]:
    """Every item of ``source`` with its predicted label and the number of repeated rows,
    or ``PredictionsRejected``."""
    kind = shared_task.kind
    if source == Prediction.Source.BLIND_DEV:
        ordered = dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
        examples = {example.external_id: example for example in ordered}
        found, repeats = _check_predictions(
            file.rows(),
            expected=examples,
            key="id",
            key_of=_blind_dev_key_of(ordered),
            labels=lookup,
            rejected=file.rejected,
        )
        cells = [(examples[key], kind.item(examples[key]), label) for key, label in found.items()]
        return cells, repeats
    rows = sentence_as_text(file.rows, rejected=file.rejected)
    items = {}
    columns = [segment.column for segment in kind.segments]
    named, key_of = _item_key_of(columns)
    for item in pair_selectors.pair_items(shared_task=shared_task):
        items[key_of(dict(zip(columns, item, strict=True)))] = item
    found, repeats = _check_predictions(
        rows(), expected=items, key=named, key_of=key_of, labels=lookup, rejected=file.rejected
    )
    return [(None, items[key], label) for key, label in found.items()], repeats


@transaction.atomic
def _predictions_write(
    *,
    system: System,
    actor: AbstractBaseUser,
    filename: str,
    source: str,
    cells: list[Cell],
    digest: str,
) -> SystemVersion:
    version = version_to_write(
        system=system, actor=actor, filename=filename, source=source, digest=digest
    )
    kind = system.shared_task.kind
    Prediction.objects.bulk_create(
        [
            Prediction(
                system_version=version,
                source=source,
                example=example,
                **kind.item_fields(item),
                text_sha256=kind.item_key(item),
                label=label,
            )
            for example, item, label in cells
        ],
        batch_size=2000,
    )
    labels = list(system.shared_task.labels)
    if source == Prediction.Source.BLIND_DEV:
        gold = [example.label for example, _, _ in cells if example is not None]
        predicted = [label for _, _, label in cells]
        version.dev_accuracy, version.dev_macro_f1 = (
            dev_scores(labels, gold, predicted) if cells else (None, None)
        )
        version.dev_count = len(cells)
    version.outside_label_count = version.predictions.exclude(label__in=labels).count()
    return predictions_recorded(version, source=source, digest=digest)


def label_predictions_upload(
    *,
    system: System,
    actor: AbstractBaseUser,
    file: PredictionsFile,
    data: bytes,
    source: str,
    label_map: dict[str, str] | None = None,
) -> SystemVersion:
    """Check and store a labelled task's predictions (``system_predictions_upload``)."""
    lookup = LabelLookup.build(label_map, labels=list(system.shared_task.labels))
    cells, repeats = _predicted_cells(
        file, shared_task=system.shared_task, source=source, lookup=lookup
    )
    digest = upload_digest(data, source=source, label_map=lookup.label_map)
    version = _predictions_write(
        system=system,
        actor=actor,
        filename=file.filename,
        source=source,
        cells=cells,
        digest=digest,
    )
    # Not stored: what this upload's answer says (rows that repeated a prediction).
    version.repeated_predictions = repeats
    return version
