"""The platform's adapters over the library's rules: ranks, weights and dev scores."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import scoring
from bibi.evaluation import services
from bibi.evaluation.matrix import ScoredVersion, pair_matrix
from bibi.evaluation.models import CellFailure
from bibi.evaluation.reports import (
    WEIGHT_FROM_BLIND_DEV,
    ScoringInputs,
    report_tables,
    score_inputs,
    scoring_inputs,
)
from bibi.systems.selectors import dev_scores
from bibi.tasktypes.items import text_digest

from .conftest import OSU_PAIRS, score_now

GOOD, NOT_GOOD, FINE, NOT_FINE, DULL, NOT_DULL = (
    "A good film.",
    "Not a good film.",
    "Fine.",
    "Not fine.",
    "Dull.",
    "Not dull.",
)


def _version(system_id: int, team_id: int) -> ScoredVersion:
    return ScoredVersion(
        system_id=system_id,
        system_name=f"s{system_id}",
        team_id=team_id,
        kind="hosted",
        version_id=system_id,
        version_number=1,
        dev_accuracy=None,
        dev_count=0,
    )


def _markdown_ranks(markdown: str, heading: str) -> dict[str, int]:
    """name → rank from the first table after ``heading`` (rank, then name columns)."""
    table = markdown.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if re.match(r"\| \d+ \|", line)]
    return {line.split("|")[2].strip(): int(line.split("|")[1]) for line in rows}


def test_the_stored_leaderboard_and_the_markdown_report_rank_nan_rows_alike():
    # Team 30's only pair was unseen by every system: its score is NaN. System 2 saw no
    # pair at all: its % broken is NaN. Both rank last, in the stored tables (which the
    # results pages, the API, the CSV and the zip show) as in the Markdown report.
    pairs = pd.DataFrame(
        {
            "pair_id": [1, 2, 3],
            "team": ["10", "20", "30"],
            "original_id": ["o1", "o2", "o3"],
            "original_text": [GOOD, FINE, DULL],
            "original_label": ["1", "1", "-1"],
            "variant_text": [NOT_GOOD, NOT_FINE, NOT_DULL],
            "variant_label": ["-1", "-1", "1"],
        }
    )
    predictions = pd.DataFrame(
        {
            "system": ["1"] * 4 + ["3"] * 4 + ["2"],
            "text": [GOOD, NOT_GOOD, FINE, NOT_FINE] * 2 + [GOOD],
            "label": ["1", "1", "1", "-1", "1", "-1", "1", "-1", "1"],
        }
    )
    unseen = pd.DataFrame({"system": ["1", "2", "2", "2", "3"], "pair_id": [3, 1, 2, 3, 3]})
    weights = pd.DataFrame({"system": ["1", "2", "3"], "weight": [1.0, 1.0, 1.0]})
    report = scoring.score(pairs, predictions, weights=weights, unseen=unseen)
    inputs = ScoringInputs(
        pairs=pairs,
        predictions=predictions,
        weights=weights,
        unseen=unseen,
        weight_sources=dict.fromkeys(["1", "2", "3"], WEIGHT_FROM_BLIND_DEV),
        unseen_reasons={},
    )

    tables = report_tables(report, inputs, [_version(1, 5), _version(2, 5), _version(3, 6)])
    markdown = report.to_markdown()

    stored_builders = {str(row["system_id"]): row["rank"] for row in tables["builders"]}
    stored_breakers = {str(row["team_id"]): row["rank"] for row in tables["breakers"]}
    assert stored_builders == {"3": 1, "1": 2, "2": 3}
    assert stored_breakers == {"10": 1, "20": 2, "30": 3}
    assert _markdown_ranks(markdown, "Builders") == stored_builders
    assert _markdown_ranks(markdown, "Breakers") == stored_breakers


@pytest.mark.parametrize(
    ("labels", "gold", "predicted", "accuracy", "macro_f1"),
    [
        # positive: P 2/3, R 1, F1 0.8; negative: no hit, F1 0.
        (
            ["negative", "positive"],
            ["positive", "negative", "positive"],
            ["positive"] * 3,
            2 / 3,
            0.4,
        ),
        # "0" is outside the set, a miss for its gold "-1"; 1: P 1 R 1/2 F1 2/3; -1: F1 1/2.
        (["-1", "1"], ["1", "-1", "1", "-1"], ["1", "-1", "-1", "0"], 0.5, (2 / 3 + 0.5) / 2),
        # a: P 1 R 1/2 F1 2/3; b: no hit; c: P 1/2 R 1/2 F1 1/2.
        (
            ["a", "b", "c"],
            ["a", "b", "c", "c", "a"],
            ["a", "c", "c", "b", "x"],
            0.4,
            (2 / 3 + 0.5) / 3,
        ),
        # b occurs neither as gold nor as prediction: it is left out of the mean.
        (["a", "b"], ["a", "a"], ["a", "a"], 1.0, 1.0),
    ],
)
def test_a_versions_dev_scores_are_scorings_label_scores(
    labels, gold, predicted, accuracy, macro_f1
):
    """The platform stores what ``scoring.label_scores`` computes, checked by hand here."""
    stored = dev_scores(labels, gold, predicted)

    scores = scoring.label_scores(labels, gold, predicted)

    assert stored == (scores.accuracy, scores.macro_f1)
    assert stored == pytest.approx((accuracy, macro_f1))


@pytest.mark.django_db
def test_the_leaderboard_api_page_and_markdown_report_rank_a_team_no_system_saw_alike(
    scored_task,
):
    # Every hosted model failed on every OSU variant: no system saw an OSU pair, so OSU's
    # score is NaN (the self-reported system reported no pair predictions: left out).
    osu_variants = [pair["variant_text"] for pair in OSU_PAIRS]
    CellFailure.objects.bulk_create(
        CellFailure(
            system_version=version,
            source="pairs",
            text=text,
            text_sha256=text_digest(text),
            reason="planted",
        )
        for version in scored_task.hosted_versions
        for text in osu_variants
    )
    run = score_now(scored_task)
    assert run.status == "done", run.failure_reason
    services.snapshot_publish(snapshot=run.snapshot, actor=scored_task.cast.organizer)
    shared_task = scored_task.shared_task
    report = score_inputs(
        scoring_inputs(pair_matrix(shared_task=shared_task)),
        weight_mode=shared_task.weight_mode,
        break_rate_mode=shared_task.break_rate_mode,
        labels=list(shared_task.labels),
    )

    api = scored_task.cast.client("anonymous").get("/api/v1/shared-tasks/sst/leaderboard/breakers/")

    ranks = {str(row["team_id"]): row["rank"] for row in api.json()["rows"]}
    assert ranks[str(scored_task.osu.id)] == 2
    assert report.breakers.set_index("team")["score"].isna()[str(scored_task.osu.id)]
    assert _markdown_ranks(report.to_markdown(), "Breakers") == ranks
    # The results page shows the same ranks: rank, then the team, in the breakers table.
    page = scored_task.cast.client("anonymous").get("/tasks/sst/results/")
    breakers = page.content.decode().split('id="breakers-caption"', 1)[1].split("</table>", 1)[0]
    shown = dict(re.findall(r'<td class="num">(\d+)</td>\s*<td>([^<]+)</td>', breakers))
    names = {str(row["team_id"]): row["team"] for row in api.json()["rows"]}
    assert {rank: name.strip() for rank, name in shown.items()} == {
        str(rank): names[team] for team, rank in ranks.items()
    }
