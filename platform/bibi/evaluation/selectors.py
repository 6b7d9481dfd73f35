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

from django.db import connection
from django.db.models import F, QuerySet, TextField
from django.db.models.functions import Cast

from bibi.evaluation.models import CellFailure, ScoringRun, Snapshot, SnapshotItem
from bibi.evaluation.reports import OUTCOMES
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


def snapshot_newest(*, shared_task: SharedTask) -> Snapshot | None:
    """The task's most recent snapshot, published or not: publishing any other one puts
    older scores (fewer pairs or systems, other settings) on the leaderboard."""
    return Snapshot.objects.filter(shared_task=shared_task).order_by("-created_at", "-id").first()


def results_snapshot(
    *, shared_task: SharedTask, is_organizer: bool, snapshot_id: int | None = None
) -> Snapshot | None:
    """The snapshot a results page shows.

    ``snapshot_id`` names one: any of the task's for an organizer, a published one for
    anyone else (None when there is no such snapshot for them). Without it: the
    leaderboard, or for an organizer before anything is published, the latest snapshot.
    """
    snapshots = Snapshot.objects.filter(shared_task=shared_task).select_related("shared_task")
    if snapshot_id is not None:
        if not is_organizer:
            snapshots = snapshots.filter(published_at__isnull=False)
        return snapshots.filter(id=snapshot_id).first()
    if not is_organizer:
        return leaderboard_snapshot(shared_task=shared_task)
    return snapshots.order_by(F("published_at").desc(nulls_last=True), "-id").first()


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

    @classmethod
    def of_page(cls, *, viewer: task_selectors.Viewer, shared_task: SharedTask) -> Viewer:
        """The same answers from a page's ``sharedtasks`` viewer, without a query (the
        task's phases prefetched)."""
        own = frozenset([viewer.membership.team_id]) if viewer.membership else frozenset()
        return cls(
            private_teams=None if viewer.is_organizer else own,
            results_started=shared_task.results_published,
        )

    def sees_real_name(self, team_id: int) -> bool:
        return self.private_teams is None or team_id in self.private_teams

    def can_view_items(self, snapshot: Snapshot) -> bool:
        return self.is_organizer or (snapshot.published_at is not None and self.results_started)


def system_published_name(*, system_id: int, name: str, sees_team: bool) -> str:
    """The one rule for naming a system to someone outside the organizers and its team.

    A system's name is as private as its team's identity: ``sees_team`` is whether the
    viewer may read the team's real name (the organizers, the team's members, anyone for a
    team that is not anonymous). Whoever may not reads ``system <id>``: a distinctive
    system name beside an anonymous team's alias would name the team. Leaderboards,
    snapshots, exports and the results pages name systems through ``names_for``, which
    applies this rule.
    """
    return name if sees_team else f"system {system_id}"


@dataclass(frozen=True)
class Names:
    """Display names of a snapshot's teams and systems for one viewer.

    ``teams``: the real name or an anonymous team's alias; ``system_names``: each system's
    published name (``system_published_name``); ``systems``: "team / system", as tables
    show them.
    """

    teams: dict[int, str]
    systems: dict[int, str]
    system_names: dict[int, str]

    def team(self, team_id: int | None) -> str:
        return self.teams.get(team_id or 0, f"team {team_id}")

    def system(self, system_id: int | None) -> str:
        return self.systems.get(system_id or 0, f"system {system_id}")

    def system_name(self, system_id: int | None) -> str:
        return self.system_names.get(system_id or 0, f"system {system_id}")


def names_for(*, viewer: Viewer, snapshot: Snapshot) -> Names:
    """Team names as ``viewer`` may read them (one query), and systems as "team / system"
    with the system's published name (``system_published_name``)."""
    teams: dict[int, str] = {}
    sees_team: dict[int, bool] = {}
    for team_id, name, alias, is_anonymous in Team.objects.filter(
        shared_task_id=snapshot.shared_task_id
    ).values_list("id", "name", "alias", "is_anonymous"):
        sees_team[team_id] = not is_anonymous or viewer.sees_real_name(team_id)
        teams[team_id] = name if sees_team[team_id] else alias
    system_names = {
        entry["system_id"]: system_published_name(
            system_id=entry["system_id"],
            name=entry["name"],
            sees_team=sees_team.get(entry["team_id"], False),
        )
        for entry in [*snapshot.systems, *snapshot.excluded_systems]
        if "name" in entry
    }
    systems = {
        entry["system_id"]: f"{teams.get(entry['team_id'], entry['team_id'])} / "
        f"{system_names[entry['system_id']]}"
        for entry in [*snapshot.systems, *snapshot.excluded_systems]
        if "name" in entry
    }
    return Names(teams=teams, systems=systems, system_names=system_names)


def snapshot_items(*, snapshot: Snapshot) -> QuerySet[SnapshotItem]:
    return snapshot.items.order_by("position")


