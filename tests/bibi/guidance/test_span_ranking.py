"""The boundary ranking of a span task, read from the span cells of its hosted QA systems."""

from __future__ import annotations

import pytest

from bibi.guidance.ranking import boundary_ranking
from bibi.systems.models import Prediction

from ..spancast import QA_ITEMS, QA_STARTER, build_span_cast, tiny_qa_model, upload_and_validate

pytestmark = pytest.mark.django_db


def test_span_starter_items_are_ranked_by_the_qa_systems_span_lambda_max(qa_dir, tmp_path):
    cast = build_span_cast(current_phase="build", **QA_ITEMS)
    first = upload_and_validate(cast, qa_dir, name="qa")
    second = upload_and_validate(cast, tiny_qa_model(tmp_path / "qa2", seed=11), name="qa2")
    assert first.status == second.status == "ready"

    ranking = boundary_ranking(cast.shared_task)
    assert sorted(o.example.external_id for o in ranking) == sorted(s[0] for s in QA_STARTER)
    assert [o.rank for o in ranking] == [1, 2, 3]
    scores = [o.boundary_score for o in ranking]
    assert scores == sorted(scores, reverse=True)

    cells = {
        (c.system_version_id, c.example_id): c
        for c in Prediction.objects.filter(source="starter", system_version__in=[first, second])
    }
    for original in ranking:
        assert len(original.systems) == 2
        for view in original.systems:
            cell = cells[(view.version_id, original.example.id)]
            # A span system's view is its answer and its span λmax.
            assert view.label == cell.answer_text
            assert view.lambda_max == cell.lambda_max
        answers = [view.label for view in original.systems]
        assert original.disagreements == (0 if len(set(answers)) == 1 else 1)
        # Every word but punctuation, which is no word to edit.
        words = [w for w in original.example.text.split() if any(c.isalnum() for c in w)]
        assert [w.text for w in original.words] == words
        for word in original.words:
            assert original.example.text[word.start : word.end] == word.text
    # The most fragile item of each system by λmax has percentile 1.
    for version in (first, second):
        top = max(
            (c for c in cells.values() if c.system_version_id == version.id),
            key=lambda c: c.lambda_max,
        )
        views = [
            v
            for o in ranking
            for v in o.systems
            if v.version_id == version.id and o.example.id == top.example_id
        ]
        assert views[0].percentile == 1.0
