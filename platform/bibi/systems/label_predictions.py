"""Self-reported predictions of a labelled task: a label per item, checked, then stored.

Blind dev rows give ``id`` (the example's id) and ``label``; pair-item rows give the item's
texts in its type's columns (``text``, or ``sentence`` as the 2017 files name it, for one text;
``premise`` and ``hypothesis`` for a sentence pair) and ``label``. Every item must be predicted
exactly once; otherwise every problem is listed, summarised by kind (``PredictionsRejected``),
and nothing is stored. A label is the task's (or one a label map translates, see
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
    sentence_as_text,
    version_to_write,
)
from bibi.systems.selectors import dataset_examples, dev_scores
from bibi.uploads import upload_digest


def _check_predictions(
    rows: Iterable[Row],
    *,
    expected: Iterable[str],
    key: str,
    key_of: Callable[[dict[str, str]], str],
    labels: LabelLookup,
    rejected: Callable[[RowErrors], PredictionsRejected],
) -> dict[str, str]:
    """Every expected key predicted exactly once with a label; else every problem, summarised
    by kind. ``key_of`` reads a row's key ('' when the row has none), ``key`` says what it
    is in messages. A word outside the task's labels is kept as given
    (``LabelLookup.outside``), unless most predictions are outside them: the file then speaks
    another vocabulary and needs a label map."""
    expected = dict.fromkeys(expected)
    errors = RowErrors()
    seen: dict[str, int] = {}
    found: dict[str, str] = {}
    outside: list[tuple[int, str]] = []
    for row in rows:
        if row.error:
            errors.add(row.line, row.error, kind="unreadable")
            continue
        value = key_of(row.fields)
        raw_label = row.fields.get("label") or ""
        if not value.strip():
            errors.add(row.line, f"the {key} is missing", kind="missing_key")
            continue
        if value not in expected:
            errors.add(
                row.line, f"{key} {value[:80]!r} is not one of the texts to predict", kind="unknown"
            )
            continue
        if value in seen:
            errors.add(
                row.line,
                f"{key} {value[:80]!r} is predicted twice (first on line {seen[value]})",
                kind="duplicate",
            )
            continue
        seen[value] = row.line
        label = labels.resolve(raw_label) or labels.outside(raw_label)
        if label is None:
            errors.add(row.line, labels.problem(raw_label), kind="label")
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
    return found


def _summarize(errors: RowErrors, *, key: str, expected: int, missing: int) -> None:
    errors.summarize("missing_prediction", f"{missing:,} of {expected:,} texts have no prediction")
    errors.summarize("duplicate", f"an {key} predicted again (only one prediction per text)")
    errors.summarize("unknown", f"an {key} that is not one of the texts to predict")
    errors.summarize("missing_key", f"a row without an {key}")


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


def _predicted_cells(
    file: PredictionsFile, *, shared_task: SharedTask, source: str, lookup: LabelLookup
) -> list[Cell]:
    """Every item of ``source`` with its predicted label, or ``PredictionsRejected``."""
    kind = shared_task.kind
    if source == Prediction.Source.BLIND_DEV:
        examples = {
            example.external_id: example
            for example in dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
        }
        found = _check_predictions(
            file.rows(),
            expected=examples,
            key="id",
            key_of=lambda fields: (fields.get("id") or "").strip(),
            labels=lookup,
            rejected=file.rejected,
        )
        return [(examples[key], kind.item(examples[key]), label) for key, label in found.items()]
    rows = sentence_as_text(file.rows, rejected=file.rejected)
    items = {}
    columns = [segment.column for segment in kind.segments]
    named, key_of = _item_key_of(columns)
    for item in pair_selectors.pair_items(shared_task=shared_task):
        items[key_of(dict(zip(columns, item, strict=True)))] = item
    found = _check_predictions(
        rows(), expected=items, key=named, key_of=key_of, labels=lookup, rejected=file.rejected
    )
    return [(None, items[key], label) for key, label in found.items()]


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
    cells = _predicted_cells(file, shared_task=system.shared_task, source=source, lookup=lookup)
    digest = upload_digest(data, source=source, label_map=lookup.label_map)
    return _predictions_write(
        system=system,
        actor=actor,
        filename=file.filename,
        source=source,
        cells=cells,
        digest=digest,
    )
