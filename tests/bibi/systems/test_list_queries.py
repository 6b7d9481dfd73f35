"""The systems lists cost the same SQL queries for 2 rows as for 20."""

from __future__ import annotations

import pytest

from bibi.sharedtasks.models import Example
from bibi.systems import services
from bibi.systems.models import Prediction, System, SystemVersion
from bibi.tasktypes.items import text_digest

from ..conftest import query_count


def add_systems(cast, before: int, total: int) -> None:
    for i in range(before, total):
        system = services.system_create(
            team=cast.builder_team, actor=cast.builder, name=f"system {i}", kind="self_reported"
        )
        versions = [
            SystemVersion.objects.create(
                system=system, number=number, status=SystemVersion.Status.READY
            )
            for number in (1, 2)
        ]
        System.objects.filter(id=system.id).update(active_version=versions[-1])


@pytest.mark.parametrize("who", ["organizer", "builder"])
def test_the_system_list_costs_the_same_for_2_systems_as_for_20(build_cast_fixture, who):
    cast = build_cast_fixture
    cast.shared_task.max_systems_per_team = 20
    cast.shared_task.save()
    client = cast.client(who)
    url = "/api/v1/shared-tasks/sst/systems/"

    add_systems(cast, 0, 2)
    few = query_count(client, url)
    add_systems(cast, 2, 20)
    many = query_count(client, url)

    listed = client.get(url).json()["results"]
    assert len(listed) == 20
    assert [v["number"] for v in listed[0]["versions"]] == [2, 1]
    assert many == few


def test_the_starter_fisher_list_costs_the_same_for_2_originals_as_for_20(build_cast_fixture):
    cast = build_cast_fixture
    add_systems(cast, 0, 1)
    version = SystemVersion.objects.get(number=2)
    url = f"/api/v1/shared-tasks/sst/systems/{version.system_id}/versions/2/starter-fisher/"
    client = cast.client("builder")

    def predict(before: int, total: int) -> None:
        for i in range(before, total):
            example = Example.objects.create(
                dataset=cast.starter,
                external_id=f"f{i}",
                text=f"film {i}",
                label="positive",
                position=10 + i,
            )
            Prediction.objects.create(
                system_version=version,
                source=Prediction.Source.STARTER,
                example=example,
                text=example.text,
                text_sha256=text_digest(example.text),
                label="positive",
                lambda_max=float(i),
            )

    predict(0, 2)
    few = query_count(client, url)
    predict(2, 20)
    assert query_count(client, url) == few
    assert len(client.get(url).json()["results"]) == 20
