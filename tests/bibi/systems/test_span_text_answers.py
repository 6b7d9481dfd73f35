"""Span answers given as text are placed by the gold answers' rule (issue 33, points 3 and 6):
whole words, the occurrence nearest the predicate, refused when ambiguous; on every path
(self-reported predictions, pair files and the JSON API)."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.base import ContentFile

from bibi.pairs import services as pair_services
from bibi.pairs.models import Pair
from bibi.sharedtasks.importing import examples_import
from bibi.sharedtasks.models import Example
from bibi.systems import predictions as system_predictions
from bibi.systems import services as system_services
from bibi.systems.errors import PredictionsRejected
from bibi.systems.models import Prediction

from ...conftest import REPO_ROOT
from ..spancast import SAID, UCD, build_span_cast

pytestmark = pytest.mark.django_db

# "you" three times; the predicate "left" is token 7, nearest the third "you" (token 6).
YOU = "you said you would stay , but you left ."
MET = "you met you there ."  # "you" on either side of "met": equally near
THEN_HE = UCD.replace("UCD", "Then he")


def dev_upload(cast, rows: str, name: str = "texts"):
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name=name, kind="self_reported"
    )
    return system_predictions.system_predictions_upload(
        system=system,
        actor=cast.builder,
        data=rows.encode(),
        filename="dev.csv",
        source="blind_dev",
    )


def test_a_text_prediction_is_placed_nearest_the_predicate_not_at_the_first_match(db):
    cast = build_span_cast(
        current_phase="build",
        answer_mode="overlap_2017",
        blind_dev=[("y1", YOU, "who left?", 7, "left", ["you"])],
    )
    version = dev_upload(cast, "id,answer\ny1,you\n")
    prediction = Prediction.objects.get(system_version=version)
    # The gold answer is the third "you"; so is the prediction of its text, and it scores.
    assert (prediction.answer_start, prediction.answer_end) == (YOU.rindex("you"), len(YOU) - 7)
    assert version.dev_accuracy == 1.0


def test_an_ambiguous_text_prediction_is_refused_with_the_way_out(db):
    cast = build_span_cast(
        current_phase="build", blind_dev=[("m1", MET, "who was met?", 1, "met", ["you there"])]
    )
    with pytest.raises(PredictionsRejected) as raised:
        dev_upload(cast, "id,answer\nm1,you\n")
    reasons = [error.reason for error in raised.value.errors]
    assert (
        "the answer 'you' occurs 2 times in the sentence, equally near the predicate: "
        "give 'start' and 'end'"
    ) in reasons
    # Offsets settle it.
    version = dev_upload(cast, "id,start,end\nm1,0,3\n", name="offsets")
    assert Prediction.objects.get(system_version=version).answer_start == 0


def test_a_text_prediction_inside_a_word_gets_no_offsets(db):
    cast = build_span_cast(
        current_phase="build",
        blind_dev=[("y1", YOU, "who left?", 7, "left", ["you"])],
    )
    version = dev_upload(cast, "id,answer\ny1,yo\n")
    prediction = Prediction.objects.get(system_version=version)
    assert (prediction.answer_start, prediction.answer_text) == (None, "yo")


@pytest.fixture
def breaking(db):
    return build_span_cast(current_phase="break")


def test_the_json_api_places_he_as_a_word_not_inside_then(breaking):
    client = breaking.client("breaker")
    answer = client.post(
        "/api/v1/shared-tasks/qasrl/pair-sets/",
        {"pairs": [{"original_id": "s1", "variant_text": THEN_HE, "variant_answers": ["he"]}]},
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    # Offsets 5-7 ("Then he"), not 1-3 (the letters inside "Then").
    assert Pair.objects.get().variant_answers == [{"start": 5, "end": 7, "text": "he"}]


def test_the_json_api_refuses_an_ambiguous_answer(breaking):
    variant = SAID.replace("and he did", "and he left")
    answer = breaking.client("breaker").post(
        "/api/v1/shared-tasks/qasrl/pair-sets/",
        {"pairs": [{"original_id": "s3", "variant_text": variant, "variant_answers": ["he"]}]},
        format="json",
    )
    assert answer.status_code == 400, answer.json()
    assert "'he' occurs 2 times in the sentence: give its offsets" in str(answer.json())
    assert not Pair.objects.exists()


def test_a_pair_file_refuses_an_answer_cut_inside_a_word(breaking):
    variant = UCD.replace("UCD", "Kilmacud")
    data = (
        "original_id,question,variant_text,variant_answers\n"
        f's1,who beat someone?,"{variant}",Kilmac\n'
    ).encode()
    with pytest.raises(pair_services.PairSetRejected) as raised:
        pair_services.pair_set_upload(
            team=breaking.breaker_team,
            user=breaking.breaker,
            file=ContentFile(data, name="pairs.csv"),
        )
    assert "'Kilmac' is not a span of the sentence: it is only part of a word there" in str(
        raised.value.errors[0]
    )


SHARED_DEV = REPO_ROOT.parent / "shared" / "data" / "qasrl" / "wiki1.dev.qa"


@pytest.mark.skipif(not SHARED_DEV.exists(), reason="the shared QA-SRL data is not there")
def test_the_gold_texts_as_predictions_score_as_they_do_by_text_under_the_overlap_rule(db):
    # Issue 33, point 6: a file of the gold answers' texts scored 100% exact but 96.39% under
    # the overlap rule, its texts placed at their first occurrence. Placed as the gold answers
    # are (whole words, nearest the predicate), they score the same under both.
    cast = build_span_cast(current_phase="build", answer_mode="overlap_2017", blind_dev=[])
    examples_import(
        shared_task=cast.shared_task,
        split="blind_dev",
        actor=cast.organizer,
        data=SHARED_DEV.read_bytes(),
        filename=SHARED_DEV.name,
        drop_unmatched=True,
    )
    examples = Example.objects.filter(
        dataset__shared_task=cast.shared_task, dataset__split="blind_dev"
    )
    rows = [["id", "answer"]] + [[e.external_id, e.answers[0]["text"]] for e in examples]
    out = io.StringIO()
    csv.writer(out).writerows(rows)
    version = dev_upload(cast, out.getvalue())
    assert version.dev_accuracy == 1.0
