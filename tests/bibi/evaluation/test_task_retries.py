"""The evaluation's tasks retry, with exponential back-off, when the database or the broker is
briefly away, and give up after EVALUATION_TASK_MAX_RETRIES; any other error is not retried."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from kombu.exceptions import OperationalError as BrokerUnavailable

from bibi.evaluation import services, tasks

ALL = [tasks.cells_compute_task, tasks.scoring_run_advance_task, tasks.scoring_run_score_task]


@pytest.mark.parametrize("task", ALL, ids=lambda task: task.name)
def test_each_task_backs_off_exponentially_on_transient_errors_only(task, settings):
    assert set(task.autoretry_for) == set(tasks.TRANSIENT)
    assert (task.retry_backoff, task.retry_backoff_max, task.retry_jitter) == (2, 120, True)
    assert task.max_retries == settings.EVALUATION_TASK_MAX_RETRIES
    assert task.acks_late


class Flaky:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self, *, run_id: int):
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return type("Run", (), {"status": "scoring"})()


@pytest.mark.parametrize(
    "error", [OperationalError("the database went away"), BrokerUnavailable("no broker")]
)
def test_a_database_or_broker_away_for_a_moment_is_retried(monkeypatch, error):
    flaky = Flaky([error])
    monkeypatch.setattr(services, "scoring_run_advance", flaky)
    # Run in this process, as apply() does, the retry follows at once instead of after the
    # back-off.
    result = tasks.scoring_run_advance_task.apply(args=[1], throw=False)
    assert (result.state, result.result, flaky.calls) == ("SUCCESS", "scoring", 2)


def test_it_gives_up_after_the_last_retry(monkeypatch):
    flaky = Flaky([OperationalError("still down")])
    monkeypatch.setattr(services, "scoring_run_advance", flaky)
    retries = tasks.scoring_run_advance_task.max_retries
    result = tasks.scoring_run_advance_task.apply(args=[1], retries=retries, throw=False)
    assert (result.state, flaky.calls) == ("FAILURE", 1)
    assert isinstance(result.result, OperationalError)


def test_a_bug_is_not_retried(monkeypatch):
    flaky = Flaky([KeyError("a bug")])
    monkeypatch.setattr(services, "scoring_run_advance", flaky)
    result = tasks.scoring_run_advance_task.apply(args=[1], throw=False)
    assert (result.state, flaky.calls) == ("FAILURE", 1)
    assert isinstance(result.result, KeyError)
