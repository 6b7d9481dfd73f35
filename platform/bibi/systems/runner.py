"""Running a builder's model on a worker: loading it once, calling it, blaming the right party.

Worker-only (it imports ``fim_engine`` and so torch): imported by ``validation`` and by the
evaluation app's worker code, never by a module the web process loads.

- ``model_load`` (``span_model_load`` for the ``*ForQuestionAnswering`` directories of span
  tasks) checks and loads a model directory; everything wrong with its content is an
  ``invalid_model`` (or ``label_mismatch``) with fim_engine's message, which names the file
  or field.
- ``model_call`` runs anything that executes the builder's model, turns the model's own
  failures into a ``ValidationFailed`` with a reason the builder can act on, and refuses
  NaN or infinite outputs (they would reach the database otherwise).
- ``version_system`` (``version_span_system`` in span tasks) is how every gpu task gets a
  builder's model: validation from the archive it unpacked, every other task (cells,
  guidance, the baseline breaker) a ready version's model from this machine's model store
  (fetched by digest when missing), of which it keeps the most recently used loaded in this
  worker process, as many as its memory allows, so a worker running many chunks of one
  system loads it once.
- ``soft_time_limit_in_process`` and ``heartbeat`` give in-process runs what a worker pool
  gives a task: a time limit, and a sign of life others can watch.
- ``input_digests`` says what a truncated text looked like to the model.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import connections

import fim_engine
from bibi.systems.errors import ValidationFailed
from bibi.systems.model_store import model_files
from bibi.systems.models import SystemVersion
from bibi.tasktypes import LABEL, SPAN, Parts

logger = logging.getLogger(__name__)

Reason = SystemVersion.FailureReason


def _out_of_memory(error: BaseException) -> bool:
    # torch's CPU allocator says "can't allocate memory", CUDA's "out of memory".
    text = str(error).lower()
    return isinstance(error, MemoryError) or "out of memory" in text or "allocate memory" in text


def model_load(
    path: Path, *, inputs: str | None = None, **options: Any
) -> tuple[fim_engine.ModelFormat, fim_engine.System]:
    """Check and load the model directory ``path`` (``options`` go to ``load_system``);
    ``inputs`` ("text" or "pair") is what the task gives it: a model that reads the other
    kind of item is refused before it is loaded.

    Raises ``ValidationFailed``: ``label_mismatch`` for a label count the task cannot use,
    ``invalid_model`` for anything else wrong with the directory's content, ``out_of_memory``
    when loading it does not fit.
    """
    with _loading_refusals():
        model_format = fim_engine.check_model_dir(path, inputs=inputs)
        return model_format, fim_engine.load_system(path, **options)


def span_model_load(path: Path, **options: Any) -> fim_engine.SpanSystem:
    """Check and load the extractive QA directory ``path`` (``options`` go to
    ``load_span_system``); refusals as for ``model_load``."""
    with _loading_refusals():
        return fim_engine.load_span_system(path, **options)


@contextmanager
def _loading_refusals() -> Iterator[None]:
    """What goes wrong while a model directory is checked and loaded, as a reason."""
    try:
        yield
    except (SoftTimeLimitExceeded, ImportError):
        # An import failing is the worker's environment (a library missing or not mappable),
        # never the builder's files: the platform's failure, retried and never counted.
        raise
    except fim_engine.LabelCountError as exc:
        raise ValidationFailed(Reason.LABEL_MISMATCH, str(exc)) from None
    except fim_engine.ModelFormatError as exc:
        raise ValidationFailed(Reason.INVALID_MODEL, str(exc)) from None
    except (
        Exception
    ) as exc:  # loading runs none of the builder's computation yet: their files are at fault
        if _out_of_memory(exc):
            raise ValidationFailed(
                Reason.OUT_OF_MEMORY, f"Loading the model ran out of memory: {exc}"
            ) from None
        raise ValidationFailed(
            Reason.INVALID_MODEL,
            f"The model directory could not be loaded: {exc.__class__.__name__}: {exc}",
        ) from None


def model_call(call: Any, *args: Any, **kwargs: Any) -> Any:
    """Run the builder's model; its own failures become reasons the builder can act on.

    What ``System.predict`` and ``System.fisher`` return is checked for NaN and infinite
    probabilities, λmax and hints: a model that produces them fails as ``model_error``.
    """
    try:
        result = call(*args, **kwargs)
    except (SoftTimeLimitExceeded, ValidationFailed, fim_engine.ModelFormatError):
        raise
    except Exception as exc:  # anything the model's own computation raises is the model's failure
        if _out_of_memory(exc):
            raise ValidationFailed(
                Reason.OUT_OF_MEMORY, f"The model ran out of memory on the worker: {exc}"
            ) from None
        raise ValidationFailed(
            Reason.MODEL_ERROR, f"The model raised {exc.__class__.__name__}: {exc}"
        ) from None
    require_finite_outputs(result)
    return result


def require_finite_outputs(result: Any) -> None:
    """Refuse NaN or infinite numbers in a ``PredictionBatch``, a list of ``FisherResult`` or
    ``SpanFisherResult``, or a list of ``SpanPrediction`` (whose score is -inf only for an
    empty sentence, which has no span to give)."""
    if isinstance(result, fim_engine.PredictionBatch):
        rows = [np.asarray(result.probabilities, dtype=np.float64)]
    elif isinstance(result, list) and all(isinstance(r, fim_engine.FisherResult) for r in result):
        rows = [
            np.asarray(
                [r.lambda_max, *np.ravel(r.probabilities), *(score for _, score in r.hints)],
                dtype=np.float64,
            )
            for r in result
        ]
    elif isinstance(result, list) and all(
        isinstance(r, fim_engine.SpanFisherResult) for r in result
    ):
        rows = [
            np.asarray(
                [r.lambda_max, *(score for _, score in (*r.hints, *r.leverage))], dtype=np.float64
            )
            for r in result
        ]
    elif isinstance(result, list) and all(isinstance(r, fim_engine.SpanPrediction) for r in result):
        scores = np.asarray([r.score for r in result], dtype=np.float64)
        rows = [np.where(np.isneginf(scores), 0.0, scores)]
    else:
        return
    bad = sum(1 for row in rows if row.size and not np.isfinite(row).all())
    if bad:
        raise ValidationFailed(
            Reason.MODEL_ERROR,
            f"The model produced NaN or infinite outputs (probabilities, λmax or hints) on {bad} "
            f"of {len(result)} texts; check its weights for values that overflow.",
        )


# version uuid -> loaded system (a System, or a SpanSystem in span tasks), most recently used last.
_LOADED: OrderedDict[str, Any] = OrderedDict()

Loaded = TypeVar("Loaded")


def system_options() -> dict[str, Any]:
    """What every gpu task loads a builder's model with (batch, length, precision)."""
    return {
        "batch_size": settings.SYSTEM_BATCH_SIZE,
        "max_length": settings.SYSTEM_MAX_SEQUENCE_LENGTH,
        "precision": settings.SYSTEM_PRECISION,
    }


