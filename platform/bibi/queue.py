"""Sending work to the Celery queues without trusting the broker to keep it.

The database says what work is owed (a version ``queued``, a cell missing); a message on
the broker is only a nudge. So a message is sent after the transaction that records the
work has committed, and a broker that is down or loses its queue loses nothing: the send
is logged and skipped, and the housekeeping beat task sends again whatever has waited too
long. A request that records work therefore never fails because the broker is away.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import redis
from amqp.exceptions import ChannelError
from celery import Task
from django.conf import settings
from django.db import transaction
from kombu.exceptions import OperationalError

from bibi.celery import app

logger = logging.getLogger(__name__)

# Beat's housekeeping task records each tick here (``bibi.health.beat_tick_record``).
BEAT_TICK_KEY = "bibi:beat:last-tick"
# Beat is late when this many housekeeping intervals have passed without a tick.
BEAT_LATE_AFTER_INTERVALS = 3
BEAT_READ_TIMEOUT_SECONDS = 1.0


def beat_tick_age() -> float | None:
    """Seconds since beat's last tick, None when none is recorded; raises
    ``redis.RedisError`` when the broker cannot be read. Not on the embedded default."""
    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL,
        socket_connect_timeout=BEAT_READ_TIMEOUT_SECONDS,
        socket_timeout=BEAT_READ_TIMEOUT_SECONDS,
    )
    try:
        raw = client.get(BEAT_TICK_KEY)
    finally:
        client.close()
    return None if raw is None else max(0.0, time.time() - float(raw))


def beat_late_after() -> float:
    """Seconds without a tick after which beat counts as stopped."""
    return float(BEAT_LATE_AFTER_INTERVALS * settings.HOUSEKEEPING_INTERVAL)


def periodic_tasks_run() -> bool:
    """Whether beat's periodic tasks run for this deployment: the one rule that the pages
    promising something of them (a scoring run when the break phase closes) ask, and that
    ``/healthz`` reports. Never on the embedded default (no beat); elsewhere, when beat
    has ticked lately."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return False
    try:
        age = beat_tick_age()
    except redis.RedisError:
        return False
    return age is not None and age <= beat_late_after()


# Publishing to a broker that is down: try briefly, then leave it to housekeeping.
_RETRY_POLICY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5}


def _registered(task: Task | str) -> Task:
    """A task, or the task registered under a Celery task name (``"default.scoring_run_score"``):
    a module that its own tasks module imports sends by name, so the two never import each
    other."""
    if not isinstance(task, str):
        return task
    if task not in app.tasks:
        # A process that has not sent by name yet imports the apps' tasks modules, as a worker
        # does when it starts (none of them loads torch).
        app.loader.import_default_modules()
    return app.tasks[task]


def enqueue(task: Task | str, *args: Any, **kwargs: Any) -> bool:
    """Send ``task`` (or the task registered under that name) now. Returns False (and logs)
    when the broker cannot take it."""
    task = _registered(task)
    try:
        task.apply_async(args=args, kwargs=kwargs, retry=True, retry_policy=_RETRY_POLICY)
    except OperationalError as error:
        logger.warning(
            "broker unreachable: %s(%s) not sent; housekeeping will send it again (%s)",
            task.name,
            ", ".join(map(repr, args)),
            error,
        )
        return False
    return True


@dataclass
class Sending:
    """What became of a send asked for on commit: ``sent`` stays None until the commit."""

    sent: bool | None = None


def enqueue_on_commit(task: Task | str, *args: Any, **kwargs: Any) -> Sending:
    """Send ``task`` once the current transaction commits (at once outside one).

    The returned ``Sending`` says, after the commit, whether the broker took it, so a request
    can tell its user that the work waits for the queue to come back.
    """
    sending = Sending()

    def send() -> None:
        sending.sent = enqueue(task, *args, **kwargs)

    transaction.on_commit(send)
    return sending


def waiting(queue: str) -> int | None:
    """How many messages wait in ``queue`` on the broker; None when the broker cannot say.

    Housekeeping asks before sending work again: messages still queued are not lost, only
    waiting for a worker, and sending them again would only pile up copies.
    """
    try:
        with app.connection_for_read() as connection:
            connection.ensure_connection(max_retries=1)
            declared = connection.default_channel.queue_declare(queue=queue, passive=True)
    except ChannelError:
        # Never declared: nothing was ever sent to it.
        return 0
    except OperationalError as error:
        logger.warning("broker unreachable: cannot count the messages in %s (%s)", queue, error)
        return None
    return int(declared.message_count)
