"""Suggestions and draft checks as jobs that never hold a web worker: the request waits a couple
of seconds at most, then answers 202 with the job to poll; interactive model work has a queue
of its own that scoring chunks cannot block; in-flight caps answer 429 naming the cap."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from bibi.celery import app
from bibi.guidance import jobs
from bibi.sharedtasks.models import Membership

from ...conftest import routed_to_own_queues
from .guidance_conftest import build_geometry_task

SUGGEST = "/api/v1/shared-tasks/sst/guidance/suggest/"
DRAFT = {"original_id": "mild-pos", "variant_text": "the film is bad"}
NOBODY_READS = "interactive-nobody-reads"


@pytest.fixture
def no_jobs_in_flight(settings):
    """In-flight counts left by another test (their deadline not yet passed) are cleared."""
    if settings.REDIS_URL:
        import redis

        client = redis.Redis.from_url(settings.REDIS_URL)
        for key in client.scan_iter("guidance:inflight:*"):
            client.delete(key)
    jobs._registries.clear()
    yield
    jobs._registries.clear()


@pytest.fixture
def unanswered(monkeypatch):
    """Jobs sent to a queue no worker reads: they stay in flight."""
    from bibi.guidance.tasks import guidance_suggest_task

    send = guidance_suggest_task.apply_async
    monkeypatch.setattr(
        guidance_suggest_task,
        "apply_async",
        lambda *args, **options: send(*args, **{**options, "queue": NOBODY_READS}),
    )


def poll(client: APIClient, location: str, patience: float = 180) -> object:
    """The job's answer once it is no longer waiting (follows the state, not a clock)."""
    deadline = time.monotonic() + patience
    while True:
        response = client.get(location)
        if response.status_code != 202:
            return response
        assert time.monotonic() < deadline, "the job never left the queue"
        time.sleep(0.2)


def test_the_suggestion_task_has_a_queue_of_its_own():
    assert app.amqp.router.route({}, "gpu.guidance_suggest")["queue"].name == "interactive"
    assert app.amqp.router.route({}, "gpu.cells_compute")["queue"].name == "gpu"


