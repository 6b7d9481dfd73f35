"""The older import path of the span cast (``tests/bibi/spancast.py``), kept for tests written
against it: ``build_span_cast`` here is that module's over ``QA_ITEMS`` in the build phase,
and ``SPAN_STARTER`` / ``SPAN_BLIND_DEV`` are those items as (id, sentence, question, gold
answers with offsets). New tests import ``spancast`` itself."""

from __future__ import annotations

from .. import spancast
from ..conftest import Cast
from ..spancast import PLAN, RAIN, UCD, answers_of, tiny_qa_model, upload_and_validate

__all__ = [
    "PLAN",
    "RAIN",
    "SPAN_BLIND_DEV",
    "SPAN_STARTER",
    "UCD",
    "build_span_cast",
    "tiny_qa_model",
    "upload_and_validate",
]

SPAN_STARTER = [(e, s, q, answers_of(s, a)) for e, s, q, _, _, a in spancast.QA_STARTER]
SPAN_BLIND_DEV = [(e, s, q, answers_of(s, a)) for e, s, q, _, _, a in spancast.QA_BLIND_DEV]


def build_span_cast(*, current_phase: str = "build") -> Cast:
    return spancast.build_span_cast(current_phase=current_phase, **spancast.QA_ITEMS)
