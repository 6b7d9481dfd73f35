"""compose.worker.yaml: a GPU machine that shares no filesystem with the primary, only its
PostgreSQL and Redis (published by compose.primary.yaml) and the platform's address."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest


@pytest.fixture(scope="module")
def worker(deploy):
    return deploy.load("compose.worker.yaml")


def test_the_worker_machine_runs_one_gpu_worker_and_nothing_else(worker, compose, deploy):
    assert list(worker["services"]) == ["worker-gpu"]
    service = worker["services"]["worker-gpu"]
    assert deploy.words(service["command"]) == deploy.words(
        compose["services"]["worker-gpu"]["command"]
    )
    (device,) = service["deploy"]["resources"]["reservations"]["devices"]
    assert device["capabilities"] == ["gpu"] and device["count"] == 1
    check = deploy.health_words(service["healthcheck"])
    assert check[:5] == ["celery", "-A", "bibi", "inspect", "ping"]
    assert "gpu@${HOSTNAME}" in check


def test_it_shares_no_path_with_the_primary_and_fetches_from_the_platform(worker, deploy):
    service = worker["services"]["worker-gpu"]
    environment = service["environment"]
    mounts = dict(reversed(volume.split(":")[:2]) for volume in service["volumes"])
    assert mounts == {environment["MODEL_STORE"]: "models"}
    assert "driver_opts" not in (worker["volumes"]["models"] or {})  # a local volume, no NFS
    assert environment["WORKER_PLATFORM_URL"] == deploy.env["WORKER_PLATFORM_URL"]
    assert environment["WORKER_TOKEN"] == deploy.env["WORKER_TOKEN"]


def test_it_uses_the_primarys_database_and_broker_that_the_primary_publishes(worker, deploy):
    primary = deploy.env["BIBI_PRIMARY_ADDRESS"]
    environment = worker["services"]["worker-gpu"]["environment"]
    database = urlsplit(environment["DATABASE_URL"])
    assert (database.hostname, database.port, database.password) == (
        primary,
        5432,
        deploy.env["POSTGRES_PASSWORD"],
    )
    broker = urlsplit(environment["REDIS_URL"])
    assert (broker.hostname, broker.port, broker.password) == (
        primary,
        6379,
        deploy.env["REDIS_PASSWORD"],
    )
    published = deploy.load("compose.primary.yaml")["services"]
    assert published["postgres"]["ports"] == [f"{primary}:5432:5432"]
    assert published["redis"]["ports"] == [f"{primary}:6379:6379"]
    assert set(published) == {"postgres", "redis"}


@pytest.mark.parametrize(
    "variable", ["WORKER_TOKEN", "WORKER_PLATFORM_URL", "BIBI_PRIMARY_ADDRESS", "REDIS_PASSWORD"]
)
def test_it_refuses_to_start_without_what_it_needs(deploy, variable):
    env = {**deploy.env, variable: ""}
    with pytest.raises(deploy.MissingVariable, match=f"{variable} in deploy/.env"):
        deploy.load("compose.worker.yaml", env)
