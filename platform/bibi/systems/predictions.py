"""Self-reported systems' predictions (the 2017 protocol): for the blind dev set during the
build phase, for the pair texts during the pair-prediction window
(``bibi.pairs.selectors.pair_predictions_window``).

``system_predictions_upload`` reads the file, checks that every text is predicted exactly
once (else every problem is listed, by kind, and nothing is stored), then writes the
predictions; labels outside the task's set are kept and counted wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.files import (
    FileFormatError,
    Row,
    RowError,
    RowErrors,
    decode_upload,
    detect_format,
)
from bibi.files.layout2017 import read_2017_aware
from bibi.labelmaps import LabelLookup
from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks import services as sharedtask_services
from bibi.sharedtasks.models import Dataset, Example, Phase, SharedTask
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction, System, SystemVersion, text_digest
from bibi.systems.selectors import dataset_examples, dev_scores, span_dev_scores
from bibi.systems.services import next_version_number, require_member, require_upload_quota
from bibi.systems.span_predictions import SpanCell, span_predicted_cells, span_prediction_rows
from bibi.texts import moment_text
from bibi.uploads import upload_digest

Status = SystemVersion.Status


def require_pair_predictions_window(*, shared_task: SharedTask) -> None:
    """Pair predictions are taken while the window of
    ``bibi.pairs.selectors.pair_predictions_window`` is open, and refused before and after
    with the window's dates."""
    doing = "uploading pair predictions"
    sharedtask_services.phase_require_ended(
        shared_task=shared_task, kind=Phase.Kind.BREAK, doing=doing
    )
    window = pair_selectors.pair_predictions_window(shared_task=shared_task)
    if window is not None and window.has_closed():
        raise ValidationError(
            f"Pair predictions were taken until {moment_text(window.closes_at)} "
            f"(server time): {doing} is no longer possible."
        )


def _read_prediction_rows(
    data: bytes, filename: str
) -> tuple[Callable[[], Iterator[Row]], str, str]:
    """The file's rows, as often as they are wanted (read anew each time, never kept); a
    2017 TSV file is read as pair files are (``bibi.files.layout2017``)."""
    try:
        file_format = detect_format(filename)
        decoded = decode_upload(data)
        rows = read_2017_aware(decoded.text, file_format=file_format)
    except FileFormatError as error:
        raise PredictionsRejected.from_format_error(error, source=filename) from None
    return rows, decoded.encoding, file_format


def _check_predictions(
    rows: Iterable[Row],
    *,
    expected: dict[str, str],
    key: str,
    labels: LabelLookup,
    rejected: Callable[[RowErrors], PredictionsRejected],
) -> dict[str, str]:
    """Every expected key predicted exactly once with a label; else every problem, summarised
    by kind. A word outside the task's labels is kept as given (``LabelLookup.outside``),
    unless most predictions are outside them: the file then speaks another vocabulary and
    needs a label map."""
    errors = RowErrors()
    seen: dict[str, int] = {}
    found: dict[str, str] = {}
    outside: list[tuple[int, str]] = []
    for row in rows:
        if row.error:
            errors.add(row.line, row.error, kind="unreadable")
            continue
        value = (row.fields.get(key) or "").strip() if key == "id" else (row.fields.get(key) or "")
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


def _sentence_as_text(
    rows: Callable[[], Iterator[Row]], *, rejected: Callable[[RowErrors], PredictionsRejected]
) -> Callable[[], Iterator[Row]]:
    """Pair-text rows may name the text ``sentence``, as the 2017 files do."""
    named_sentence = False
    named_text: Row | None = None
    for row in rows():
        if not row.error:
            named_sentence = named_sentence or "sentence" in row.fields
            named_text = named_text or (row if "text" in row.fields else None)
    if not named_sentence:
        return rows
    if named_text is not None:
        raise rejected(
            RowErrors(
                [
                    RowError(
                        named_text.line, "the file has both text and sentence: give the text in one"
                    )
                ]
            )
        )

    def renamed() -> Iterator[Row]:
        for row in rows():
            if not row.error and "sentence" in row.fields:
                row.fields["text"] = row.fields.pop("sentence")
            yield row

    return renamed


def _self_reported_version(
    *, system: System, actor: AbstractBaseUser, filename: str
) -> SystemVersion:
    """A new ready version of a self-reported system, made active; counted as an upload."""
    require_upload_quota(system)
    version = SystemVersion.objects.create(
        system=system,
        number=next_version_number(system),
        uploaded_by=actor,
        archive_name=filename,
        status=Status.READY,
        finished_at=timezone.now(),
    )
    system.active_version = version
    system.save(update_fields=["active_version"])
    return version


