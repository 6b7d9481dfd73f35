"""One dev counting rule for span tasks on every path, and dev figures that follow the answer
rule (issue 33, points 4 and 5).

The blind dev set here asks one question of one sentence under two ids (d3, d4: two
predicates of one verb) with different gold answers, as the 2017 QA-SRL blind dev set does 31
times. Hosted validation, a self-reported upload of the same answers and the chunk recount
must count that cell once, against the union of d3's and d4's gold answers, and agree.
"""

from __future__ import annotations

import pandas as pd
import pytest
from django.test import Client
from django.urls import reverse

from bibi.evaluation import compute
from bibi.evaluation import services as evaluation_services
from bibi.evaluation.chunks import version_dev_scores_update
from bibi.evaluation.matrix import active_versions
from bibi.evaluation.reports import version_weights
from bibi.evaluation.triggers import dev_scores_after_answer_rule
from bibi.sharedtasks import services as task_services
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services
from bibi.systems.models import SystemVersion
from fim_engine.span_model import load_span_system
from scoring.answers import answer_scores

from ..spancast import PLAN, QA_STARTER, RAIN, Row, build_span_cast, upload_and_validate

pytestmark = pytest.mark.django_db

REPEATED = "who approved something ?"
CANDIDATES = ["a long debate", "the town hall", "The committee", "the plan", "Heavy rain"]


def f1(prediction: str, gold: str) -> float:
    frame = answer_scores(
        pd.DataFrame({"system": ["S"], "item": ["q"], "text": [prediction]}),
        pd.DataFrame({"item": ["q"], "text": [gold]}),
    )
    return float(frame["token_f1"].iloc[0])


@pytest.fixture
def repeated_cell_task(qa_dir):
    """The cast over a blind dev set whose d3 and d4 share a cell: the tiny model's answer to
    it is wrong against d3's gold and right against d4's."""
    answer = load_span_system(qa_dir, device="cpu").predict([REPEATED], [PLAN])[0]
    assert answer.text.strip(), "the tiny model gives an empty answer: choose another question"
    wrong = next(text for text in CANDIDATES if text in PLAN and f1(answer.text, text) < 0.5)
    blind_dev: list[Row] = [
        ("d1", RAIN, "what flooded something ?", 2, "flooded", ["Heavy rain"]),
        ("d2", RAIN, "what did something flood ?", 2, "flooded", ["the valley roads"]),
        ("d3", PLAN, REPEATED, 2, "approved", [wrong]),
        ("d4", PLAN, REPEATED, 5, "approved", [answer.text.strip()]),
    ]
    cast = build_span_cast(current_phase="build", starter=QA_STARTER, blind_dev=blind_dev)
    return cast, blind_dev


def by_hand(cast, cells: dict[str, tuple[str, int, int]], blind_dev: list[Row]) -> float:
    """The dev answer accuracy by the rule: one row per distinct (sentence, question), gold the
    union of its examples' answers (token F1 >= 0.5, the default mode)."""
    gold, predictions = [], []
    for eid, sentence, question, *_, answers in blind_dev:
        item = f"{sentence}|{question}"
        gold += [(item, text) for text in answers]
        if item not in {row[1] for row in predictions}:
            predictions.append(("S", item, cells[eid][0]))
    scores = answer_scores(
        pd.DataFrame(predictions, columns=["system", "item", "text"]),
        pd.DataFrame(gold, columns=["item", "text"]),
    )
    assert len(scores) == 3
    return float(scores["correct"].mean())


def test_hosted_self_reported_and_recount_give_one_count_and_figure(repeated_cell_task, qa_dir):
    cast, blind_dev = repeated_cell_task
    hosted = upload_and_validate(cast, qa_dir)
    assert hosted.status == "ready", hosted.failure_detail
    stored = {
        cell.example.external_id: (cell.answer_text, cell.answer_start, cell.answer_end)
        for cell in hosted.predictions.filter(source="blind_dev").select_related("example")
    }
    # One cell per key: d4's answer is d3's (the same sentence and question).
    assert set(stored) == {"d1", "d2", "d3"}
    stored["d4"] = stored["d3"]
    expected = by_hand(cast, stored, blind_dev)

    reported = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="reported", kind="self_reported"
    )
    rows = "id,start,end\n" + "".join(
        f"{eid},{start},{end}\n" for eid, (_, start, end) in sorted(stored.items())
    )
    uploaded = system_predictions.system_predictions_upload(
        system=reported,
        actor=cast.builder,
        data=rows.encode(),
        filename="dev.csv",
        source="blind_dev",
    )
    for version in (hosted, uploaded):
        version.refresh_from_db()
        assert (version.dev_count, version.dev_accuracy) == (3, pytest.approx(expected))
        assert version.dev_answer_mode == "token_f1"
        recounted = version_dev_scores_update(version=version)
        assert (recounted.dev_count, recounted.dev_accuracy) == (3, pytest.approx(expected))
    assert hosted.dev_token_f1 == pytest.approx(uploaded.dev_token_f1)

    # The page says which rule counted the 3 items.
    browser = Client()
    browser.force_login(cast.builder)
    page = browser.get(reverse("web:system", args=["qasrl", hosted.system_id])).content.decode()
    assert "on 3 blind dev items" in page
    assert "data-dev-rule" in page and "right when the answer is right against any" in page
    assert "each distinct sentence and question of the blind dev set once" in page


