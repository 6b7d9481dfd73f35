"""A team's name never equals another team's anonymous alias, and an alias never a name."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from bibi.sharedtasks import services

pytestmark = pytest.mark.django_db

RESERVED = "is reserved: it is another team's anonymous alias in this shared task"


@pytest.mark.parametrize("spell", [str, str.upper, str.lower])
def test_a_new_team_cannot_take_another_teams_alias(cast, spell):
    alias = cast.breaker_team.alias
    with pytest.raises(ValidationError, match=RESERVED):
        services.team_create(
            shared_task=cast.shared_task, owner=cast.outsider, kind="builder", name=spell(alias)
        )


def test_a_team_cannot_be_renamed_to_another_teams_alias(cast):
    services.team_update(team=cast.breaker_team, actor=cast.breaker, is_anonymous=True)
    with pytest.raises(ValidationError, match=RESERVED):
        services.team_update(
            team=cast.builder_team, actor=cast.builder, name=cast.breaker_team.alias.upper()
        )
    cast.builder_team.refresh_from_db()
    assert cast.builder_team.name == "Strawman"


def test_the_api_names_the_field_at_fault(cast):
    response = cast.client("outsider").post(
        "/api/v1/shared-tasks/sst/teams/",
        {"kind": "breaker", "name": cast.builder_team.alias},
        format="json",
    )
    assert response.status_code == 400
    assert RESERVED in response.json()["name"][0]


def test_an_alias_is_never_drawn_equal_to_a_team_name_or_alias(cast):
    services.team_create(
        shared_task=cast.shared_task,
        owner=cast.outsider,
        kind="breaker",
        name="ANONYMOUS BUILDER 00",
    )
    taken_alias = cast.builder_team.alias.rsplit(" ", 1)[1]
    draws = iter(["00", taken_alias, "01"])
    alias = services.team_alias_new(
        shared_task=cast.shared_task, kind="builder", token=lambda: next(draws)
    )
    assert alias == "Anonymous builder 01"


def test_a_team_may_keep_its_own_name_and_take_its_own_alias(cast):
    team = services.team_update(team=cast.builder_team, actor=cast.builder, name="strawman")
    assert team.name == "strawman"
    team = services.team_update(team=team, actor=cast.builder, name=team.alias)
    assert team.name == team.alias
