"""The prediction matrix of a span task: items keyed by sentence and question, missing items
sent to the worker as [sentence, question] (see /work/wt/span-contract.md), chunked once."""

from __future__ import annotations

import pytest

from bibi.evaluation import services
from bibi.evaluation.matrix import pair_matrix
from bibi.evaluation.models import CellChunk
from bibi.pairs import services as pair_services
from bibi.systems import services as system_services
from bibi.systems.models import Prediction, SystemVersion
from bibi.tasktypes.items import item_key
from bibi.tasktypes.rules import PairInput

from ..pairs.conftest import start_phase_now
from ..spancast import UCD, build_span_cast

pytestmark = pytest.mark.django_db

KILMACUD = UCD.replace("UCD", "Kilmacud")


@pytest.fixture
def hosted_span_task(db):
    cast = build_span_cast(current_phase="break")
    pair_services.pair_set_submit(
        team=cast.breaker_team,
        user=cast.breaker,
        pairs=[
            PairInput(
                row=1,
                original_id="s1",
                variant_text=KILMACUD,
                variant_label="",
                variant_answers="Kilmacud",
            ),
            PairInput(row=2, original_id="s2", variant_text=KILMACUD, variant_label=""),
        ],
    )
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="qa", kind="hosted"
    )
    version = SystemVersion.objects.create(system=system, number=1, status="ready")
    system.active_version = version
    system.save(update_fields=["active_version"])
    # The starter cell of s1 from validation: found by its key, reused for the pairs.
    Prediction.objects.create(
        system_version=version,
        source="starter",
        text=UCD,
        question="who beat someone?",
        text_sha256=item_key((UCD, "who beat someone?")),
        label="",
        lambda_max=0.5,
        answer_start=0,
        answer_end=3,
        answer_text="UCD",
    )
    start_phase_now(cast.shared_task, "contest")
    return cast, version


def test_span_items_are_keyed_by_sentence_and_question(hosted_span_task):
    cast, version = hosted_span_task
    matrix = pair_matrix(shared_task=cast.shared_task)
    # One variant sentence, two questions: two items; s1's original is known.
    assert len(matrix.texts) == 4
    assert sorted(matrix.missing[version.id]) == sorted(
        [
            [UCD, "what did someone finish?"],
            [KILMACUD, "what did someone finish?"],
            [KILMACUD, "who beat someone?"],
        ]
    )
    cell = matrix.cells[version.id][item_key((UCD, "who beat someone?"))]
    assert (cell.answer_start, cell.answer_end, cell.answer_text) == (0, 3, "UCD")


def test_a_run_sends_span_items_in_chunks_once(hosted_span_task):
    cast, version = hosted_span_task
    run = services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    services.scoring_run_advance(run_id=run.id, send=False)
    services.scoring_run_advance(run_id=run.id, send=False)
    chunks = list(CellChunk.objects.filter(run=run))
    items = [item for chunk in chunks for item in chunk.items]
    assert len(items) == 3 and all(isinstance(item, list) and len(item) == 2 for item in items)
    run.refresh_from_db()
    assert (run.status, run.cells_needed, run.cells_done) == ("waiting_for_cells", 4, 1)
