"""Self-reported systems' predictions (the 2017 protocol): for the blind dev set during the
build phase, for the pair items during the pair-prediction window
(``bibi.pairs.selectors.pair_predictions_window``).

``system_predictions_upload`` checks who may upload what now (``reported``), then hands the
file to the reader of its task's answers: ``label_predictions`` (a label per item) or
``span_predictions`` (an answer span per item). Each reads the file, checks that every item is
predicted exactly once (else every problem is listed, by kind, and nothing is stored), then
writes the predictions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.contrib.auth.models import AbstractBaseUser

from bibi.systems.label_predictions import label_predictions_upload
from bibi.systems.models import System, SystemVersion
from bibi.systems.reported import (
    predictions_files_read,
    require_pair_predictions_window,
    system_predictions_upload_require,
)
from bibi.systems.span_predictions import span_predictions_upload
from bibi.tasktypes import LABEL, SPAN, Parts

__all__ = [
    "require_pair_predictions_window",
    "system_predictions_upload",
    "system_predictions_upload_require",
]

# The reader of each kind of answer: ``upload(system=, actor=, file=, data=, source=,
# label_map=)`` checks the read ``file`` and stores its predictions.
PREDICTION_UPLOADS: Parts[Callable[..., SystemVersion]] = Parts("predictions reader")
PREDICTION_UPLOADS.register(LABEL, label_predictions_upload)
PREDICTION_UPLOADS.register(SPAN, span_predictions_upload)


def system_predictions_upload(
    *,
    system: System,
    actor: AbstractBaseUser,
    source: str,
    data: bytes | None = None,
    filename: str = "",
    files: Sequence[tuple[str, bytes]] = (),
    label_map: dict[str, str] | None = None,
    file_format: str = "",
) -> SystemVersion:
    """Take a self-reported system's predictions for the blind dev set or for the pair items.

    ``data`` (named ``filename``) is one file; ``files``, as ``(name, bytes)``, are several
    that together predict every item (a builder's 2017 files, one per breaker team). Each is read in ``file_format`` (csv,
    tsv, jsonl, or ``2017``: no header, ``label<TAB>sentence`` or a label per line), or, when
    it is "", in the format its content shows, whatever its name
    (``reported.prediction_format_of``); a CSV or TSV file without a header row is refused
    with "no header row".

    Blind dev rows give ``id`` (the example's id); pair-item rows the item's texts in its
    type's columns (``text`` or ``sentence``; a span item's ``text`` and ``question``; a
    sentence pair's ``premise`` and ``hypothesis``); each row its label (``label_predictions``,
    with ``label_map``) or answer span (``span_predictions``). Every item must be predicted;
    an item predicted again with the same answer is counted once (the version's
    ``repeated_predictions`` says how many such rows there were), with another answer it is
    refused. Otherwise every problem is listed, summarised by kind (``PredictionsRejected``),
    and nothing is stored. A file identical to the one the active version took (same bytes,
    source and map) is refused, not counted as an upload. Pair predictions are taken during
    the pair-prediction window only; a system without blind-dev predictions gets its first
    version from them, whose ``dev_accuracy`` stays empty.
    """
    system_predictions_upload_require(system=system, actor=actor, source=source)
    if data is not None:
        files = [(filename, data), *files]
    kind = system.shared_task.kind
    file = predictions_files_read(
        files,
        file_format=file_format,
        header_hint=kind.predictions_header_hint,
        formats=["", *(key for key, _ in kind.prediction_formats)],
    )
    # Several files are one upload: their bytes, in order, make its digest.
    data = files[0][1] if len(files) == 1 else b"\0".join(data for _, data in files)
    upload = PREDICTION_UPLOADS.of(kind)
    return upload(
        system=system, actor=actor, file=file, data=data, source=source, label_map=label_map
    )
