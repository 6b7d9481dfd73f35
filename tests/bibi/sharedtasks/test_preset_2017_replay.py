"""The "2017 sentiment replay" preset on a task shaped like the 2017 one, built through the
services from this project's fixtures: two builder teams (hosted and self-reported
systems), two breaker teams whose pairs share originals. Scored by the platform with the
preset, the leaderboards are the ones the ``scoring`` library computes directly from the
same inputs with ``weight="original_f1"`` and ``break_rate="sentences"``."""

from __future__ import annotations

import pytest

from bibi.sharedtasks import services
from bibi.sharedtasks.models import SharedTask
from bibi.tasktypes.rules import PairRules, minimal_edit_problems

from ..evaluation.conftest import (
    assert_leaderboards_match,
    build_scored_task,
    direct_report,
    score_now,
    upload_self_reported_pairs,
)

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

PRESET = services.PRESETS["2017-sentiment-replay"]


def test_the_replayed_task_scores_as_the_scoring_library_does_with_the_2017_modes(db):
    task = build_scored_task()
    upload_self_reported_pairs(task)
    services.shared_task_preset_apply(
        shared_task=task.shared_task, actor=task.cast.organizer, key=PRESET.key
    )
    shared_task = SharedTask.objects.get(pk=task.shared_task.pk)
    assert (shared_task.weight_mode, shared_task.break_rate_mode) == ("original_f1", "sentences")

    snapshot = score_now(task).snapshot

    assert snapshot.settings_used["weight_mode"] == "original_f1"
    assert snapshot.settings_used["break_rate_mode"] == "sentences"
    expected = direct_report(task)  # scoring.score with the task's modes, read afresh
    assert_leaderboards_match(snapshot.tables, expected)
    # Per sentence: every system's rate is half its per-pair rate (breaks / 2 x pairs).
    for row in expected.builders.to_dict("records"):
        assert row["broken_pct"] == pytest.approx(100 * row["breaks"] / (2 * row["pairs"]))


def rules(values: dict) -> PairRules:
    fields = {
        "min_shared_token_ratio": values.get("pair_min_shared_token_ratio", 0.5),
        "max_edit_distance": values.get("pair_max_edit_distance", 4),
        "max_edit_ratio": values.get("pair_max_edit_ratio", 0.35),
    }
    return PairRules(labels=("negative", "positive"), strategy_tags=("other",), **fields)


def test_a_tokenised_lowercased_2017_variant_is_refused_by_default_and_kept_by_the_preset():
    """Team 4's style in 2017: the variant lowercased and tokenised, one phrase changed."""
    original = "Kate Winslet and Leonardo DiCaprio make Titanic's Jack and Rose unforgettable."
    variant = "kate winslet and leonardo dicaprio make titanic 's jack and rose forgettable ."
    _, default_problems = minimal_edit_problems(original, variant, rules=rules({}))
    assert default_problems  # every capital counts as an edit by default
    _, replay_problems = minimal_edit_problems(original, variant, rules=rules(PRESET.values))
    assert replay_problems == []
    identical = minimal_edit_problems(original, original, rules=rules(PRESET.values))[1]
    assert identical == ["the variant is identical to the original"]
