"""Small template helpers: naming teams as the viewer may see them, dates, failure help."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django import template

from bibi.guidance.visibility import sight_of
from bibi.pairs.selectors import draft_unsubmitted
from bibi.sharedtasks.models import Dataset, SharedTask, Team
from bibi.sharedtasks.selectors import Viewer
from bibi.systems.models import System, SystemVersion
from bibi.systems.selectors import versions_of
from bibi.texts import moment_text
from bibi.web.access import validator_role_of
from bibi.web.answer_marks import Piece, answer_marks
from bibi.web.failures import FailureHelp, failure_help
from bibi.web.validation_results import validation_words

register = template.Library()


@register.filter
def team_name(team: Team, viewer: Viewer) -> str:
    """``{{ team|team_name:viewer }}``: the alias of an anonymous team, unless the viewer
    is in it or organizes the task."""
    return viewer.team_name(team)


@register.filter
def moment(value: datetime | None) -> str:
    """A date as the platform writes deadlines: ``2025-05-01 12:00:00 UTC``."""
    return moment_text(value) if value else ""


@register.filter
def iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


@register.filter
def failure(reason: str) -> FailureHelp | None:
    return failure_help(reason)


@register.filter
def versions_newest_first(system: System) -> list[SystemVersion]:
    return versions_of(system=system)


@register.filter
def sees_guidance(viewer: Viewer, shared_task: SharedTask) -> bool:
    """``{% if viewer|sees_guidance:shared_task %}``: the task's guidance is open to the viewer
    (``bibi.guidance.visibility.sight_of``; no query)."""
    return sight_of(viewer, shared_task).allowed


@register.filter
def validates(viewer: Viewer, shared_task: SharedTask) -> bool:
    """``{% if viewer|validates:shared_task %}``: the viewer may label pairs in the task's
    validation (``bibi.web.access.validator_role_of``)."""
    return validator_role_of(viewer, shared_task) is not None


@register.filter
def validation_state(key: str) -> str:
    """A pair's label-validation state (or a vote's flag) in words."""
    return validation_words(key)


@register.filter
def percent(value: float | None) -> str:
    """A share as ``87.5%``; a dash for none (a missing attribute resolves to "")."""
    return f"{100 * value:.1f}%" if isinstance(value, int | float) else "—"


@register.inclusion_tag("web/includes/field.html")
def field(bound_field):  # type: ignore[no-untyped-def]
    """One form field with its label, help text and errors, tied together for screen readers."""
    return {"field": bound_field}


@register.inclusion_tag("web/includes/draft_warning.html")
def draft_warning(shared_task: SharedTask, viewer: Viewer):  # type: ignore[no-untyped-def]
    """On every task page a breaker team's member sees: its draft's unsubmitted pairs and
    the deadline after which they can no longer be submitted (``draft_unsubmitted``)."""
    team = viewer.team
    draft = draft_unsubmitted(team=team) if team and team.kind == Team.Kind.BREAKER else None
    return {"shared_task": shared_task, "draft": draft}


@register.filter
def can_view_examples(viewer: Viewer, dataset: Dataset) -> bool:
    return viewer.datasets.examples(dataset.split)


@register.filter
def decimal(value: float | None, places: int = 1) -> str:
    """A number with ``places`` decimals; a dash for none (an undefined rate)."""
    return f"{value:.{places}f}" if isinstance(value, int | float) else "—"


# A heat-map cell's shade is one of this many steps, each a class in site.css: the page's
# Content-Security-Policy refuses inline style attributes.
HEAT_STEPS = 10


@register.filter
def heat(value: float | None) -> str:
    """The classes of a heat-map cell holding a percentage: ``heat heat-0`` (palest) to
    ``heat heat-10``, ``heat-none`` without a value. Every shade keeps the page's ink at 4.5:1
    or more, and the number is always printed in the cell."""
    if not isinstance(value, int | float):
        return "heat-none"
    share = min(max(value / 100, 0.0), 1.0)
    return f"heat heat-{round(share * HEAT_STEPS)}"


@register.filter
def get(mapping: dict[str, object], key: str) -> object:
    """``{{ row|get:name }}``: a value under a key held in a variable."""
    return mapping.get(key, "")


@register.filter
def answers_marked(text: str, answers: list[Any] | None) -> list[Piece]:
    """``{% include "web/includes/marked.html" with pieces=text|answers_marked:answers %}``:
    a span task's sentence with its answer spans marked (``bibi.web.answer_marks``)."""
    return answer_marks(text, answers or [])
