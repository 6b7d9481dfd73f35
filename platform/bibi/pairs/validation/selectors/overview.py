"""Label validation, what organizers and the results read: every pair's validation, how
much validators agree, and the summary (Krippendorff's alpha per task and per team, each
validator's agreement with the majority, counts by team). The rules are
``scoring.agreement``'s; the votes and states are read by ``states``.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db.models import Count

from bibi.pairs.entries import entry_pairs
from bibi.pairs.models import LabelValidation
from bibi.pairs.validation.selectors.states import (
    COUNT_KEYS,
    PairValidation,
    count_by_team,
    pair_validations,
    validation_settings,
    votes_by_pair,
)
from bibi.sharedtasks.models import SharedTask
from scoring import agreement


def validator_agreement_list(*, shared_task: SharedTask) -> list[dict[str, Any]]:
    """Per validator: submitted votes, how many fell on pairs with a majority label
    (``compared``), how many gave it (``agreed``), ``agreement`` = agreed / compared
    (None when nothing compares) and the pairs they handed back (``skipped``, of at most
    ``VALIDATION_SKIPS_MAX``), most careless first. Organizers read it."""
    votes = votes_by_pair(None, shared_task=shared_task)
    majority = {
        pair_id: agreement.majority_label(pair_votes) for pair_id, pair_votes in votes.items()
    }
    rows: dict[int, dict[str, Any]] = {}
    for user_id, username, role, pair_id, label in (
        LabelValidation.objects.filter(
            pair__pair_set__shared_task=shared_task, status=LabelValidation.Status.DONE
        )
        .order_by("validator_id", "id")
        .values_list("validator_id", "validator__username", "role", "pair_id", "label")
    ):
        row = rows.setdefault(
            user_id,
            {
                "user_id": user_id,
                "username": username,
                "role": role,
                "validations": 0,
                "compared": 0,
                "agreed": 0,
            },
        )
        row["validations"] += 1
        if majority.get(pair_id) and label:
            row["compared"] += 1
            row["agreed"] += label == majority[pair_id]
    skipped = (
        LabelValidation.objects.filter(
            pair__pair_set__shared_task=shared_task, status=LabelValidation.Status.SKIPPED
        )
        .values("validator_id", "validator__username", "role")
        .annotate(skips=Count("id"))
    )
    for each in skipped:
        row = rows.setdefault(
            each["validator_id"],
            {
                "user_id": each["validator_id"],
                "username": each["validator__username"],
                "role": each["role"],
                "validations": 0,
                "compared": 0,
                "agreed": 0,
            },
        )
        row["skipped"] = each["skips"]
    for row in rows.values():
        row.setdefault("skipped", 0)
        row["agreement"] = row["agreed"] / row["compared"] if row["compared"] else None
    return sorted(
        rows.values(),
        key=lambda row: (row["agreement"] is None, row["agreement"] or 0.0, row["username"]),
    )


def agreement_alpha(
    *, shared_task: SharedTask, states: dict[int, PairValidation] | None = None
) -> dict[str, Any]:
    """Krippendorff's alpha (nominal) over the submitted votes: ``{"task": alpha, "teams":
    {team_id: alpha}, "votes": n, "pairs": pairs with a vote}``; an alpha is None where it is
    undefined (``scoring.agreement.krippendorff_alpha``)."""
    states = states if states is not None else pair_validations(shared_task=shared_task)
    labels = list(shared_task.labels)
    units: dict[int, list[list[str]]] = defaultdict(list)
    voted = [state for state in states.values() if state.votes]
    for state in voted:
        units[state.team_id].append([vote.label for vote in state.votes if vote.label])
    every = [unit for team_units in units.values() for unit in team_units]
    return {
        "task": agreement.krippendorff_alpha(every, labels),
        "teams": {
            team_id: agreement.krippendorff_alpha(team_units, labels)
            for team_id, team_units in sorted(units.items())
        },
        "votes": sum(len(state.votes) for state in voted),
        "pairs": len(voted),
    }


def validation_summary(
    *, shared_task: SharedTask, states: dict[int, PairValidation] | None = None
) -> dict[str, Any]:
    """What organizers and the results show, JSON-ready: ``settings``
    (``validation_settings``), ``counts`` (``COUNT_KEYS`` over every entry pair), ``alpha``
    (the task's Krippendorff alpha, None where undefined), ``votes``, and ``teams``: one dict
    per team with ``team_id``, its counts and its ``alpha``."""
    states = states if states is not None else pair_validations(shared_task=shared_task)
    counts = count_by_team(states)
    total = dict.fromkeys(COUNT_KEYS, 0)
    for team in counts.values():
        for key, value in team.items():
            total[key] += value
    alpha = agreement_alpha(shared_task=shared_task, states=states)
    return {
        "settings": validation_settings(shared_task),
        "counts": total,
        "alpha": alpha["task"],
        "votes": alpha["votes"],
        "teams": [
            {"team_id": team_id, **team_counts, "alpha": alpha["teams"].get(team_id)}
            for team_id, team_counts in sorted(counts.items())
        ],
    }


def validation_pair_rows(*, shared_task: SharedTask) -> list[dict[str, Any]]:
    """Organizers: every entry pair's validation (``PairValidation.as_row``) with its texts
    (``original_text``, ``variant_text``, and the second ones of items with two,
    ``original_text_b``, ``variant_text_b``), by team then row."""
    states = pair_validations(shared_task=shared_task)
    fields = ("original_text", "variant_text", "original_text_b", "variant_text_b")
    texts = {row["id"]: row for row in entry_pairs(shared_task=shared_task).values("id", *fields)}
    return [
        {**state.as_row(), **{field: texts[pair_id][field] for field in fields}}
        for pair_id, state in states.items()
    ]


VOTE_COLUMNS = (
    "validation_id",
    "pair_id",
    "pair_team",
    "validator",
    "validator_role",
    "validator_team",
    "label",
    "unclear",
    "not_minimal",
    "not_fluent",
    "original_mislabelled",
    "note",
    "assigned_at",
    "submitted_at",
)


def validation_vote_rows(*, shared_task: SharedTask) -> list[dict[str, Any]]:
    """Organizers: every submitted vote of the task (``VOTE_COLUMNS``), by pair then vote:
    the pair and its team, the validator, their role and team (empty for invited validators
    and organizers), the answer and its flags, and when it was handed out and answered."""
    rows = []
    for vote in (
        LabelValidation.objects.filter(
            pair__pair_set__shared_task=shared_task, status=LabelValidation.Status.DONE
        )
        .select_related("validator", "team", "pair__pair_set__team")
        .order_by("pair_id", "submitted_at", "id")
    ):
        rows.append(
            {
                "validation_id": vote.id,
                "pair_id": vote.pair_id,
                "pair_team": vote.pair.pair_set.team.name,
                "validator": vote.validator.get_username(),
                "validator_role": vote.role,
                "validator_team": vote.team.name if vote.team else "",
                "label": vote.label,
                "unclear": vote.unclear,
                "not_minimal": vote.not_minimal,
                "not_fluent": vote.not_fluent,
                "original_mislabelled": vote.original_mislabelled,
                "note": vote.note,
                "assigned_at": vote.assigned_at.isoformat(),
                "submitted_at": vote.submitted_at.isoformat() if vote.submitted_at else "",
            }
        )
    return rows