def version_system(version: SystemVersion, *, unpacked: Path | None = None) -> fim_engine.System:
    """The loaded model of ``version``: the one way every gpu task (validation, prediction
    cells, guidance, the baseline breaker) gets a builder's model.

    A ready hosted version's model comes from this machine's model store, fetched by its
    archive's digest when missing (``model_store.model_files``), and this process keeps the
    most recently used ones loaded (``model_cache_full``), so a worker running many chunks of
    one system loads it once. Validation passes ``unpacked``, the directory its archive was
    just unpacked into: that model is checked against the task's label count and never cached
    (the version is not ready, and may never be).

    Raises ``ValidationFailed`` when the model cannot be loaded (see ``model_load``), and
    ``ArchiveUnavailable`` when its files cannot be fetched (the platform's failure).
    """
    shared_task = version.system.shared_task
    kind = shared_task.kind
    # The task's items (texts or sentence pairs), and the segments λmax counts by default.
    options = {
        **system_options(),
        **kind.model_options(shared_task),
        "inputs": kind.model_inputs,
    }
    if unpacked is not None:
        labels = shared_task.labels
        _, system = model_load(unpacked, expected_num_labels=len(labels), **options)
        return system
    return _cached(version, lambda path: model_load(path, **options)[1])


def version_span_system(
    version: SystemVersion, *, unpacked: Path | None = None
) -> fim_engine.SpanSystem:
    """``version_system`` for span tasks: the version's extractive QA model, from ``unpacked``
    (validation, never cached) or from the model store (cached with the others)."""
    # Span models run in fp32 whatever SYSTEM_PRECISION says (their cells record it).
    options = {key: value for key, value in system_options().items() if key != "precision"}
    if unpacked is not None:
        return span_model_load(unpacked, **options)
    return _cached(version, lambda path: span_model_load(path, **options))


# How a ready version's model is loaded, by what its task's systems answer.
VERSION_LOADERS: Parts[Callable[[SystemVersion], Any]] = Parts("model loader")
VERSION_LOADERS.register(LABEL, version_system)
VERSION_LOADERS.register(SPAN, version_span_system)


def version_model(version: SystemVersion) -> Any:
    """A ready version's loaded model, as its task's type runs it: a ``fim_engine.System`` for
    labels, a ``fim_engine.SpanSystem`` for spans (cached; see ``version_system``)."""
    return VERSION_LOADERS.of(version.system.shared_task.kind)(version)


