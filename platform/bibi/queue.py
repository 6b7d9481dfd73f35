"""Sending work to the Celery queues without trusting the broker to keep it.

The database says what work is owed (a version ``queued``, a cell missing); a message on
the broker is only a nudge. So a message is sent after the transaction that records the
work has committed, and a broker that is down or loses its queue loses nothing: the send
is logged and skipped, and the housekeeping beat task sends again whatever has waited too
long. A request that records work therefore never fails because the broker is away.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from amqp.exceptions import ChannelError
from celery import Task
from django.db import transaction
from kombu.exceptions import OperationalError

logger = logging.getLogger(__name__)

# Publishing to a broker that is down: try briefly, then leave it to housekeeping.
_RETRY_POLICY = {"max_retries": 2, "interval_start": 0.2, "interval_step": 0.5}


def enqueue(task: Task, *args: Any, **kwargs: Any) -> bool:
    """Send ``task`` now. Returns False (and logs) when the broker cannot take it."""
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


def enqueue_on_commit(task: Task, *args: Any, **kwargs: Any) -> Sending:
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
    from bibi.celery import app

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
