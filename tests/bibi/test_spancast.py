"""The span cast's older import path (``systems/span_cast``) builds what ``spancast`` builds
over its hosted-QA items, in the shapes tests written against it read."""

from __future__ import annotations

import pytest

from bibi.tasktypes import SPAN_EXTRACTION

from . import spancast
from .systems import span_cast

pytestmark = pytest.mark.django_db


def test_the_older_path_builds_the_span_task_over_the_hosted_qa_items():
    cast = span_cast.build_span_cast()
    assert cast.shared_task.kind is SPAN_EXTRACTION
    assert span_cast.upload_and_validate is spancast.upload_and_validate
    for dataset, rows in (
        (cast.starter, span_cast.SPAN_STARTER),
        (cast.blind_dev, span_cast.SPAN_BLIND_DEV),
    ):
        stored = [
            (e.external_id, e.text, e.question, e.answers)
            for e in dataset.examples.order_by("position")
        ]
        assert stored == rows