@pytest.mark.embedded
def test_on_the_embedded_default_the_answer_comes_at_once(db, tmp_path, settings):
    if not settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("in-process on the embedded default")
    settings.GUIDANCE_SUGGEST_WAIT = 0  # in-process: there is nothing to wait for
    task = build_geometry_task(tmp_path)

    response = task.cast.client("breaker").post(SUGGEST, DRAFT, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["breaks"] == 2
    assert jobs.in_flight("total") == 0


@pytest.mark.slow
def test_a_real_worker_answers_a_job_that_the_request_did_not_wait_for(
    transactional_db, tmp_path, settings, no_jobs_in_flight
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there are no workers")
    from ..evaluation.conftest import Stack

    settings.GUIDANCE_SUGGEST_WAIT = 0
    task = build_geometry_task(tmp_path)
    client = task.cast.client("breaker")
    stack = Stack(tmp_path, SimpleNamespace(url=settings.REDIS_URL), {})
    try:
        stack.start("interactive", "interactive")
        response = client.post(SUGGEST, DRAFT, format="json")

        assert response.status_code == 202, response.content
        body = response.json()
        assert body["status"] == "waiting" and response["Location"] == body["location"]
        assert body["location"].endswith(f"/guidance/jobs/{body['job_id']}/")
        answer = poll(client, body["location"])
        assert answer.status_code == 200, answer.content
        assert answer.json()["breaks"] == 2 and answer.json()["changed"] == 2
        # Kept for a while: asked again, the same answer; another user's job is not found.
        assert client.get(body["location"]).json() == answer.json()
        assert task.cast.client("builder").get(body["location"]).status_code == 404
        assert task.cast.client("anonymous").get(body["location"]).status_code in (401, 403)
        assert jobs.in_flight(f"user:{task.cast.breaker.id}") == 0
    finally:
        stack.close()


@pytest.mark.slow
def test_a_job_waiting_beside_a_scoring_run_is_taken_before_its_chunks(
    transactional_db, tmp_path, settings, no_jobs_in_flight
):
    """The worker of deploy/compose.yaml's worker-gpu (``-Q interactive,gpu``, one process)
    takes a waiting job before the run's waiting chunks: scoring cannot block model work that
    a person waits for.

    Both wait before the worker starts, on queues of this test's own (the session's worker
    never sees them), so the order the worker takes them in is the whole check: no clock."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process: there are no workers")
    from bibi.evaluation import services
    from bibi.evaluation.models import CellChunk

    from ..evaluation.conftest import Stack
    from .guidance_conftest import many_pairs

    settings.GUIDANCE_SUGGEST_WAIT = 0
    settings.EVALUATION_CHUNK_SIZE = 1
    task = build_geometry_task(tmp_path)
    many_pairs(task, 60)
    own = uuid.uuid4().hex[:8]
    interactive, gpu, default = (f"{queue}-{own}" for queue in ("interactive", "gpu", "default"))

    def route(name: str) -> str:
        if name == "gpu.guidance_suggest":
            return interactive
        # The run's chunks wait on the test's gpu queue; advancing the run, on one nobody reads.
        return gpu if name.startswith("gpu.") else default

    stack = Stack(tmp_path, SimpleNamespace(url=settings.REDIS_URL), {})
    client = task.cast.client("breaker")
    with routed_to_own_queues(route, (interactive, gpu, default)):
        try:
            run = services.scoring_run_request(shared_task=task.shared_task, trigger="command")
            services.scoring_run_advance(run_id=run.id)
            assert CellChunk.objects.filter(run=run).count() >= 60
            response = client.post(SUGGEST, DRAFT, format="json")
            assert response.status_code == 202, response.content

            worker = stack.start("worker-gpu", f"{interactive},{gpu}")
            answer = poll(client, response.json()["location"])

            assert answer.status_code == 200, answer.content
            log = worker.log()
            first_chunk = log.find("Task gpu.cells_compute[")
            assert log.index("Task gpu.guidance_suggest[") < first_chunk or first_chunk == -1
        finally:
            stack.close()


def test_caps_on_jobs_in_flight_answer_429_naming_the_cap(
    db, tmp_path, settings, no_jobs_in_flight, unanswered
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("in-process jobs are never in flight past their request")
    settings.GUIDANCE_SUGGEST_WAIT = 0
    settings.GUIDANCE_INFLIGHT_PER_USER = 1
    settings.GUIDANCE_INFLIGHT_PER_TEAM = 2
    settings.GUIDANCE_INFLIGHT_TOTAL = 3
    task = build_geometry_task(tmp_path)
    cast = task.cast
    users = get_user_model().objects
    mate = users.create_user("mate")
    Membership.objects.create(team=cast.breaker_team, user=mate, shared_task=cast.shared_task)

    def ask(user) -> object:
        client = APIClient()
        client.force_authenticate(user)
        return client.post(SUGGEST, DRAFT, format="json")

    assert ask(cast.breaker).status_code == 202
    per_user = ask(cast.breaker)
    assert per_user.status_code == 429
    assert "GUIDANCE_INFLIGHT_PER_USER" in per_user.json()["detail"]
    assert per_user["Retry-After"]

    assert ask(mate).status_code == 202
    settings.GUIDANCE_INFLIGHT_PER_USER = 5  # mate's own cap would allow it, the team's not
    per_team = ask(mate)
    assert per_team.status_code == 429
    assert "Your team already has 2" in per_team.json()["detail"]

    assert ask(cast.organizer).status_code == 202  # no team: counted per user and overall
    settings.GUIDANCE_INFLIGHT_PER_TEAM = 5
    overall = ask(cast.breaker)
    assert overall.status_code == 429
    assert "GUIDANCE_INFLIGHT_TOTAL" in overall.json()["detail"]
    assert jobs.in_flight("total") == 3


def test_a_job_no_worker_takes_fails_with_the_reason_once_its_deadline_passed(
    db, tmp_path, settings, no_jobs_in_flight, unanswered, monkeypatch
):
    if settings.CELERY_TASK_ALWAYS_EAGER:
        pytest.skip("the embedded default runs tasks in-process")
    settings.GUIDANCE_SUGGEST_WAIT = 0
    task = build_geometry_task(tmp_path)
    client = task.cast.client("breaker")
    location = client.post(SUGGEST, DRAFT, format="json").json()["location"]
    assert client.get(location).status_code == 202

    # Past the longest a job can wait and run, nobody will answer it.
    later = time.time() + jobs.in_flight_deadline(0) + 1
    monkeypatch.setattr(time, "time", lambda: later)
    failed = client.get(location)
    monkeypatch.undo()

    assert failed.status_code == 503
    assert "No model worker took the job within 60 seconds" in failed.json()["detail"]
    assert jobs.in_flight(f"user:{task.cast.breaker.id}") == 0


def test_an_unknown_job_is_not_found(db, tmp_path):
    task = build_geometry_task(tmp_path)

    response = task.cast.client("breaker").get(f"{SUGGEST[:-8]}jobs/{'0' * 32}/")

    assert response.status_code == 404
