"""Computing a chunk of cells: the half of the evaluation app that runs models.

Only the worker imports this module (through ``bibi.evaluation.tasks``), so the web process
never loads torch. ``cell_chunk_compute`` loads the version's model once per worker process
(``bibi.systems.runner.version_system``), predicts the chunk's texts that still have no cell
(label, probabilities, and for pair and starter texts λmax, word hints and word leverage
from one pass),
records what each text looked like to the model after truncation, and upserts the cells on
their unique key, so a chunk delivered twice writes the same rows once.

A text the model fails on (it raises, or returns NaN or infinity: ``runner.model_call``
refuses those) becomes a ``CellFailure``
with the reason; a failing batch is split in halves until the failing texts are found, so
the rest of the chunk is still written.

A chunk's items are example ids (starter and blind dev sets) or pair items (a text, or the
list of an item's texts: a span task's sentence and question, a sentence pair's premise and
hypothesis), keyed by their type's ``item_key``. How a chunk is computed depends on what the
task's systems answer (``CELL_RUNS``): a labelled version predicts labels, with λmax, word
hints and leverage over the segments a breaker may edit; a span task's extractive QA model
gives each item its answer span, and starter and pair items their span λmax, word hints and
leverage (``bibi.systems.span_outputs``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

import fim_engine
from bibi.evaluation.chunks import FailedCell, cell_chunk_finish
from bibi.evaluation.models import CellChunk, ScoringRun
from bibi.evaluation.services import scoring_run_advance, scoring_run_score
from bibi.sharedtasks.models import Example
from bibi.systems.errors import ValidationFailed
from bibi.systems.label_outputs import word_rows
from bibi.systems.models import Prediction, SystemVersion
from bibi.systems.runner import input_digests, model_call, version_span_system, version_system
from bibi.systems.span_outputs import SpanOutput, span_outputs
from bibi.tasktypes import LABEL, SPAN, Parts
from bibi.tasktypes.items import Item as TaskItem
from bibi.tasktypes.items import item_line

logger = logging.getLogger(__name__)

Source = Prediction.Source

# Fields a recomputed cell may overwrite; the key (version, source, digest) stays.
CELL_FIELDS = [
    field.name
    for field in Prediction._meta.concrete_fields
    if field.name not in ("id", "system_version", "source", "text_sha256")
]


@dataclass(frozen=True)
class Output:
    """What the model said about one text, in its own label names."""

    label: str
    probabilities: list[float]
    lambda_max: float | None
    hints: list[list[Any]] | None
    leverage: list[list[Any]] | None
    truncated: bool
    input_sha256: str


Item = TypeVar("Item")
Result = TypeVar("Result")


def _by_halves(
    run: Callable[[list[Item]], Sequence[Result]], items: list[Item]
) -> list[Result | str]:
    """``run(items)``, or per item the reason the model failed on it: one bad item must not
    sink its neighbours, so a failing batch is split in halves until the failing items are
    found."""
    try:
        return list(run(items))
    except ValidationFailed as failure:
        if len(items) == 1:
            return [failure.detail]
        middle = len(items) // 2
        return _by_halves(run, items[:middle]) + _by_halves(run, items[middle:])


def _run(
    system: fim_engine.System, inputs: list[Any], *, fisher: dict[str, Any] | None
) -> list[Output | str]:
    """The model's output for each input, or the reason it failed on that input."""
    return _by_halves(lambda part: _outputs_of(system, part, fisher=fisher), inputs)


def _outputs_of(
    system: fim_engine.System, inputs: list[Any], *, fisher: dict[str, Any] | None
) -> list[Output]:
    """The model's output for each input (with λmax and hints, under the options ``fisher``,
    unless it is None); raises ``ValidationFailed`` when the model fails."""
    digests = model_call(input_digests, system, inputs)
    if fisher is not None:
        results = model_call(system.fisher, inputs, hints=True, **fisher)
        return [
            Output(
                r.label,
                [float(p) for p in r.probabilities],
                r.lambda_max,
                word_rows(r.hints, r.word_segments),
                word_rows(r.leverage, r.word_segments),
                r.truncated,
                digest,
            )
            for r, digest in zip(results, digests, strict=True)
        ]
    batch = model_call(system.predict, inputs)
    return [
        Output(label, [float(p) for p in row], None, None, None, truncated, digest)
        for label, row, truncated, digest in zip(
            batch.labels, batch.probabilities, batch.truncated, digests, strict=True
        )
    ]