@dataclass(frozen=True)
class ItemFilter:
    """Which pairs of an item table to show; None leaves a criterion out.

    ``broken``: the pair broke ``system`` (or, without one, at least one system) or not;
    ``flipped``: the pair changes the gold label (True) or keeps it (False).
    """

    team_id: int | None = None
    system_id: int | None = None
    tag: str | None = None
    broken: bool | None = None
    flipped: bool | None = None
    validation_state: str | None = None  # one of bibi.pairs.validation.STATES


_BROKEN = OUTCOMES.index("broken")


def snapshot_items_filtered(*, snapshot: Snapshot, filters: ItemFilter) -> QuerySet[SnapshotItem]:
    """The snapshot's items that pass ``filters``, in canonical order. A system the snapshot
    did not score matches no item."""
    items = snapshot_items(snapshot=snapshot)
    if filters.team_id is not None:
        items = items.filter(team_id=filters.team_id)
    if filters.flipped is not None:
        items = items.filter(flipped=filters.flipped)
    if filters.validation_state:
        items = items.filter(validation_state=filters.validation_state)
    if filters.tag:
        if connection.features.supports_json_field_contains:
            items = items.filter(tags__contains=[filters.tag])
        else:
            # SQLite has no JSON containment: look for the quoted tag in the list's text
            # (tags are names from the task's own list, never holding a quote).
            items = items.alias(tags_text=Cast("tags", TextField())).filter(
                tags_text__contains=f'"{filters.tag}"'
            )
    if filters.system_id is not None:
        systems = snapshot.tables["item_systems"]
        if filters.system_id not in systems:
            return items.none()
        if filters.broken is not None:
            # Three codes per system: original, variant, outcome (reports.report_items).
            outcome = {f"predictions__{3 * systems.index(filters.system_id) + 2}": _BROKEN}
            items = items.filter(**outcome) if filters.broken else items.exclude(**outcome)
    elif filters.broken is not None:
        items = items.filter(broken__gt=0) if filters.broken else items.filter(broken=0)
    return items


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


@dataclass(frozen=True)
class LambdaEvidence:
    """A snapshot's λmax tables for one system (rows as stored, named by ids)."""

    system_id: int
    quartiles: list[dict[str, Any]]  # kind (all, same_label, flipped) x quartile 1-4
    correlation: list[dict[str, Any]]
    auc: list[dict[str, Any]]
    delta: list[dict[str, Any]]  # one per breaker team


def lambda_systems(*, snapshot: Snapshot) -> list[int]:
    """The systems a snapshot has λmax analyses for, in leaderboard order: those with λmax
    on at least one pair's original. A self-reported system has no model to compute λmax
    with; its quartile rows exist but count no pair, and it is not one of these."""
    having = {
        row["system_id"] for row in snapshot.tables.get("lambda_quartiles", []) if row.get("pairs")
    }
    return [entry["system_id"] for entry in snapshot.systems if entry["system_id"] in having]


def lambda_evidence(*, snapshot: Snapshot, system_id: int) -> LambdaEvidence:
    def rows(table: str) -> list[dict[str, Any]]:
        return [row for row in snapshot.tables.get(table, []) if row["system_id"] == system_id]

    return LambdaEvidence(
        system_id=system_id,
        quartiles=rows("lambda_quartiles"),
        correlation=rows("lambda_correlation"),
        auc=rows("lambda_auc"),
        delta=rows("lambda_delta"),
    )


def publish_warning(*, snapshot: Snapshot) -> str | None:
    """What publishing ``snapshot`` must warn of, None when nothing: entry pairs that were
    still waiting for validators' votes when it was scored. Scored with the label their
    team claimed (the task's ``validation_pending`` 'claimed') or left out ('left_out'),
    either way the leaderboard would not rest on the validated labels it promises. The
    scoring page asks for a confirmation, the API for ``confirm``, ``manage.py score
    --publish`` for ``--force`` (``services.snapshot_publish`` refuses without one)."""
    counts = snapshot.counts or {}
    pending = int(counts.get("pairs_pending") or 0)
    if not pending:
        return None
    by_team = {
        row["team_id"]: int(row.get("pending") or 0)
        for row in snapshot.tables.get("breakers", [])
        if row.get("pending")
    }
    names = dict(Team.objects.filter(id__in=by_team).values_list("id", "name"))
    teams = ", ".join(
        f"{names.get(team_id, f'team {team_id}')} {count}" for team_id, count in by_team.items()
    )
    used = (snapshot.settings_used or {}).get("validation") or {}
    if used.get("pending") == "left_out":
        what, treated = "entry pair", "left out of the scores"
    else:
        what = f"of the {counts.get('pairs', 0)} pairs scored"
        treated = "scored with the labels their teams claimed, which no validator has checked"
    were = "were" if pending != 1 else "was"
    return (
        f"{pending} {what if what.startswith('of') else what + 's' * (pending != 1)} "
        f"{were} still waiting for validators' votes when snapshot {snapshot.id} was scored "
        f"({teams}), and {'are' if pending != 1 else 'is'} {treated}. Publishing it makes "
        "that the leaderboard everyone reads: wait for the votes and score again, or confirm "
        "that you mean it."
    )
