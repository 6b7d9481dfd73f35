from __future__ import annotations

import pytest

from bibi.celery import app, ping


def test_a_real_worker_process_consumes_a_task_from_redis(celery_worker_process):
    result = ping.delay()
    assert result.get(timeout=30) == "pong"
    celery_worker_process.wait_for_log(f"Task default.ping[{result.id}] succeeded")


@pytest.mark.parametrize(
    ("task_name", "queue"),
    [
        ("gpu.system_validate", "gpu"),
        ("gpu.predictions_fill", "gpu"),
        ("default.ping", "default"),
        ("scoring_run", "default"),
    ],
)
def test_tasks_are_routed_to_a_queue_by_name(task_name, queue):
    route = app.amqp.router.route({}, task_name)
    assert route["queue"].name == queue


def test_the_worker_acknowledges_late_and_prefetches_one():
    assert app.conf.task_acks_late is True
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.task_time_limit > app.conf.task_soft_time_limit > 0
