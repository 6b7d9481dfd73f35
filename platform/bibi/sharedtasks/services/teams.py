"""Teams: their names, anonymous aliases, founding and changing them."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    Membership,
    SharedTask,
    Team,
)
from bibi.sharedtasks.services.access import join_require_allowed
from bibi.texts import name_clash_text, name_key, name_lookalike, name_normalize, name_problems


def team_alias_new(
    *, shared_task: SharedTask, kind: str, token: Callable[[], str] = lambda: secrets.token_hex(3)
) -> str:
    """An alias no team of the task has as its name or alias, compared as names are
    (``bibi.texts.name_key``): an anonymous team must not pass for another (``token`` draws
    the random part)."""
    taken = {name_key(text) for team in shared_task.teams.all() for text in (team.name, team.alias)}
    while True:
        alias = f"Anonymous {kind} {token()}"
        if name_key(alias) not in taken:
            return alias


def team_name_clean(*, shared_task: SharedTask, name: str, team: Team | None = None) -> str:
    """``name`` as it is stored (``bibi.texts.name_normalize``), if it may be the name of
    ``team`` (None: a new team) in ``shared_task``; else ``ValidationError`` on ``name``.

    The one name rule (``bibi.texts``): no invisible or direction-changing character, no word
    mixing scripts, and no other team's name or alias that looks the same (``name_key``:
    ignoring case, accents and look-alike characters), or one team could pass for another,
    or a named team for an anonymous one.
    """
    name = name_normalize(name)
    if not name:
        raise ValidationError({"name": "A team needs a name."})
    problem = name_problems(name)
    if problem:
        raise ValidationError({"name": problem})
    others = list(
        (shared_task.teams.exclude(id=team.id) if team else shared_task.teams).only("name", "alias")
    )
    other = name_lookalike(name, (o.name for o in others))
    if other is not None:
        same = f"A team named '{name}' already exists in this shared task."
        whose = "the name of another team of this shared task"
        raise ValidationError({"name": name_clash_text(name, other, same=same, whose=whose)})
    other = name_lookalike(name, (o.alias for o in others))
    if other is not None:
        same = (
            f"'{name}' is reserved: it is another team's anonymous alias in this shared task. "
            "Choose another name."
        )
        whose = "the anonymous alias of another team of this shared task"
        raise ValidationError({"name": name_clash_text(name, other, same=same, whose=whose)})
    return name


@transaction.atomic
def team_create(
    *,
    shared_task: SharedTask,
    owner: AbstractBaseUser,
    kind: str,
    name: str,
    is_anonymous: bool = False,
) -> Team:
    """Create a team with ``owner`` as its first member. A user is in one team per task."""
    if kind not in Team.Kind.values:
        raise ValidationError({"kind": f"'{kind}' is not a team kind: use builder or breaker."})
    if is_anonymous and not shared_task.allow_anonymous_teams:
        raise ValidationError(
            {"is_anonymous": "This shared task does not allow anonymous team names."}
        )
    join_require_allowed(shared_task=shared_task, user=owner)
    # Locked so that two look-alike names cannot both pass the check at once.
    SharedTask.objects.select_for_update().filter(id=shared_task.id).first()
    name = team_name_clean(shared_task=shared_task, name=name)
    team = Team.objects.create(
        shared_task=shared_task,
        kind=kind,
        name=name,
        is_anonymous=is_anonymous,
        alias=team_alias_new(shared_task=shared_task, kind=kind),
    )
    Membership.objects.create(
        team=team, user=owner, shared_task=shared_task, role=Membership.Role.OWNER
    )
    return team


@transaction.atomic
def team_update(
    *,
    team: Team,
    actor: AbstractBaseUser,
    name: str | None = None,
    is_anonymous: bool | None = None,
) -> Team:
    if not selectors.is_team_owner(user=actor, team=team):
        raise PermissionDenied("Only the team's owners may change it.")
    if name is not None:
        SharedTask.objects.select_for_update().filter(id=team.shared_task_id).first()
        team.name = team_name_clean(shared_task=team.shared_task, name=name, team=team)
    if is_anonymous is not None:
        if is_anonymous and not team.shared_task.allow_anonymous_teams:
            raise ValidationError(
                {"is_anonymous": "This shared task does not allow anonymous team names."}
            )
        team.is_anonymous = is_anonymous
    team.save()
    return team