def _require_predictions_window(*, shared_task: SharedTask, source: str) -> None:
    if source == Prediction.Source.BLIND_DEV:
        sharedtask_services.phase_require_open(
            shared_task=shared_task, kind=Phase.Kind.BUILD, doing="uploading blind-dev predictions"
        )
    elif source == Prediction.Source.PAIRS:
        require_pair_predictions_window(shared_task=shared_task)
    else:
        raise ValidationError({"source": "Use blind_dev or pairs."})


def system_predictions_upload_require(
    *, system: System, actor: AbstractBaseUser, source: str | None = None
) -> None:
    """Raise unless ``actor`` may upload predictions of ``source`` to ``system`` now.

    With ``source`` None (the API, before it has read the form that says which), predictions
    of either source will do: a file that can be taken for neither is refused unread, with
    the reason of the window that matters now: the blind dev set's until the build phase
    has ended (nothing else can come before), the pair texts' after it.
    """
    require_member(user=actor, team=system.team, doing="uploading predictions")
    if system.kind != System.Kind.SELF_REPORTED:
        raise ValidationError("This system is hosted: the platform computes its predictions.")
    if source is not None:
        _require_predictions_window(shared_task=system.shared_task, source=source)
        return
    refusals: dict[str, ValidationError] = {}
    for candidate in Prediction.Source.values:
        try:
            _require_predictions_window(shared_task=system.shared_task, source=candidate)
        except ValidationError as error:
            refusals[candidate] = error
        else:
            return
    build = system.shared_task.phases.filter(kind=Phase.Kind.BUILD).first()
    if build is not None and timezone.now() >= build.ends_at:
        raise refusals[Prediction.Source.PAIRS]
    raise refusals[Prediction.Source.BLIND_DEV]


@dataclass
class _PredictionsFile:
    """An uploaded predictions file, read: its rows (read anew each time they are wanted) and
    how to refuse it with every problem found."""

    rows: Callable[[], Iterator[Row]]
    filename: str
    encoding: str
    file_format: str

    def rejected(self, errors: RowErrors) -> PredictionsRejected:
        return PredictionsRejected(
            errors, source=self.filename, encoding=self.encoding, file_format=self.file_format
        )


# One predicted text: its example (blind dev) or None (a pair text), the text, the label.
Cell = tuple[Example | None, str, str]


def _predicted_cells(
    file: _PredictionsFile, *, shared_task: SharedTask, source: str, lookup: LabelLookup
) -> list[Cell]:
    """Every text of ``source`` with its predicted label, or ``PredictionsRejected``."""
    if source == Prediction.Source.BLIND_DEV:
        examples = {
            example.external_id: example
            for example in dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
        }
        found = _check_predictions(
            file.rows(),
            expected=dict.fromkeys(examples, ""),
            key="id",
            labels=lookup,
            rejected=file.rejected,
        )
        return [(examples[key], examples[key].text, label) for key, label in found.items()]
    rows = _sentence_as_text(file.rows, rejected=file.rejected)
    texts = pair_selectors.pair_texts(shared_task=shared_task)
    found = _check_predictions(
        rows(), expected=dict.fromkeys(texts, ""), key="text", labels=lookup, rejected=file.rejected
    )
    return [(None, text, label) for text, label in found.items()]


def _identical_upload_refuse(*, version: SystemVersion | None, source: str, digest: str) -> None:
    """Refuse a file identical to the one ``version`` took for ``source``: nothing stored,
    no upload counted."""
    if version is None:
        return
    if source == Prediction.Source.BLIND_DEV and version.dev_predictions_sha256 == digest:
        what = f"the blind-dev predictions of version {version.number}, uploaded " + moment_text(
            version.uploaded_at
        )
    elif source == Prediction.Source.PAIRS and version.pair_predictions_sha256 == digest:
        what = f"the pair predictions version {version.number} already holds"
    else:
        return
    raise ValidationError(
        f"This file is identical to {what}: nothing was stored, and it did not count as an upload.",
        code="identical_upload",
    )