def _entries(chunk: CellChunk) -> list[tuple[Example | None, TaskItem]]:
    """(example, item) for each item of the chunk: pair items (a text, or a list of texts),
    or starter/blind-dev examples."""
    kind = chunk.shared_task.kind
    if chunk.source == Source.PAIRS:
        return [(None, (item,) if isinstance(item, str) else tuple(item)) for item in chunk.items]
    examples = Example.objects.in_bulk(chunk.items)
    return [(examples[item], kind.item(examples[item])) for item in chunk.items if item in examples]


def _already_there(version: SystemVersion, source: str, digests: list[str]) -> set[str]:
    """Digests of the chunk's texts that have a cell by now (another chunk, validation)."""
    cells = Prediction.objects.filter(system_version=version, text_sha256__in=digests)
    if source == Source.PAIRS:
        # A starter original's cell from validation serves the pairs too.
        cells = cells.filter(lambda_max__isnull=False)
    else:
        cells = cells.filter(source=source)
    return set(cells.values_list("text_sha256", flat=True))


def cell_chunk_compute(*, chunk_id: int) -> int:
    """Compute and store one chunk's missing cells; returns how many cells it wrote.

    Read what the chunk still lacks, run the model on it, then write the cells and finish
    the chunk in one transaction (a chunk another worker finished meanwhile writes nothing).
    """
    chunk = (
        CellChunk.objects.select_related("system_version__system__shared_task", "shared_task")
        .filter(id=chunk_id)
        .first()
    )
    if chunk is None or chunk.done_at is not None:
        return 0
    # Housekeeping reads this as a sign of life: a chunk at work is not sent again.
    CellChunk.objects.filter(id=chunk.id).update(started_at=timezone.now())
    version = chunk.system_version
    rows, failures = CELL_RUNS.of(chunk.shared_task.kind)(chunk, _todo(chunk))
    with transaction.atomic():
        chunk = (
            CellChunk.objects.select_for_update().select_related("system_version").get(id=chunk.id)
        )
        if chunk.done_at is not None:
            return 0
        Prediction.objects.bulk_create(
            rows,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["system_version", "source", "text_sha256"],
            update_fields=CELL_FIELDS,
        )
        cell_chunk_finish(chunk=chunk, computed=len(rows), failures=failures)
    if failures:
        logger.warning(
            "system version %s failed on %d text(s) of chunk %s",
            version.id,
            len(failures),
            chunk.id,
        )
    return len(rows)


# (example, item, cell key) of each item of a chunk.
Todo = list[tuple[Example | None, TaskItem, str]]


def _todo(chunk: CellChunk) -> Todo:
    """(example, item, digest) of each of the chunk's items that has no cell yet, once per key
    (two span examples asking one question of one sentence share a cell)."""
    kind = chunk.shared_task.kind
    entries = _entries(chunk)
    digests = [kind.item_key(item) for _, item in entries]
    present = set(_already_there(chunk.system_version, chunk.source, digests))
    todo = []
    for (example, item), digest in zip(entries, digests, strict=True):
        if digest not in present:
            present.add(digest)
            todo.append((example, item, digest))
    return todo


def _unless_unrunnable(count: int, compute: Callable[[], list[Result | str]]) -> list[Result | str]:
    """``compute()``, or for all ``count`` items the reason when the model cannot be loaded
    or runs out of time."""
    try:
        return compute()
    except ValidationFailed as failure:
        reason = f"The model could not be loaded: {failure.detail}"
    except fim_engine.ModelFormatError as error:
        reason = f"The model could not be loaded: {error}"
    except SoftTimeLimitExceeded:
        limit = settings.EVALUATION_CHUNK_SOFT_TIME_LIMIT
        reason = f"The model took longer than {limit} seconds on a batch of {count} texts."
    return [reason] * count


def _outputs(chunk: CellChunk, inputs: list[Any]) -> tuple[list[Output | str], list[str]]:
    """The model's output on each input (a failure's reason instead, for all of them when the
    model cannot be loaded or runs out of time), and the model's label names."""
    if not inputs:
        return [], []
    labels: list[str] = []
    shared_task = chunk.shared_task
    fisher = (
        None if chunk.source == Source.BLIND_DEV else shared_task.kind.model_options(shared_task)
    )

    def compute() -> list[Output | str]:
        system = version_system(chunk.system_version)
        labels.extend(system.labels)
        return _run(system, inputs, fisher=fisher)

    return _unless_unrunnable(len(inputs), compute), labels


