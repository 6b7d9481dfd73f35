"""A snapshot is written once: what was scored, and how, never changes under a leaderboard.
Publishing is the one change, and the admin shows snapshots read-only."""

from __future__ import annotations

import pytest

from bibi.evaluation import services
from bibi.evaluation.models import ImmutableSnapshot, Snapshot

from .conftest import score_now


def test_a_snapshots_scores_cannot_be_saved_over(scored_task):
    snapshot = score_now(scored_task).snapshot
    tables = snapshot.tables
    snapshot.tables = {"builders": []}
    with pytest.raises(ImmutableSnapshot, match="only its publication can change"):
        snapshot.save()
    with pytest.raises(ImmutableSnapshot):
        snapshot.save(update_fields=["tables", "published_at"])
    assert Snapshot.objects.get(id=snapshot.id).tables == tables


def test_its_items_cannot_be_saved_over(scored_task):
    item = score_now(scored_task).snapshot.items.first()
    item.variant_label = "positive" if item.variant_label == "negative" else "negative"
    with pytest.raises(ImmutableSnapshot):
        item.save()


def test_publishing_is_the_one_change(scored_task):
    snapshot = score_now(scored_task).snapshot
    services.snapshot_publish(snapshot=snapshot, actor=scored_task.cast.organizer)
    snapshot.refresh_from_db()
    assert snapshot.published_at is not None
    assert snapshot.published_by == scored_task.cast.organizer
