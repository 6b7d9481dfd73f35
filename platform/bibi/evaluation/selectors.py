"""Reads of the evaluation app, and the one place that says who sees which results.

- Scoring runs, their progress and failures, and every snapshot: the task's organizers.
- A published snapshot (the latest one is the task's leaderboard): whoever can see the
  task; its item table (each pair with each system's predictions) only once the results
  phase has started, because it shows every team's pairs.
- Team names: the real name to the organizers and to the team's own members, the alias of
  an anonymous team to everyone else, in every table and export.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from bibi.evaluation.models import CellFailure, ScoringRun, Snapshot, SnapshotItem
from bibi.sharedtasks import selectors as task_selectors
from bibi.sharedtasks.models import SharedTask, Team

User = task_selectors.User


def scoring_run_list(*, shared_task: SharedTask) -> QuerySet[ScoringRun]:
    return ScoringRun.objects.filter(shared_task=shared_task).select_related("requested_by")


def snapshot_list(*, user: User, shared_task: SharedTask) -> QuerySet[Snapshot]:
    """Every snapshot for the organizers; the published ones for whoever can see the task."""
    snapshots = Snapshot.objects.filter(shared_task=shared_task).select_related("shared_task")
    if task_selectors.is_organizer(user=user, shared_task=shared_task):
        return snapshots
    if not task_selectors.can_view_shared_task(user=user, shared_task=shared_task):
        return snapshots.none()
    return snapshots.filter(published_at__isnull=False)


def leaderboard_snapshot(*, shared_task: SharedTask) -> Snapshot | None:
    """The task's leaderboard: its latest published snapshot."""
    return (
        Snapshot.objects.filter(shared_task=shared_task, published_at__isnull=False)
        .select_related("shared_task")
        .order_by("-published_at", "-id")
        .first()
    )


@dataclass(frozen=True)
class Viewer:
    """What one user may see of one task's results, asked once per request."""

    # The teams whose real name the user may read: None for every team (an organizer).
    private_teams: frozenset[int] | None
    results_started: bool

    @classmethod
    def of(cls, *, user: User, shared_task: SharedTask) -> Viewer:
        return cls(
            private_teams=task_selectors.private_team_ids(user=user, shared_task=shared_task),
            results_started=shared_task.results_published,
        )

    @property
    def is_organizer(self) -> bool:
        return self.private_teams is None

    def sees_real_name(self, team_id: int) -> bool:
        return self.private_teams is None or team_id in self.private_teams

    def can_view_items(self, snapshot: Snapshot) -> bool:
        return self.is_organizer or (snapshot.published_at is not None and self.results_started)


@dataclass(frozen=True)
class Names:
    """Display names of a snapshot's teams and systems for one viewer."""

    teams: dict[int, str]
    systems: dict[int, str]

    def team(self, team_id: int | None) -> str:
        return self.teams.get(team_id or 0, f"team {team_id}")

    def system(self, system_id: int | None) -> str:
        return self.systems.get(system_id or 0, f"system {system_id}")


def names_for(*, viewer: Viewer, snapshot: Snapshot) -> Names:
    """Team names as ``viewer`` may read them (one query), and systems as "team / system"."""
    teams: dict[int, str] = {}
    for team_id, name, alias, is_anonymous in Team.objects.filter(
        shared_task_id=snapshot.shared_task_id
    ).values_list("id", "name", "alias", "is_anonymous"):
        teams[team_id] = alias if is_anonymous and not viewer.sees_real_name(team_id) else name
    systems = {
        entry["system_id"]: f"{teams.get(entry['team_id'], entry['team_id'])} / {entry['name']}"
        for entry in [*snapshot.systems, *snapshot.excluded_systems]
        if "name" in entry
    }
    return Names(teams=teams, systems=systems)


def snapshot_items(*, snapshot: Snapshot) -> QuerySet[SnapshotItem]:
    return snapshot.items.order_by("position")


def run_failures(*, run: ScoringRun) -> list[dict[str, Any]]:
    """The texts a model failed on (organizers only): all those the run's snapshot met, or,
    before it has one, those found while computing its cells."""
    snapshot = Snapshot.objects.filter(run=run).only("failures").first()
    if snapshot is not None:
        return list(snapshot.failures)
    rows = CellFailure.objects.filter(run=run).values_list(
        "system_version__system_id", "text", "reason"
    )
    return [
        {"system_id": system_id, "text": text, "reason": reason} for system_id, text, reason in rows
    ]
