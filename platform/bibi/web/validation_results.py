"""Label validation on the results pages: the words for a pair's state, and what the
leaderboards say of validation (how each breaker team's pairs fared, its score beside the
unvalidated one, and the agreement), read from what the snapshot stored
(``bibi.evaluation.validated``; older snapshots have none of it)."""

from __future__ import annotations

from typing import Any

from bibi.evaluation import exports
from bibi.evaluation.models import Snapshot
from bibi.evaluation.selectors import Names

# Pair states of label validation (``bibi.pairs.validation.STATES``, decided by
# ``scoring.agreement.pair_state``) and vote flags, in words.
VALIDATION_WORDS = {
    "not_validated": "not validated",
    "pending": "waiting for votes",
    "validated": "validated",
    "relabelled": "relabelled by the majority",
    "disputed": "disputed",
    "invalid": "invalid",
    "unverified": "label unverified, waiting for votes",
    "adjudicated": "decided by the organizers",
    "excluded": "excluded by the organizers",
    "not_minimal": "not minimal",
    "not_fluent": "not fluent",
    "original_mislabelled": "original mislabelled",
    "unclear": "unclear",
}


def validation_words(key: str) -> str:
    return VALIDATION_WORDS.get(key, key.replace("_", " "))


def leaderboard_validation(snapshot: Snapshot, names: Names) -> dict[str, Any] | None:
    """What the leaderboards show of label validation, None when the snapshot was scored
    without it: the settings, the task's alpha and votes, and one row per breaker team, in
    the leaderboard's order, with its score, its unvalidated score, its pairs validated,
    relabelled, left out, pending and scored on the claimed label unchecked, and the
    agreement on its pairs; and the totals the words above the table need to stay true."""
    used = snapshot.settings_used.get("validation") or {}
    summary = exports.snapshot_summary(snapshot, names)["validation"]
    if summary is None or used.get("mode", "off") == "off":
        return None
    alphas = {team["team_id"]: team["alpha"] for team in summary["teams"]}
    teams = [
        {
            "team": row["team"],
            "score": row["score"],
            "unvalidated_score": row.get("unvalidated_score"),
            "validated": row.get("validated", 0),
            "relabelled": row.get("relabelled", 0),
            "left_out": row.get("left_out", 0),
            "pending": row.get("pending", 0),
            # Older snapshots did not count them: their pending pairs were scored as claimed.
            "claimed_unchecked": row.get("claimed_unchecked", row.get("pending", 0)),
            "alpha": alphas.get(row["team_id"]),
        }
        for row in exports.TABLES["breakers"].as_json(snapshot, names)
    ]
    counts = summary["counts"]
    return {
        "settings": used,
        "alpha": summary["alpha"],
        "votes": summary["votes"],
        "counts": counts,
        "teams": teams,
        # Pairs scored on the label their team claimed, which no validator checked: the
        # words above the table must not say "validated" of them.
        "claimed_unchecked": sum(team["claimed_unchecked"] for team in teams),
        "pending": counts.get("pending", 0),
        "not_validated": counts.get("not_validated", 0),
        "pending_left_out": used.get("pending") == "left_out",
    }
