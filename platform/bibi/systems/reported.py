"""What every self-reported upload shares, whatever the task's type: the windows predictions
are taken in, reading the file, and the version new predictions go to.

Self-reported systems' predictions (the 2017 protocol) come for the blind dev set during the
build phase and for the pair items during the pair-prediction window
(``bibi.pairs.selectors.pair_predictions_window``). ``predictions.system_predictions_upload``
hands a file to the reader of its task's answers (``label_predictions``, ``span_predictions``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.utils import timezone

from bibi.evaluation import triggers as evaluation_triggers
from bibi.files import FileFormatError, Row, RowError, RowErrors, decode_upload
from bibi.files.layout2017 import PREDICTIONS_2017, iter_2017_predictions, read_2017_aware
from bibi.pairs import selectors as pair_selectors
from bibi.sharedtasks import services as sharedtask_services
from bibi.sharedtasks.models import Phase, SharedTask
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.systems.services import next_version_number, require_member, require_upload_quota
from bibi.texts import moment_text

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


def _predictions_window_require(*, shared_task: SharedTask, source: str) -> None:
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
        _predictions_window_require(shared_task=system.shared_task, source=source)
        return
    refusals: dict[str, ValidationError] = {}
    for candidate in Prediction.Source.values:
        try:
            _predictions_window_require(shared_task=system.shared_task, source=candidate)
        except ValidationError as error:
            refusals[candidate] = error
        else:
            return
    build = system.shared_task.phases.filter(kind=Phase.Kind.BUILD).first()
    if build is not None and timezone.now() >= build.ends_at:
        raise refusals[Prediction.Source.PAIRS]
    raise refusals[Prediction.Source.BLIND_DEV]


@dataclass
class PredictionsFile:
    """An uploaded predictions file (or several read as one), read: its rows (read anew each
    time they are wanted) and how to refuse it with every problem found."""

    rows: Callable[[], Iterator[Row]]
    filename: str
    encoding: str
    file_format: str

    def rejected(self, errors: RowErrors) -> PredictionsRejected:
        return PredictionsRejected(
            errors, source=self.filename, encoding=self.encoding, file_format=self.file_format
        )


# The formats a predictions file may be read in: "" judges by its content.
PREDICTION_FORMATS = ("", "csv", "tsv", "jsonl", PREDICTIONS_2017)
# The columns a predictions file's header may name, whatever the task's type: a first line
# that names none of them is no header.
PREDICTION_COLUMNS = frozenset(
    {"id", "label", "text", "sentence", "sentence_id", "question", "answer", "start", "end"}
    | {"premise", "hypothesis", "system", "sentiment_label"}
)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _names_columns(line: str, delimiter: str) -> bool:
    return any(
        name.strip().strip('"').lower() in PREDICTION_COLUMNS for name in line.split(delimiter)
    )


def _no_header(line: str, header_hint: str) -> FileFormatError:
    return FileFormatError(
        f"no header row: the first line ({line[:80]!r}) names none of the columns a "
        f"predictions file has. {header_hint}",
        line=1,
    )


def prediction_format_of(
    text: str, *, requested: str, header_hint: str, formats: Sequence[str] = PREDICTION_FORMATS
) -> str:
    """The format ``text`` is read in: ``requested``, or judged by its content when it is
    "" (never by the file's name, which the 2017 files do not follow). A CSV or TSV file
    must begin with a header row naming its columns; a file that begins with a JSON object
    is JSON Lines; a file without a header, of lines with a tab or without a comma, is in
    the 2017 layout (``bibi.files.layout2017.iter_2017_predictions``)."""
    if requested and requested not in formats:
        raise FileFormatError(
            f"{requested!r} is not a predictions format of this task: use "
            + ", ".join(each for each in formats if each)
        )
    first = _first_line(text)
    if requested in ("csv", "tsv"):
        if first and not _names_columns(first, "," if requested == "csv" else "\t"):
            raise _no_header(first, header_hint)
        return requested
    delimiter = "\t" if "\t" in first else ","
    header = _names_columns(first, delimiter)
    if requested == PREDICTIONS_2017 and header:
        raise FileFormatError(
            f"the first line ({first[:80]!r}) is a header row, but a file in the 2017 layout "
            "has none: choose CSV or TSV with a header row, or let the content decide",
            line=1,
        )
    if requested:
        return requested
    if first.startswith("{"):
        return "jsonl"
    if header:
        return "tsv" if delimiter == "\t" else "csv"
    if PREDICTIONS_2017 in formats and ("\t" in first or "," not in first):
        return PREDICTIONS_2017
    raise _no_header(first, header_hint)


@dataclass
class FileRow(Row):
    """A row of one of several files uploaded together: ``file`` names it."""

    file: str = ""


def row_file(row: Row) -> str:
    """The file ``row`` is in when it is one of several uploaded together, else ""."""
    return row.file if isinstance(row, FileRow) else ""


def row_place(row: Row) -> str:
    """Where ``row`` is, for a message, when it is one of several files ("in b.tsv, ")."""
    return f"in {row_file(row)}, " if row_file(row) else ""


def _file_rows(
    text: str, *, file_format: str, filename: str, several: bool
) -> Callable[[], Iterator[Row]]:
    if file_format == PREDICTIONS_2017:
        read: Callable[[], Iterator[Row]] = lambda: iter_2017_predictions(text)  # noqa: E731
    else:
        read = read_2017_aware(text, file_format=file_format)
    if not several:
        return read

    def named() -> Iterator[Row]:
        for row in read():
            yield FileRow(row.line, row.fields, row.error, file=filename)

    return named


# The most files one predictions upload takes (a builder's files, one per breaker team).
PREDICTION_FILES_MAX = 20


def predictions_files_read(
    files: Sequence[tuple[str, bytes]],
    *,
    file_format: str = "",
    header_hint: str = "",
    formats: Sequence[str] = PREDICTION_FORMATS,
) -> PredictionsFile:
    """Read one predictions file, or several that together predict every item (one per
    breaker team, as the 2017 builders answered): their rows, read anew each time they are
    wanted, in the order given; a row of one of several knows its file (``FileRow``). Each
    file's format is ``file_format``, or judged by its content (``prediction_format_of``),
    one of ``formats`` (those the task's type takes)."""
    if not files:
        raise PredictionsRejected.from_format_error(
            FileFormatError("no file was uploaded"), source=""
        )
    if len(files) > PREDICTION_FILES_MAX:
        raise PredictionsRejected.from_format_error(
            FileFormatError(
                f"{len(files)} files: one upload takes at most {PREDICTION_FILES_MAX} (one per "
                "breaker team)"
            ),
            source=", ".join(filename for filename, _ in files[:3]) + ", …",
        )
    several = len(files) > 1
    readers, encodings, read_in = [], [], []
    for filename, data in files:
        try:
            decoded = decode_upload(data)
            read_as = prediction_format_of(
                decoded.text, requested=file_format, header_hint=header_hint, formats=formats
            )
            readers.append(
                _file_rows(decoded.text, file_format=read_as, filename=filename, several=several)
            )
        except FileFormatError as error:
            raise PredictionsRejected.from_format_error(error, source=filename) from None
        encodings.append(decoded.encoding)
        read_in.append(read_as)

    def rows() -> Iterator[Row]:
        for read in readers:
            yield from read()

    return PredictionsFile(
        rows,
        ", ".join(filename for filename, _ in files),
        ", ".join(dict.fromkeys(encodings)),
        ", ".join(dict.fromkeys(read_in)),
    )


def sentence_as_text(
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


def version_to_write(
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


def predictions_recorded(version: SystemVersion, *, source: str, digest: str) -> SystemVersion:
    """Save ``version`` once its new predictions of ``source`` are written (and its scores
    set), with the digest of the file they came from; pair predictions ask for a scoring run."""
    if source == Prediction.Source.BLIND_DEV:
        version.dev_predictions_sha256 = digest
    else:
        version.pair_predictions_sha256 = digest
    version.save()
    if source == Prediction.Source.PAIRS:
        evaluation_triggers.scoring_run_after_version(version=version)
    return version
