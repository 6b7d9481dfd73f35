"""A name that renders blank (Hangul fillers, the Braille blank, spaces and joiners around
them) is refused wherever a name is given: teams, systems, tasks, people's user names; and a
blank character that passes for a letter is refused inside a name too (``bibi.texts``)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from bibi.sharedtasks.models import SharedTask, Team
from bibi.systems.models import System
from bibi.texts import blank_problems, name_normalize, name_problems, shows_nothing

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

FILLERS = ["\u3164", "\uffa0", "\u115f", "\u2800"]
BLANK_NAMES = [
    *FILLERS,
    "\u3164\u3164\u3164",
    " \u3164 ",
    "\u2800 \u2800",
    "\u3164\u200d",
    "\u200d\u115f\u200d",
    "\u2800\u200b\u3164",
    "\ufe0f\u2800",
    "\u0301",
]
IDS = [f"{'+'.join(f'U{ord(c):04X}' for c in name)}" for name in BLANK_NAMES]
SHOWS_NOTHING = "shows nothing: it is made of characters that render blank"


@pytest.mark.parametrize("name", BLANK_NAMES, ids=IDS)
def test_a_name_that_shows_nothing_is_refused(name):
    stored = name_normalize(name)
    assert shows_nothing(stored)
    assert SHOWS_NOTHING in (name_problems(stored) or "")


@pytest.mark.parametrize("filler", FILLERS, ids=lambda c: f"U{ord(c):04X}")
@pytest.mark.parametrize("around", ["Team {}", "{} Team", "Team {} A", "{}Москва"])
def test_a_filler_beside_a_visible_name_is_refused(filler, around):
    problem = name_problems(name_normalize(around.format(filler)))
    assert problem is not None and ("renders blank" in problem or "mixes" in problem)


@pytest.mark.parametrize(
    "name", ["Team A", "한국 팀", "東京チーム", "👩\u200d💻 team", "Zoë", "⠁⠃"]
)
def test_names_that_show_what_they_hold_pass(name):
    assert blank_problems(name_normalize(name)) == []
    assert name_problems(name_normalize(name)) is None


@pytest.mark.parametrize("name", BLANK_NAMES, ids=IDS)
def test_the_team_and_system_apis_refuse_a_blank_name(cast, name):
    team = cast.client("outsider").post(
        "/api/v1/shared-tasks/sst/teams/", {"kind": "breaker", "name": name}, format="json"
    )
    assert team.status_code == 400
    assert SHOWS_NOTHING in team.json()["name"][0]
    system = cast.client("builder").post(
        "/api/v1/shared-tasks/sst/systems/", {"name": name, "kind": "hosted"}, format="json"
    )
    assert system.status_code == 400
    assert SHOWS_NOTHING in system.json()["name"][0]
    renamed = cast.client("builder").patch(
        f"/api/v1/shared-tasks/sst/teams/{cast.builder_team.id}/", {"name": name}, format="json"
    )
    assert renamed.status_code == 400
    assert Team.objects.filter(shared_task=cast.shared_task).count() == 2
    assert set(Team.objects.values_list("name", flat=True)) & {name, name_normalize(name)} == set()
    assert not System.objects.filter(name__in=[name, name_normalize(name)]).exists()


@pytest.mark.parametrize("name", BLANK_NAMES, ids=IDS)
def test_a_task_with_a_blank_name_is_refused(cast, name):
    created = cast.client("outsider").post(
        "/api/v1/shared-tasks/", {"name": name, "slug": "blank"}, format="json"
    )
    assert created.status_code == 400
    assert SHOWS_NOTHING in created.json()["name"][0]
    renamed = cast.client("organizer").patch(
        "/api/v1/shared-tasks/sst/", {"name": name}, format="json"
    )
    assert renamed.status_code == 400
    assert SHOWS_NOTHING in renamed.json()["name"][0]
    assert not SharedTask.objects.filter(slug="blank").exists()


@pytest.mark.parametrize("label", ["\u3164", "\u2800 \u200d", "neutral\u3164"])
def test_a_task_label_that_renders_blank_is_refused(cast, label):
    created = cast.client("outsider").post(
        "/api/v1/shared-tasks/",
        {"name": "Blank labels", "slug": "blank", "labels": ["positive", label]},
        format="json",
    )
    assert created.status_code == 400
    assert "render" in created.json()["labels"][0]
    assert not SharedTask.objects.filter(slug="blank").exists()


@pytest.mark.parametrize("name", ["\u115f", "\u115f\u115f", "nina\u115f"])
def test_a_user_name_that_renders_blank_is_refused_at_sign_up(name):
    response = Client().post(
        "/accounts/signup/",
        {
            "username": name,
            "email": "blank@example.org",
            "password1": "a long enough passphrase",
            "password2": "a long enough passphrase",
        },
    )
    assert response.status_code == 400
    assert "that render" in response.content.decode()
    assert not get_user_model().objects.filter(email="blank@example.org").exists()
