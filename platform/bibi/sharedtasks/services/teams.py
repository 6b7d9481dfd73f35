"""Teams: their names, anonymous aliases, founding and changing them."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q

from bibi.sharedtasks import selectors
from bibi.sharedtasks.models import (
    Membership,
    SharedTask,
    Team,
)
from bibi.sharedtasks.services.access import join_require_allowed


def team_alias_new(
    *, shared_task: SharedTask, kind: str, token: Callable[[], str] = lambda: secrets.token_hex(3)
) -> str:
    """An alias no team of the task has as its alias or, ignoring case, as its name: an
    anonymous team must not pass for another (``token`` draws the random part)."""
    while True:
        alias = f"Anonymous {kind} {token()}"
        if not shared_task.teams.filter(Q(alias__iexact=alias) | Q(name__iexact=alias)).exists():
            return alias


def _require_free_team_name(
    *, shared_task: SharedTask, name: str, team: Team | None = None
) -> None:
    """A team's name is unique in its task, and is never another team's alias (ignoring case),
    or the named team would pass for the anonymous one."""
    others = shared_task.teams.exclude(id=team.id) if team is not None else shared_task.teams
    clash = others.filter(Q(name__iexact=name) | Q(alias__iexact=name)).first()
    if clash is None:
        return
    if clash.name.lower() == name.lower():
        raise ValidationError(
            {"name": f"A team named '{name}' already exists in this shared task."}
        )
    raise ValidationError(
        {
            "name": f"'{name}' is reserved: it is another team's anonymous alias in this "
            "shared task. Choose another name."
        }
    )


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
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A team needs a name."})
    if is_anonymous and not shared_task.allow_anonymous_teams:
        raise ValidationError(
            {"is_anonymous": "This shared task does not allow anonymous team names."}
        )
    join_require_allowed(shared_task=shared_task, user=owner)
    _require_free_team_name(shared_task=shared_task, name=name)
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
        name = name.strip()
        if not name:
            raise ValidationError({"name": "A team needs a name."})
        _require_free_team_name(shared_task=team.shared_task, name=name, team=team)
        team.name = name
    if is_anonymous is not None:
        if is_anonymous and not team.shared_task.allow_anonymous_teams:
            raise ValidationError(
                {"is_anonymous": "This shared task does not allow anonymous team names."}
            )
        team.is_anonymous = is_anonymous
    team.save()
    return team