def _span_cells(chunk: CellChunk, todo: Todo) -> tuple[list[Prediction], list[FailedCell]]:
    """A span task's cells: the answer span of each (sentence, question) item, with span λmax,
    hints and leverage for starter and pair items; and the items the model failed on."""
    items = [item for _, item, _ in todo]
    fisher = chunk.source != Source.BLIND_DEV

    def compute() -> list[SpanOutput | str]:
        if not items:
            return []
        system = version_span_system(chunk.system_version)
        return _by_halves(
            lambda part: span_outputs(
                system, [t for t, _ in part], [q for _, q in part], fisher=fisher
            ),
            items,
        )

    outputs = _unless_unrunnable(len(items), compute)
    rows: list[Prediction] = []
    failures: list[FailedCell] = []
    for (example, (text, question), digest), output in zip(todo, outputs, strict=True):
        if isinstance(output, str):
            failures.append(FailedCell(text=text, text_sha256=digest, reason=output))
            continue
        rows.append(
            output.prediction(
                version=chunk.system_version,
                source=chunk.source,
                sentence=text,
                question=question,
                example=example,
            )
        )
    return rows, failures


def _label_cells(chunk: CellChunk, todo: Todo) -> tuple[list[Prediction], list[FailedCell]]:
    """A labelled task's cells to write and the items the model failed on."""
    kind = chunk.shared_task.kind
    outputs, model_labels = _outputs(chunk, [kind.model_input(item) for _, item, _ in todo])
    version = chunk.system_version
    mapping = version.label_mapping
    names = [mapping[name] for name in model_labels]
    rows: list[Prediction] = []
    failures: list[FailedCell] = []
    for (example, item, digest), output in zip(todo, outputs, strict=True):
        if isinstance(output, str):
            failures.append(FailedCell(text=item_line(item), text_sha256=digest, reason=output))
            continue
        rows.append(
            Prediction(
                system_version=version,
                source=chunk.source,
                example=example,
                **kind.item_fields(item),
                text_sha256=digest,
                label=mapping[output.label],
                probabilities=dict(zip(names, output.probabilities, strict=True)),
                lambda_max=output.lambda_max,
                hints=output.hints,
                leverage=output.leverage,
                truncated=output.truncated,
                input_sha256=output.input_sha256,
                precision=settings.SYSTEM_PRECISION,
            )
        )
    return rows, failures


# How a chunk's cells are computed, by what the task's systems answer.
CELL_RUNS: Parts[Callable[[CellChunk, Todo], tuple[list[Prediction], list[FailedCell]]]] = Parts(
    "cell computation"
)
CELL_RUNS.register(LABEL, _label_cells)
CELL_RUNS.register(SPAN, _span_cells)


def scoring_run_complete(
    *, run_id: int, on_chunk: Callable[[ScoringRun, CellChunk], None] | None = None
) -> ScoringRun:
    """Take a run to its end in this process: compute its missing cells, then score it.

    What ``manage.py score`` does: no broker, no worker. ``on_chunk(run, chunk)`` is called
    after each chunk (a progress bar; ``run`` as it was advanced). Chunks another process is
    computing at the same time are computed here too; the upserts make that harmless.
    """
    # A round computes every chunk the run was missing; a second one only finds what changed
    # meanwhile (a version that just became ready).
    for _ in range(3):
        run = scoring_run_advance(run_id=run_id, send=False)
        if run.status == ScoringRun.Status.SCORING:
            run = scoring_run_score(run_id=run_id, send=False)
        if run.status != ScoringRun.Status.WAITING_FOR_CELLS:
            return run
        open_chunks = CellChunk.objects.filter(
            shared_task_id=run.shared_task_id, source=Source.PAIRS, done_at__isnull=True
        ).order_by("id")
        for chunk in open_chunks:
            cell_chunk_compute(chunk_id=chunk.id)
            if on_chunk is not None:
                on_chunk(run, chunk)
    return scoring_run_advance(run_id=run_id, send=False)