def _version_to_write(
    *, system: System, actor: AbstractBaseUser, filename: str, source: str, digest: str
) -> SystemVersion:
    """The version new predictions of ``source`` go to, under the system's lock; a file
    identical to the one the active version took is refused."""
    locked = System.objects.select_for_update().get(id=system.id)
    # Pair predictions extend the active version; a system that never predicted the
    # blind dev set (as in 2017) gets its first version from them, with no dev scores.
    version = locked.active_version
    _identical_upload_refuse(version=version, source=source, digest=digest)
    if source == Prediction.Source.BLIND_DEV or version is None:
        return _self_reported_version(system=system, actor=actor, filename=filename)
    version.predictions.filter(source=Prediction.Source.PAIRS).delete()
    return version


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
    version = _version_to_write(
        system=system, actor=actor, filename=filename, source=source, digest=digest
    )
    Prediction.objects.bulk_create(
        [
            Prediction(
                system_version=version,
                source=source,
                example=example,
                text=text,
                text_sha256=text_digest(text),
                label=label,
            )
            for example, text, label in cells
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
        version.dev_predictions_sha256 = digest
    else:
        version.pair_predictions_sha256 = digest
    version.outside_label_count = version.predictions.exclude(label__in=labels).count()
    version.save()
    if source == Prediction.Source.PAIRS:
        evaluation_triggers.scoring_run_after_version(version=version)
    return version


def _span_cells(file: _PredictionsFile, *, shared_task: SharedTask, source: str) -> list[SpanCell]:
    """Every item of ``source`` with its answer, or ``PredictionsRejected``."""
    if source == Prediction.Source.BLIND_DEV:
        examples = dataset_examples(shared_task, Dataset.Split.BLIND_DEV)
        return span_predicted_cells(
            file.rows(),
            expected={e.external_id: (e, e.text, e.question) for e in examples},
            key_of=lambda fields: (fields.get("id") or "").strip() or None,
            named="id",
            rejected=file.rejected,
        )
    rows = _sentence_as_text(file.rows, rejected=file.rejected)
    items = pair_selectors.pair_items(shared_task=shared_task)
    return span_predicted_cells(
        rows(),
        expected={_item_key(text, question): (None, text, question) for text, question in items},
        key_of=lambda fields: (
            _item_key(fields["text"], fields["question"])
            if "text" in fields and "question" in fields
            else None
        ),
        named="text and question",
        rejected=file.rejected,
    )


def _item_key(text: str, question: str) -> str:
    return json.dumps([text, question], ensure_ascii=False)


@transaction.atomic
def _span_predictions_write(
    *,
    system: System,
    actor: AbstractBaseUser,
    filename: str,
    source: str,
    cells: list[SpanCell],
    digest: str,
) -> SystemVersion:
    """``_predictions_write`` for a span task's answers."""
    version = _version_to_write(
        system=system, actor=actor, filename=filename, source=source, digest=digest
    )
    rows = span_prediction_rows(version, source, cells)
    Prediction.objects.bulk_create(rows, batch_size=2000)
    if source == Prediction.Source.BLIND_DEV:
        # One function with the hosted versions' dev scores (spanworker's, from the cells).
        version.dev_accuracy, version.dev_token_f1, version.dev_count = span_dev_scores(
            shared_task=system.shared_task, cells=rows
        )
        version.dev_predictions_sha256 = digest
    else:
        version.pair_predictions_sha256 = digest
    version.save()
    if source == Prediction.Source.PAIRS:
        evaluation_triggers.scoring_run_after_version(version=version)
    return version


def system_predictions_upload(
    *,
    system: System,
    actor: AbstractBaseUser,
    data: bytes,
    filename: str,
    source: str,
    label_map: dict[str, str] | None = None,
) -> SystemVersion:
    """Take a self-reported system's predictions for the blind dev set or for the pair texts.

    Blind dev rows give ``id`` (the example's id) and ``label``; pair-text rows give
    ``text`` (or ``sentence``) and ``label``. Every text must be predicted exactly once;
    otherwise every problem is listed, summarised by kind (``PredictionsRejected``), and
    nothing is stored. A label is the task's (or one ``label_map`` translates, see
    ``bibi.labelmaps``); any other word ("neutral" in a binary task) is kept as given,
    counted wrong when scored and in the version's ``outside_label_count``, never mapped
    to a task label, as the 2017 organizers counted them. A file identical to the one the
    active version took (same bytes, source and map) is refused, not counted as an upload. Pair predictions
    are taken during the pair-prediction window only; a system without blind-dev predictions
    gets its first version from them, whose ``dev_accuracy`` stays empty.

    A span task's rows give answers instead of labels (``span_predictions``); its dev scores
    are answer accuracy under the task's answer mode and mean token F1 (``dev_token_f1``).
    """
    system_predictions_upload_require(system=system, actor=actor, source=source)
    shared_task = system.shared_task
    if shared_task.is_span:
        rows, encoding, file_format = _read_prediction_rows(data, filename)
        file = _PredictionsFile(rows, filename, encoding, file_format)
        span_cells = _span_cells(file, shared_task=shared_task, source=source)
        return _span_predictions_write(
            system=system,
            actor=actor,
            filename=filename,
            source=source,
            cells=span_cells,
            digest=upload_digest(data, source=source, label_map=None),
        )
    lookup = LabelLookup.build(label_map, labels=list(shared_task.labels))
    rows, encoding, file_format = _read_prediction_rows(data, filename)
    file = _PredictionsFile(rows, filename, encoding, file_format)
    cells = _predicted_cells(file, shared_task=shared_task, source=source, lookup=lookup)
    digest = upload_digest(data, source=source, label_map=lookup.label_map)
    return _predictions_write(
        system=system, actor=actor, filename=filename, source=source, cells=cells, digest=digest
    )
