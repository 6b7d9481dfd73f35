"""A team's name never equals, or looks like, another team's name or anonymous alias, and an
alias never a name (the one name rule of ``bibi.texts``)."""

from __future__ import annotations

import re

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


# --- One name rule (issue 20.4): no team passes for another on a leaderboard ---------------

LOOKS_LIKE = "looks like 'Strawman', the name of another team of this shared task"


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("Straw\u200bman", "U+200B ZERO WIDTH SPACE"),
        (
            "Straw\u2010man",
            "looks like 'Straw-man', the name of another team of this shared task "
            "(differing in U+2010 HYPHEN)",
        ),
        ("St\u0440awman", "U+0440 CYRILLIC SMALL LETTER ER"),
        ("Straw\u00a0man", "A team named 'Straw man' already exists"),
        ("Straw\u202eman", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\uff33\uff54\uff52\uff41\uff57\uff4d\uff41\uff4e", "A team named 'Strawman' already"),
        ("Strawma\u0301n", f"{LOOKS_LIKE} (differing in U+00E1 LATIN SMALL LETTER A WITH ACUTE)"),
    ],
)
def test_a_team_cannot_pass_for_another_with_any_probe_character(cast, name, message):
    existing = {"\u2010": "Straw-man", "\u00a0": "Straw man"}
    original = next((value for char, value in existing.items() if char in name), "Strawman")
    services.team_update(team=cast.builder_team, actor=cast.builder, name=original)
    if name == "Straw\u00a0man":
        services.team_update(team=cast.builder_team, actor=cast.builder, name="Straw man")
    with pytest.raises(ValidationError, match=re.escape(message)):
        services.team_create(
            shared_task=cast.shared_task, owner=cast.outsider, kind="breaker", name=name
        )
    assert not cast.shared_task.teams.filter(memberships__user=cast.outsider).exists()


def test_a_name_is_stored_normalised_and_an_all_cyrillic_name_is_accepted(cast):
    team = services.team_create(
        shared_task=cast.shared_task, owner=cast.outsider, kind="breaker", name="Москва\u00a0НЛП"
    )
    team.refresh_from_db()
    assert team.name == "Москва НЛП"
    renamed = services.team_update(
        team=team, actor=cast.outsider, name="\uff2c\uff49\uff4c\uff4c\uff45"
    )
    assert renamed.name == "Lille"


def test_a_renamed_team_cannot_take_a_look_alike_of_another_name(cast):
    with pytest.raises(ValidationError, match="looks like 'Utrecht'"):
        services.team_update(team=cast.builder_team, actor=cast.builder, name="Utrecht\u0301")
    with pytest.raises(ValidationError, match="looks like 'Utrecht'.*U\\+00E9"):
        services.team_update(team=cast.builder_team, actor=cast.builder, name="Utrécht")
    cast.builder_team.refresh_from_db()
    assert cast.builder_team.name == "Strawman"


def test_a_look_alike_of_an_alias_is_reserved(cast):
    alias = cast.breaker_team.alias
    with pytest.raises(ValidationError, match="the anonymous alias of another team"):
        services.team_create(
            shared_task=cast.shared_task,
            owner=cast.outsider,
            kind="builder",
            name=alias.replace("Anonymous", "Anonyrnous"),
        )


def test_an_alias_is_never_drawn_looking_like_a_team_name(cast):
    services.team_create(
        shared_task=cast.shared_task,
        owner=cast.outsider,
        kind="breaker",
        name="Anonymous builder O0",
    )
    draws = iter(["00", "0O", "01"])
    alias = services.team_alias_new(
        shared_task=cast.shared_task, kind="builder", token=lambda: next(draws)
    )
    assert alias == "Anonymous builder 01"


def test_the_api_names_the_offending_character(cast):
    response = cast.client("outsider").post(
        "/api/v1/shared-tasks/sst/teams/",
        {"kind": "breaker", "name": "Utrecht\u200b"},
        format="json",
    )
    assert response.status_code == 400
    assert "U+200B ZERO WIDTH SPACE" in response.json()["name"][0]