def _cached(version: SystemVersion, load: Callable[[Path], Loaded]) -> Loaded:
    """The ready ``version``'s model from this process's cache, else ``load``-ed from the store."""
    key = str(version.uuid)
    system = _LOADED.get(key)
    if system is not None:
        _LOADED.move_to_end(key)
        return system
    with model_files(version) as path:
        system = load(path)
    _LOADED[key] = system
    while len(_LOADED) > 1 and model_cache_full():
        _LOADED.popitem(last=False)
    return system


def model_bytes(system: fim_engine.System | fim_engine.SpanSystem) -> int:
    """The memory a loaded model's parameters and buffers take (a label or a span model)."""
    module = system.module if isinstance(system, fim_engine.SpanSystem) else system.backend.module
    tensors = [*module.parameters(), *module.buffers()]
    return sum(tensor.numel() * tensor.element_size() for tensor in tensors)


def memory_bytes(device: Any) -> int:
    """The memory of ``device``: a GPU's own, else this machine's (its cgroup's when lower)."""
    import torch

    if getattr(device, "type", "cpu") == "cuda":
        return int(torch.cuda.get_device_properties(device).total_memory)
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
    except OSError:
        return total
    return min(total, int(limit)) if limit.isdigit() else total


def model_cache_full() -> bool:
    """True when the loaded models exceed what this process may keep.

    ``SYSTEM_MODEL_CACHE_SIZE`` models when set; by default (0) as many as fit in
    ``SYSTEM_MODEL_MEMORY_PERCENT`` of the memory of the device they run on, so a worker on a
    large card keeps every system of a guidance-heavy task loaded and a small one only a few.
    """
    if settings.SYSTEM_MODEL_CACHE_SIZE > 0:
        return len(_LOADED) > settings.SYSTEM_MODEL_CACHE_SIZE
    loaded = list(_LOADED.values())
    budget = memory_bytes(loaded[-1].device) * settings.SYSTEM_MODEL_MEMORY_PERCENT / 100
    return sum(model_bytes(system) for system in loaded) > budget


def loaded_versions() -> list[str]:
    """The uuids of the versions this process holds loaded, least recently used first."""
    return list(_LOADED)


def _raise_in_thread(thread_id: int, exception: type[BaseException] | None) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exception) if exception else None
    )


@contextmanager
def soft_time_limit_in_process(seconds: float) -> Iterator[None]:
    """Raise ``SoftTimeLimitExceeded`` in this thread after ``seconds``, as a worker's soft
    limit does, where no worker pool enforces one (the embedded default runs tasks in the web
    process, often outside its main thread, where signals cannot be used).

    The exception arrives between two Python bytecodes, so a model inside one long native call
    is interrupted when that call returns; nothing is killed (there is no hard limit in-process).
    A limit that fires as the block ends is raised from the ``with`` statement or not at all:
    record success only after the block.
    """
    target = threading.get_ident()
    lock = threading.Lock()
    armed = [True]

    def fire() -> None:
        with lock:
            if armed[0]:
                _raise_in_thread(target, SoftTimeLimitExceeded)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            armed[0] = False
            timer.cancel()
            # Fired but not raised yet: it must not surface after the block.
            _raise_in_thread(target, None)


@contextmanager
def heartbeat(beat: Callable[[], None], *, every: float) -> Iterator[None]:
    """Call ``beat`` every ``every`` seconds in a thread while the block runs.

    A worker that dies cannot say so; its silence can be noticed (housekeeping does). A beat
    that fails is logged and the next one tried: the work itself must not fail for it.
    """
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.wait(every):
                try:
                    beat()
                except Exception:
                    logger.warning("heartbeat failed", exc_info=True)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name="bibi-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def input_digests(system: fim_engine.System, texts: Sequence[str]) -> list[str]:
    """SHA-256 of the token ids the model saw for each text, after its truncation.

    Two texts with the same digest looked the same to the model: when truncation made them
    so, a pair of them tells nothing about the model (``bibi.evaluation`` leaves it out).
    """
    if not texts:
        return []
    return _batch_digests(system.encode(texts))


def span_input_digests(
    system: fim_engine.SpanSystem, questions: Sequence[str], sentences: Sequence[str]
) -> list[str]:
    """``input_digests`` of (question, sentence) pairs: what each pair looked like to a span
    model after the sentence was cut to fit."""
    if not sentences:
        return []
    return _batch_digests(system.encode(questions, sentences))


def _batch_digests(batch: Any) -> list[str]:
    lengths = batch.attention_mask.sum(dim=1).tolist()
    return [
        hashlib.sha256(",".join(map(str, ids[: int(length)])).encode()).hexdigest()
        for ids, length in zip(batch.input_ids.tolist(), lengths, strict=True)
    ]
