""" "Run scoring now" is idempotent: requests made at once get one run (issue 20.6)."""

from __future__ import annotations

import threading

import pytest
from django.db import IntegrityError, connection, transaction

from bibi.evaluation import services
from bibi.evaluation.models import ScoringRun

from ...conftest import sent_where_no_worker_reads
from ..conftest import build_cast

URL = "/api/v1/shared-tasks/sst/scoring-runs/"
PARALLEL = 8


@pytest.fixture(autouse=True)
def _no_worker_advances_the_runs():
    """These tests count runs, not what a worker does with them: the advance each request
    sends on commit goes where the session's worker never reads, so it cannot hold rows while
    the test's database is flushed (a deadlock seen once in a full run)."""
    with sent_where_no_worker_reads():
        yield


def at_once(work, count: int = PARALLEL) -> list:
    """``work()`` in ``count`` threads released together, each on its own database
    connection; their results (or the exceptions they raised)."""
    start = threading.Barrier(count)
    results: list = [None] * count

    def run(index: int) -> None:
        try:
            start.wait()
            results[index] = work()
        except Exception as error:  # noqa: BLE001 - handed back to the test
            results[index] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.django_db(transaction=True)
def test_eight_organizer_requests_at_once_make_one_run():
    if connection.vendor != "postgresql":
        pytest.skip("threads on their own connections need a server database")
    cast = build_cast(current_phase="contest")
    clients = [cast.client("organizer") for _ in range(PARALLEL)]
    queue = iter(clients)
    lock = threading.Lock()

    def post():
        with lock:
            client = next(queue)
        response = client.post(URL)
        assert response.status_code == 202, response.content
        return response.json()["id"]

    ids = at_once(post)

    assert all(isinstance(run_id, int) for run_id in ids), ids
    assert len(set(ids)) == 1
    assert ScoringRun.objects.filter(shared_task=cast.shared_task).count() == 1


@pytest.mark.django_db(transaction=True)
def test_requests_of_every_trigger_at_once_share_the_waiting_run():
    if connection.vendor != "postgresql":
        pytest.skip("threads on their own connections need a server database")
    cast = build_cast(current_phase="contest")
    triggers = [trigger for trigger, _ in ScoringRun.Trigger.choices] * 2

    runs = at_once(
        lambda: (
            services.scoring_run_request(
                shared_task=cast.shared_task, trigger=triggers.pop(), send=False
            ).id
        ),
        count=len(triggers),
    )

    assert len(set(runs)) == 1, runs
    assert ScoringRun.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_database_refuses_a_second_waiting_run_of_a_task():
    cast = build_cast(current_phase="contest")
    ScoringRun.objects.create(shared_task=cast.shared_task, trigger="organizer")

    with pytest.raises(IntegrityError), transaction.atomic():
        ScoringRun.objects.create(shared_task=cast.shared_task, trigger="command")
    ScoringRun.objects.create(shared_task=cast.shared_task, trigger="command", status="done")


@pytest.mark.django_db
def test_a_run_scoring_serves_an_organizer_but_not_a_change():
    cast = build_cast(current_phase="contest")
    first = services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    ScoringRun.objects.filter(id=first.id).update(status="scoring")

    again = services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    after_change = services.scoring_run_request(
        shared_task=cast.shared_task, trigger="adjudication", send=False
    )
    then = services.scoring_run_request(shared_task=cast.shared_task, trigger="command", send=False)

    assert again.id == first.id
    assert after_change.id != first.id and after_change.status == "waiting_for_cells"
    assert then.id == after_change.id


@pytest.mark.django_db
def test_someone_else_is_told_only_organizers_may_ask_for_a_run():
    cast = build_cast(current_phase="contest")

    response = cast.client("builder").post(URL)

    assert response.status_code == 403
    assert response.json()["detail"] == (
        "Only the organizers of this shared task may do that: ask for a scoring run."
    )
