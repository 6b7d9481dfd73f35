"""Small template helpers: naming teams as the viewer may see them, dates, failure help; and a
task type's fragments, words and texts (``bibi.web.kinds``)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django import template
from django.template.context import Context
from django.utils.html import conditional_escape, format_html_join
from django.utils.safestring import SafeString, mark_safe

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
from bibi.web.kinds import fragment_names, page_word
from bibi.web.validation_results import validation_words

register = template.Library()


# `code` in an organizer's text: a pair of backticks on one line.
_INLINE_CODE = re.compile(r"`([^`\n]+)`")


@register.filter
def inline_code(value: Any) -> SafeString:
    """Text written with Markdown's inline code (`make demo`), escaped, its backtick pairs
    shown as ``<code>`` and a backtick left alone (a pair cut by ``truncatewords``) dropped:
    no page shows literal backticks. Safe after ``linebreaks`` (whose output is escaped)."""
    text = str(conditional_escape(value))
    text = _INLINE_CODE.sub(r"<code>\1</code>", text)
    return mark_safe(text.replace("`", ""))  # noqa: S308 - escaped above


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
    """A share as ``87.5%``; a dash for none (a missing attribute resolves to "") and for NaN
    (a span system's confidence: it gives no probabilities)."""
    if not isinstance(value, int | float) or math.isnan(value):
        return "—"
    return f"{100 * value:.1f}%"


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


# --- Task types: their fragments, words and texts (bibi.web.kinds) --------------------------


@register.simple_tag(takes_context=True)
def kind_include(context: Context, name: str, **values: Any) -> SafeString:
    """``{% kind_include "pair_cells" pair=pair %}``: the fragment ``name`` of the type of the
    context's ``shared_task`` (``bibi.web.kinds.fragment_names``: its own, else its answer
    kind's), rendered in the page's context with ``values`` added. Its last line break is
    dropped, so a fragment reads inside a sentence as its words would."""
    names = fragment_names(context["shared_task"].kind, name)
    fragment = context.template.engine.select_template(names)
    with context.push(**values):
        # Rendered (and so escaped) by the template engine.
        return mark_safe(fragment.render(context).removesuffix("\n"))


@register.filter
def kind_word(shared_task: SharedTask, name: str) -> SafeString:
    """``{{ shared_task|kind_word:"accuracy" }}``: what pages call ``name`` in the task's type
    ("accuracy" or "answer accuracy"; ``bibi.web.kinds.PageKind.words``)."""
    # The words are constants of bibi.web.kinds, never anyone's input: written as they are
    # ("the original's"), as they were when they stood in the templates.
    return mark_safe(page_word(shared_task, name))


@register.filter
def segment_title(field: str, shared_task: SharedTask) -> str:
    """``{{ suggestion.segment|segment_title:shared_task }}``: how pages call the text an
    ``Example`` field holds ("Hypothesis" for a sentence pair's ``text_b``); the field itself
    for one the type does not have."""
    titles = {segment.field: segment.title for segment in shared_task.kind.segments}
    return titles.get(field, field)


@register.filter
def editable_titles(shared_task: SharedTask) -> str:
    """``{{ shared_task|editable_titles }}``: the texts breakers may edit in this task, in
    words ("hypothesis", "premise or hypothesis")."""
    editable = shared_task.kind.editable_fields(shared_task.editable_text)
    titles = [s.title.lower() for s in shared_task.kind.segments if s.field in editable]
    return " or ".join(titles)


@register.filter
def segments_of(kind: Any, record: Any) -> list[tuple[Any, str]]:
    """``{% for segment, text in shared_task.kind|segments_of:example %}``: an example's
    segments (``bibi.tasktypes.Segment``: its field and title) with their texts."""
    return list(zip(kind.segments, kind.item(record), strict=True))


def _texts(kind: Any, item: Sequence[str]) -> SafeString:
    """An item's texts: the text alone for an item of one segment, else each segment titled,
    one a line."""
    if len(item) == 1:
        return conditional_escape(item[0])
    titled = ((segment.title, text) for segment, text in zip(kind.segments, item, strict=True))
    return format_html_join(mark_safe("<br>"), '<span class="muted">{}:</span> {}', titled)


@register.filter
def item_texts(record: Any, shared_task: SharedTask) -> SafeString:
    """``{{ example|item_texts:shared_task }}``: an example's texts by segment (``_texts``)."""
    kind = shared_task.kind
    return _texts(kind, kind.item(record))


@register.filter
def original_texts(pair: Any, shared_task: SharedTask) -> SafeString:
    """``{{ pair|original_texts:shared_task }}``: a pair's original texts by segment."""
    kind = shared_task.kind
    return _texts(kind, kind.pair_items(pair)[0])


@register.filter
def variant_texts(pair: Any, shared_task: SharedTask) -> SafeString:
    """``{{ pair|variant_texts:shared_task }}``: a pair's variant texts by segment."""
    kind = shared_task.kind
    return _texts(kind, kind.pair_items(pair)[1])
