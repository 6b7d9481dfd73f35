"""Celery tasks for builder systems: take ids, load, call a service.

``gpu.system_validate`` runs with ``ValidationRequest``, the part of a validation that lives in
the worker's main process: it applies the time limits this worker is configured with (the
sender's are ignored), and it speaks for a child process that cannot, one that was killed
(for memory, by ``kill -9``) or stopped at the hard time limit.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable

from billiard.einfo import ExceptionWithTraceback
from billiard.exceptions import WorkerLostError
from celery import shared_task
from celery.signals import worker_init
from celery.worker.request import Request
from django import db
from django.conf import settings
from django.db import transaction

from bibi.celery import GPU_QUEUE
from bibi.queue import Sending, enqueue_on_commit
from bibi.systems import outcomes

logger = logging.getLogger(__name__)


def _in_main_process(record: Callable[[], None]) -> None:
    """Write from the worker's main process, which must outlive any database trouble."""
    db.close_old_connections()
    try:
        record()
    except Exception:
        logger.exception("could not record what happened to a validation")
    finally:
        db.connections.close_all()


class ValidationRequest(Request):
    """A validation as the worker's main process sees it."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # (hard, soft), read here on the worker: never the limits the web process sent along.
        self.time_limits = (
            settings.SYSTEM_VALIDATION_TIME_LIMIT,
            settings.SYSTEM_VALIDATION_SOFT_TIME_LIMIT,
        )

    @property
    def _child(self) -> str:
        return f"{self.hostname}:{self.worker_pid}"

    def on_timeout(self, soft: bool, timeout: float) -> None:
        if not soft and self.worker_pid:
            # The pool stops the child right after this; stopped first, it cannot write into
            # the model store once its leftovers are removed.
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker_pid, signal.SIGKILL)
            version_id, child = self.args[0], self._child
            _in_main_process(
                lambda: outcomes.system_version_stopped_at_time_limit(
                    version_id=version_id, worker=child, limit=timeout
                )
            )
        super().on_timeout(soft, timeout)

    def on_failure(self, exc_info, send_failed_event=True, return_ok=False) -> None:
        exc = exc_info.exception
        if isinstance(exc, ExceptionWithTraceback):
            exc = exc.exc
        revoked = self._already_cancelled or self._already_revoked
        died = isinstance(exc, WorkerLostError) or (
            isinstance(exc, SystemExit | KeyboardInterrupt) and not revoked
        )
        if died:
            # Recorded before Celery puts the message back, so the next attempt sees it.
            version_id, child = self.args[0], self._child
            _in_main_process(
                lambda: outcomes.system_version_worker_died(
                    version_id=version_id, worker=child, cause=str(exc)
                )
            )
        super().on_failure(exc_info, send_failed_event=send_failed_event, return_ok=return_ok)


# Outcomes live on the version: nothing reads a result, so none is stored.
@shared_task(bind=True, name="gpu.system_validate", Request=ValidationRequest, ignore_result=True)
def system_validate_task(self, version_id: int) -> str:
    # Imported here, on the worker, to keep torch out of the web process: validation loads
    # models, and with them torch.
    from bibi.systems import validation

    return validation.system_version_validate(
        version_id=version_id,
        worker=f"{self.request.hostname}:{os.getpid()}",
        embedded=bool(self.request.is_eager),
    ).status


@worker_init.connect
def _load_model_code_before_forking(sender, **_) -> None:
    """A worker on the gpu queue imports the model code (torch) once, in its main process,
    before it forks its children: they inherit it, so no validation spends its time limit on
    the import, and a child replaced after a crash starts at once."""
    if GPU_QUEUE in sender.app.amqp.queues.consume_from:
        # fim_engine imports torch lazily, on first use: load it here, explicitly. An import
        # failing in a child (out of address space) would otherwise read as the model's fault.
        import torch  # noqa: F401
        import transformers  # noqa: F401

        import bibi.systems.validation  # noqa: F401


def validation_send_on_commit(version_id: int) -> Sending:
    """Have ``version_id`` validated once the current transaction commits.

    With a broker, the ``gpu.system_validate`` message goes to the workers. On the embedded
    default (``CELERY_TASK_ALWAYS_EAGER``) the task would run inside the request that asked
    for it, and a validation can take many minutes: with ``SYSTEM_VALIDATION_IN_BACKGROUND``
    (the default there) it runs in a thread of the web process instead, after the commit, so
    the request answers with the version ``queued`` and the page follows its state in the
    database as it would follow a worker's.
    """
    if not (settings.CELERY_TASK_ALWAYS_EAGER and settings.SYSTEM_VALIDATION_IN_BACKGROUND):
        return enqueue_on_commit(system_validate_task, version_id)
    sending = Sending()

    def start() -> None:
        threading.Thread(
            target=validate_in_background,
            args=(version_id,),
            name=f"bibi-validate-{version_id}",
            daemon=True,
        ).start()
        sending.sent = True

    transaction.on_commit(start)
    return sending


def validate_in_background(version_id: int) -> None:
    """Run the validation task in-process (as the embedded default does), in this thread; a
    failure the validation did not record itself (it raised) fails the version, so it never
    stays ``queued`` or ``running`` with nobody left to finish it."""
    try:
        system_validate_task.apply(args=(version_id,), throw=True)
    except BaseException as error:
        logger.exception("validating system version %s in the background failed", version_id)
        cause = error.__class__.__name__
        _in_main_process(
            lambda: outcomes.system_version_failed_in_process(version_id=version_id, cause=cause)
        )
    finally:
        db.connections.close_all()
