"""Presets: each sets exactly its values through ``shared_task_update``, audited, refused
like any change."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from bibi.sharedtasks import services
from bibi.sharedtasks.models import AuditLogEntry, SharedTask

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

EDITABLE = set(services.SHARED_TASK_EDITABLE_FIELDS)


def settings_of(task: SharedTask) -> dict:
    task = SharedTask.objects.get(pk=task.pk)
    return {field: getattr(task, field) for field in EDITABLE}


@pytest.mark.parametrize("key", sorted(services.PRESETS))
def test_a_preset_sets_exactly_its_values_and_nothing_else(cast, key):
    preset = services.PRESETS[key]
    assert set(preset.values) <= EDITABLE
    before = settings_of(cast.shared_task)
    services.shared_task_preset_apply(shared_task=cast.shared_task, actor=cast.organizer, key=key)
    after = settings_of(cast.shared_task)
    assert after == {**before, **preset.values}
    entry = AuditLogEntry.objects.filter(action="shared_task.update").get()
    assert entry.actor == cast.organizer
    assert entry.details.pop("via") == f"preset:{key}"
    assert entry.details == {
        field: {"from": before[field], "to": value}
        for field, value in preset.values.items()
        if before[field] != value
    }


def test_the_2017_replay_scores_per_sentence_with_original_f1_and_needs_no_rationale(cast):
    values = services.PRESETS["2017-sentiment-replay"].values
    assert values["weight_mode"] == "original_f1"
    assert values["break_rate_mode"] == "sentences"
    assert values["pair_require_rationale"] is False
    strict = services.PRESETS["strict-minimal-pairs"].values
    assert strict["pair_require_rationale"] is True
    assert (
        strict["pair_max_edit_distance"]
        < SharedTask._meta.get_field("pair_max_edit_distance").get_default()
    )


def test_preset_changes_lists_only_what_differs(cast):
    preset = services.PRESETS["2017-sentiment-replay"]
    changes = services.preset_changes(shared_task=cast.shared_task, preset=preset)
    assert changes["weight_mode"] == {"from": "dev_accuracy", "to": "original_f1"}
    assert "pair_require_rationale" not in changes  # off already
    services.shared_task_preset_apply(
        shared_task=cast.shared_task, actor=cast.organizer, key=preset.key
    )
    task = SharedTask.objects.get(pk=cast.shared_task.pk)
    assert services.preset_changes(shared_task=task, preset=preset) == {}


def test_an_unknown_preset_or_a_non_organizer_is_refused_and_nothing_changes(cast):
    before = settings_of(cast.shared_task)
    with pytest.raises(
        ValidationError, match="no preset 'nope': choose one of 2017-qasrl-replay, 2017-sentiment"
    ):
        services.shared_task_preset_apply(
            shared_task=cast.shared_task, actor=cast.organizer, key="nope"
        )
    with pytest.raises(PermissionDenied):
        services.shared_task_preset_apply(
            shared_task=cast.shared_task, actor=cast.breaker, key="strict-minimal-pairs"
        )
    assert settings_of(cast.shared_task) == before
    assert not AuditLogEntry.objects.filter(action="shared_task.update").exists()
