"""A system's name follows the one name rule (``bibi.texts``): normalised, no invisible or
look-alike character, unique in its team on the look-alike key."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError

from bibi.systems import services
from bibi.systems.models import System

pytestmark = pytest.mark.django_db


def create(cast, name: str) -> System:
    return services.system_create(
        team=cast.builder_team, actor=cast.builder, name=name, kind="hosted"
    )


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("mini\u200blm", "U+200B ZERO WIDTH SPACE"),
        ("mini\u2010lm", "looks like 'mini-lm', another system of the team (differing in U+2010"),
        ("mini\u0440-lm", "U+0440 CYRILLIC SMALL LETTER ER"),
        ("mini-lm\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("\uff4d\uff49\uff4e\uff49-lm", "The team already has a system named 'mini-lm'."),
        ("mi\u0301ni-lm", "looks like 'mini-lm', another system of the team (differing in U+00ED"),
    ],
)
def test_a_system_cannot_pass_for_another_of_its_team(cast, name, message):
    create(cast, "mini-lm")
    with pytest.raises(ValidationError, match=re.escape(message)):
        create(cast, name)
    assert list(cast.builder_team.systems.values_list("name", flat=True)) == ["mini-lm"]


def test_a_no_break_space_is_stored_as_a_space_and_collides(cast):
    assert create(cast, "mini\u00a0lm").name == "mini lm"
    with pytest.raises(ValidationError, match="already has a system named 'MINI LM'"):
        create(cast, "MINI LM")


def test_an_all_cyrillic_system_name_is_accepted(cast):
    assert create(cast, "Модель один").name == "Модель один"
