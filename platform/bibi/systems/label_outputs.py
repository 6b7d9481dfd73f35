"""A hosted labelled system's outputs on a task's items, as prediction cells.

Worker-only (it runs models through ``runner``): ``validation`` runs ``label_version_run`` for every task
type whose systems answer labels. Each item is given to the model as the task's
type says (``TaskType.model_input``: a text, or a premise and hypothesis pair), and λmax and
word hints count the segments a breaker may edit (``TaskType.model_options``). A cell holds the
item's texts, the task label the model's label means (``label_mapping``), the probabilities by
task label and whether the model cut the text; a starter cell also λmax, hints, leverage (with
each word's segment for a sentence pair: ``word_rows``) and what the model saw
(``input_sha256``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from django.conf import settings

import fim_engine
from bibi.sharedtasks.models import Dataset
from bibi.systems.errors import ValidationFailed
from bibi.systems.hosted_runs import HostedRun
from bibi.systems.models import Prediction, SystemVersion
from bibi.systems.runner import input_digests, model_call, version_system
from bibi.systems.selectors import dataset_examples, dev_scores

Reason = SystemVersion.FailureReason


def word_rows(
    scores: Sequence[tuple[str, float]], segments: Sequence[str] | None
) -> list[list[Any]]:
    """A ``fim_engine.FisherResult``'s hints or leverage as a cell stores them:
    ``[word, score]``, and ``[word, score, segment]`` for the words of a sentence pair
    (``segments``: its ``word_segments``, ``"premise"`` or ``"hypothesis"``), so that readers
    find each word in its own text (``bibi.guidance.ranking``)."""
    if segments is None:
        return [[word, score] for word, score in scores]
    return [[word, score, segment] for (word, score), segment in zip(scores, segments, strict=True)]


def label_mapping(
    model_labels: list[str], task_labels: list[str], stated: dict[str, str]
) -> dict[str, str]:
    """Decide which task label each model label means, or say why it cannot be decided."""
    if len(model_labels) != len(task_labels):
        raise ValidationFailed(
            Reason.LABEL_MISMATCH,
            f"The model has {len(model_labels)} labels ({', '.join(model_labels)}) and the task has "
            f"{len(task_labels)} ({', '.join(task_labels)}).",
        )
    if stated:
        missing = [label for label in model_labels if label not in stated]
        if missing or len(stated) != len(model_labels):
            raise ValidationFailed(
                Reason.LABEL_MISMATCH,
                f"The stated mapping must name every model label exactly once; the model's labels are "
                f"{', '.join(model_labels)}.",
            )
        return dict(stated)
    by_name = {label.lower(): label for label in task_labels}
    if {label.lower() for label in model_labels} == set(by_name):
        return {label: by_name[label.lower()] for label in model_labels}
    generic = [f"LABEL_{i}" for i in range(len(model_labels))]
    if model_labels == generic or model_labels == [str(i) for i in range(len(model_labels))]:
        # Unnamed outputs are taken in the task's label order, as a trained head would be.
        return dict(zip(model_labels, task_labels, strict=True))
    raise ValidationFailed(
        Reason.LABEL_MISMATCH,
        f"The model's labels ({', '.join(model_labels)}) are not the task's ({', '.join(task_labels)}): "
        f"state which task label each model label means when you upload.",
    )


def _predictions(
    version: SystemVersion,
    source: str,
    examples: list,
    outputs: Iterable[tuple[str, Any, bool]],
    *,
    label_names: list[str],
    mapping: dict[str, str],
) -> list[Prediction]:
    """Prediction rows from the model's (label, probabilities, truncated) per example."""
    names = [mapping[name] for name in label_names]
    kind = version.system.shared_task.kind
    items = [kind.item(example) for example in examples]
    return [
        Prediction(
            system_version=version,
            source=source,
            example=example,
            **kind.item_fields(item),
            text_sha256=kind.item_key(item),
            label=mapping[label],
            probabilities=dict(zip(names, map(float, row), strict=True)),
            truncated=truncated,
            precision=settings.SYSTEM_PRECISION,
        )
        for example, item, (label, row, truncated) in zip(examples, items, outputs, strict=True)
    ]


def _starter_rows(
    version: SystemVersion, loaded: fim_engine.System, mapping: dict[str, str]
) -> list[Prediction]:
    """The starter originals' predictions, with λmax, hints, leverage and what the model saw."""
    shared_task = version.system.shared_task
    kind = shared_task.kind
    starter = dataset_examples(shared_task, Dataset.Split.STARTER)
    inputs = [kind.model_input(kind.item(example)) for example in starter]
    # One pass over the starter set: λmax's pass already gives the prediction.
    fisher = model_call(loaded.fisher, inputs, hints=True, **kind.model_options(shared_task))
    outputs = ((r.label, r.probabilities, r.truncated) for r in fisher)
    rows = _predictions(
        version,
        Prediction.Source.STARTER,
        starter,
        outputs,
        label_names=loaded.labels,
        mapping=mapping,
    )
    seen = input_digests(loaded, inputs)
    for row, result, digest in zip(rows, fisher, seen, strict=True):
        row.lambda_max = result.lambda_max
        row.hints = word_rows(result.hints, result.word_segments)
        row.leverage = word_rows(result.leverage, result.word_segments)
        row.input_sha256 = digest
    return rows


def label_version_run(version: SystemVersion, root: Path) -> HostedRun:
    """Validate a labelled version's model directory ``root``: its blind-dev cells (accuracy,
    macro-F1) and its starter cells (λmax, hints, leverage)."""
    shared_task = version.system.shared_task
    kind = shared_task.kind
    loaded = version_system(version, unpacked=root)
    mapping = label_mapping(loaded.labels, list(shared_task.labels), version.label_mapping)
    dev = dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
    dev_batch = model_call(loaded.predict, [kind.model_input(kind.item(e)) for e in dev])
    dev_outputs = zip(dev_batch.labels, dev_batch.probabilities, dev_batch.truncated, strict=True)
    rows = _predictions(
        version,
        Prediction.Source.BLIND_DEV,
        dev,
        dev_outputs,
        label_names=loaded.labels,
        mapping=mapping,
    )
    starter_rows = _starter_rows(version, loaded, mapping)
    accuracy, macro_f1 = (
        dev_scores(list(shared_task.labels), [e.label for e in dev], [r.label for r in rows])
        if dev
        else (None, None)
    )
    return HostedRun(
        rows=[*rows, *starter_rows],
        model_format=loaded.format,
        accuracy=accuracy,
        count=len(dev),
        mapping=mapping,
        macro_f1=macro_f1,
    )
