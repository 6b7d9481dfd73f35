"""The entries: what each breaker team submitted for scoring.

The entry of a breaker team is the set it marked final, else its latest set submitted
before the break deadline (server clock); drafts are never entries. Selectors and label
validation read them from here (``selectors`` re-exports the names).
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks.models import Phase, SharedTask, Team


def _break_deadline(shared_task: SharedTask) -> datetime | None:
    phase = shared_task.phase_of(Phase.Kind.BREAK)
    return phase.ends_at if phase else None


def entry_pair_sets(*, shared_task: SharedTask) -> dict[int, PairSet]:
    """Each breaker team's entry, by team id. Teams without one are left out."""
    deadline = _break_deadline(shared_task)
    if deadline is None:
        return {}
    candidates = PairSet.objects.filter(
        shared_task=shared_task, status=PairSet.Status.SUBMITTED, submitted_at__lt=deadline
    ).order_by("team_id", "-is_final", "-submitted_at", "-id")
    entries: dict[int, PairSet] = {}
    for pair_set in candidates:
        entries.setdefault(pair_set.team_id, pair_set)
    return entries


def pair_set_entry(*, team: Team) -> PairSet | None:
    return entry_pair_sets(shared_task=team.shared_task).get(team.id)


def entry_pairs(*, shared_task: SharedTask) -> QuerySet[Pair]:
    """Every pair of every team's entry, excluded ones included."""
    entry_ids = [pair_set.id for pair_set in entry_pair_sets(shared_task=shared_task).values()]
    return Pair.objects.filter(pair_set_id__in=entry_ids)