def test_dev_figures_and_weights_follow_a_change_of_answer_mode(repeated_cell_task, qa_dir):
    cast, blind_dev = repeated_cell_task
    hosted = upload_and_validate(cast, qa_dir)
    hosted.refresh_from_db()
    stored = {
        cell.example.external_id: (cell.answer_text, cell.answer_start, cell.answer_end)
        for cell in hosted.predictions.filter(source="blind_dev").select_related("example")
    }
    # A self-reported system answering the gold spans: right under every mode.
    gold_rows = f"id,answer\nd1,Heavy rain\nd2,the valley roads\nd3,{blind_dev[2][5][0]}\nd4,{blind_dev[2][5][0]}\n"
    reported = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="reported", kind="self_reported"
    )
    system_predictions.system_predictions_upload(
        system=reported,
        actor=cast.builder,
        data=gold_rows.encode(),
        filename="dev.csv",
        source="blind_dev",
    )
    before = hosted.dev_accuracy

    task_services.shared_task_update(
        shared_task=cast.shared_task, actor=cast.organizer, answer_mode="exact"
    )
    hosted.refresh_from_db()
    assert hosted.dev_answer_mode == "exact"
    stored["d4"] = stored["d3"]
    exact = []
    for eid in ("d1", "d2", "d3"):
        sentence, question = blind_dev[int(eid[1]) - 1][1:3]
        golds = [row[5][0] for row in blind_dev if row[1:3] == (sentence, question)]
        frame = answer_scores(
            pd.DataFrame({"system": ["S"], "item": ["q"], "text": [stored[eid][0]]}),
            pd.DataFrame({"item": ["q"] * len(golds), "text": golds}),
            mode="exact",
        )
        exact.append(bool(frame["correct"].iloc[0]))
    assert hosted.dev_accuracy == pytest.approx(sum(exact) / 3)
    assert hosted.dev_count == 3

    # The version API shows the figure, its mode, and the mean token F1.
    api = cast.client("builder").get(
        f"/api/v1/shared-tasks/qasrl/systems/{hosted.system_id}/versions/{hosted.number}/"
    )
    assert api.status_code == 200, api.content
    body = api.json()
    assert body["dev_token_f1"] == pytest.approx(hosted.dev_token_f1)
    assert body["dev_answer_mode"] == "exact"
    assert body["dev_accuracy"] == pytest.approx(hosted.dev_accuracy)

    # A scoring run's weights (reports.version_weights over the active versions, as the
    # snapshot's builders rows give them) are the figures under the new mode.
    versions = {v.system_id: v for v in active_versions(shared_task=cast.shared_task)}
    assert versions[hosted.system_id].dev_answer_mode == "exact"
    weights = version_weights(list(versions.values()), breaks_of=no_breaks_needed)
    weight_of = dict(zip(weights["system"], weights["weight"], strict=True))
    assert weight_of[str(hosted.system_id)] == pytest.approx(hosted.dev_accuracy)
    assert weight_of[str(reported.id)] == pytest.approx(1.0)
    assert before is not None
    # Nothing is stale now: a second count does nothing.
    assert dev_scores_after_answer_rule(shared_task=cast.shared_task) == 0


def test_a_run_counts_again_a_figure_stored_before_figures_recorded_their_rule(
    repeated_cell_task, qa_dir
):
    cast, _ = repeated_cell_task
    hosted = upload_and_validate(cast, qa_dir)
    hosted.refresh_from_db()
    right = (hosted.dev_accuracy, hosted.dev_count)
    # As a figure of an older rule, stored before this one kept its mode.
    SystemVersion.objects.filter(id=hosted.id).update(
        dev_accuracy=0.99, dev_count=4, dev_answer_mode="", dev_answer_threshold=None
    )
    run = evaluation_services.scoring_run_request(
        shared_task=cast.shared_task, trigger="organizer", send=False
    )
    compute.scoring_run_complete(run_id=run.id)  # fails: no pairs, after the recount
    hosted.refresh_from_db()
    assert (hosted.dev_accuracy, hosted.dev_count) == (pytest.approx(right[0]), right[1])
    assert (hosted.dev_answer_mode, hosted.dev_answer_threshold) == ("token_f1", 0.5)


def no_breaks_needed():
    raise AssertionError("every version has a dev figure: no break rule is needed")
