"""Self-reported builders after the break phase: pair texts out, predictions for them in."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import F

from bibi.pairs import services as pair_services
from bibi.pairs.models import PairSet
from bibi.sharedtasks.models import Phase
from bibi.systems import predictions
from bibi.systems.models import Prediction
from bibi.tasktypes.rules import PairInput

from ..conftest import BLIND_DEV

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

PAIRS = [
    PairInput(
        row=1, original_id="s1", variant_text="I'm mad for this movie!", variant_label="positive"
    ),
    PairInput(
        row=2,
        original_id="s4",
        variant_text='Russell is "terrific" as coach Herb Brooks.',
        variant_label="negative",
    ),
]
TEXTS = sorted(
    {
        "I love this movie!",
        "I'm mad for this movie!",
        "Russell is terrific as coach Herb Brooks.",
        'Russell is "terrific" as coach Herb Brooks.',
    }
)


def next_phase(cast) -> None:
    """Let ten days pass: every phase and every submission moves that far into the past."""
    ten_days = timedelta(days=10)
    Phase.objects.filter(shared_task=cast.shared_task).update(
        starts_at=F("starts_at") - ten_days, ends_at=F("ends_at") - ten_days
    )
    PairSet.objects.filter(shared_task=cast.shared_task).update(
        submitted_at=F("submitted_at") - ten_days
    )


@pytest.fixture
def after_break(self_reported):
    cast, system = self_reported
    dev = "".join(f"{eid}\t{label}\n" for eid, _, label in BLIND_DEV)
    predictions.system_predictions_upload(
        system=system,
        actor=cast.builder,
        data=f"id\tlabel\n{dev}".encode(),
        filename="dev.tsv",
        source="blind_dev",
    )
    next_phase(cast)  # break
    pair_services.pair_set_submit(team=cast.breaker_team, user=cast.breaker, pairs=PAIRS)
    next_phase(cast)  # contest
    return cast, system


def test_builders_download_every_pair_text_without_labels_or_authorship(after_break):
    cast, _ = after_break
    response = cast.client("builder").get("/api/v1/shared-tasks/sst/pair-texts/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/x-ndjson")
    rows = [json.loads(line) for line in response.content.decode().splitlines()]
    assert rows == [{"text": text} for text in TEXTS]
    assert b"Utrecht" not in response.content and b"label" not in response.content


@pytest.mark.parametrize(
    ("role", "status"),
    [("organizer", 200), ("breaker", 403), ("outsider", 403), ("anonymous", 401)],
)
def test_pair_texts_go_to_builders_and_organizers_only(after_break, role, status):
    cast, _ = after_break
    assert cast.client(role).get("/api/v1/shared-tasks/sst/pair-texts/").status_code == status


def test_pair_texts_wait_for_the_break_phase_to_close(self_reported):
    cast, _ = self_reported
    response = cast.client("builder").get("/api/v1/shared-tasks/sst/pair-texts/")
    assert response.status_code == 400
    assert "is possible once the break phase has closed" in response.content.decode()


def upload_pairs(cast, system, lines: list[dict]):
    data = "\n".join(json.dumps(line) for line in lines).encode()
    return cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/predictions/",
        {"file": SimpleUploadedFile("pairs.jsonl", data), "source": "pairs"},
        format="multipart",
    )


def test_predictions_for_every_pair_text_are_stored_on_the_active_version(after_break):
    cast, system = after_break
    response = upload_pairs(cast, system, [{"text": text, "label": "positive"} for text in TEXTS])
    assert response.status_code == 201, response.json()
    stored = Prediction.objects.filter(system_version=system.versions.get(), source="pairs")
    assert sorted(stored.values_list("text", flat=True)) == TEXTS


def test_pair_predictions_with_gaps_are_refused_with_every_problem(after_break):
    cast, system = after_break
    lines = [
        {"text": TEXTS[0], "label": "positive"},
        {"text": TEXTS[0], "label": "negative"},
        {"text": TEXTS[1], "label": "0"},
    ]
    response = upload_pairs(cast, system, lines)
    assert response.status_code == 400
    reasons = [error["reason"] for error in response.json()["errors"]]
    # Problems of the file as a whole (line 0) come first, then the rows in order.
    assert sum("no prediction for text" in reason for reason in reasons) == 2
    assert reasons[2] == f"text {TEXTS[0]!r} is predicted 'negative' here but 'positive' on line 1"
    assert "the label '0' is not one of this task's labels" in reasons[3]
    assert not Prediction.objects.filter(source="pairs").exists()


# --- The 2017 protocol: pair predictions only, in the 2017 files' shape -------------------


@pytest.fixture
def predicting(self_reported):
    """A self-reported system that never predicted the blind dev set, as in 2017; the break
    phase has just closed and the pair-prediction window is open."""
    cast, system = self_reported
    next_phase(cast)  # break
    pair_services.pair_set_submit(team=cast.breaker_team, user=cast.breaker, pairs=PAIRS)
    next_phase(cast)  # contest
    return cast, system


def post_predictions(cast, system, data: bytes, name: str, **fields):
    return cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/predictions/",
        {"file": SimpleUploadedFile(name, data), "source": "pairs", **fields},
        format="multipart",
    )


def test_pair_predictions_give_a_system_without_blind_dev_predictions_its_first_version(
    predicting,
):
    cast, system = predicting
    response = upload_pairs(cast, system, [{"text": text, "label": "positive"} for text in TEXTS])
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["number"], body["status"]) == (1, "ready")
    # No blind-dev predictions, so no dev scores: the weight rule for it is scoring's.
    assert (body["dev_accuracy"], body["dev_macro_f1"], body["dev_count"]) == (None, None, None)
    system.refresh_from_db()
    assert system.active_version.number == 1
    assert system.active_version.predictions.filter(source="pairs").count() == len(TEXTS)


def test_pair_predictions_read_the_2017_sentence_column_through_a_label_map(predicting):
    cast, system = predicting
    gold = {TEXTS[0]: "1", TEXTS[1]: "1", TEXTS[2]: "-1", TEXTS[3]: "+1"}
    rows = "".join(f"p{n}\t{text}\t{label}\n" for n, (text, label) in enumerate(gold.items()))
    data = f"sentence_id\tsentence\tlabel\n{rows}".encode()
    response = post_predictions(cast, system, data, "pairs.tsv", label_map="1=positive,-1=negative")
    assert response.status_code == 201, response.json()
    stored = dict(Prediction.objects.filter(source="pairs").values_list("text", "label"))
    assert stored == {
        TEXTS[0]: "positive",
        TEXTS[1]: "positive",
        TEXTS[2]: "negative",
        TEXTS[3]: "positive",
    }


def test_pair_predictions_without_the_label_map_name_the_labels_they_do_not_know(predicting):
    cast, system = predicting
    data = ("text\tlabel\n" + "".join(f"{text}\tnégatif\n" for text in TEXTS)).encode()
    response = post_predictions(cast, system, data, "pairs.tsv")
    assert response.status_code == 400
    assert response.json()["groups"][0]["count"] == len(TEXTS)
    assert "give a label map" in response.json()["groups"][0]["reason"]


def test_pair_predictions_with_both_text_and_sentence_are_refused(predicting):
    cast, system = predicting
    data = f"text\tsentence\tlabel\n{TEXTS[0]}\t{TEXTS[0]}\tpositive\n".encode()
    response = post_predictions(cast, system, data, "pairs.tsv")
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 2, "reason": "the file has both text and sentence: give the text in one"}
    ]


# --- The pair-prediction window, and labels only after it ---------------------------------


def let_hours_pass(cast, hours: float) -> None:
    delta = timedelta(hours=hours)
    Phase.objects.filter(shared_task=cast.shared_task).update(
        starts_at=F("starts_at") - delta, ends_at=F("ends_at") - delta
    )
    PairSet.objects.filter(shared_task=cast.shared_task).update(
        submitted_at=F("submitted_at") - delta
    )


def after_the_window(cast) -> None:
    let_hours_pass(cast, settings.PAIR_PREDICTIONS_WINDOW_HOURS + 1)


def test_builders_read_no_variant_label_until_the_pair_predictions_are_final(predicting):
    cast, system = predicting
    builder = cast.client("builder")
    url = "/api/v1/shared-tasks/sst/contestable-pairs/"
    withheld = builder.get(url)
    assert withheld.status_code == 400
    assert "once their pair predictions are final, at " in withheld.json()["detail"]
    pair = PairSet.objects.get().pairs.first()
    assert builder.get(f"/api/v1/pairs/{pair.id}/").status_code == 404
    predicted = upload_pairs(cast, system, [{"text": t, "label": "positive"} for t in TEXTS])
    assert predicted.status_code == 201

    after_the_window(cast)
    labels = {row["variant_label"] for row in builder.get(url).json()["results"]}
    assert labels == {"positive", "negative"}
    late = upload_pairs(cast, system, [{"text": t, "label": "negative"} for t in TEXTS])
    assert late.status_code == 400
    assert late.json()["detail"].startswith("Pair predictions were taken until ")
    assert set(Prediction.objects.values_list("label", flat=True)) == {"positive"}


def test_the_window_closes_when_the_results_are_published_if_that_comes_first(predicting):
    cast, system = predicting
    break_end = cast.shared_task.phases.get(kind="break").ends_at
    cast.shared_task.phases.filter(kind="contest").update(ends_at=break_end + timedelta(hours=1))
    cast.shared_task.phases.filter(kind="results").update(starts_at=break_end + timedelta(hours=1))
    let_hours_pass(cast, 2)
    response = upload_pairs(cast, system, [{"text": t, "label": "positive"} for t in TEXTS])
    assert response.status_code == 400
    closed = cast.shared_task.phases.get(kind="results").starts_at
    assert response.json()["detail"] == (
        f"Pair predictions were taken until {closed:%Y-%m-%d %H:%M:%S} UTC (server time): "
        "uploading pair predictions is no longer possible."
    )


def test_a_2017_predictions_tsv_is_read_as_written_like_a_2017_pair_file(self_reported):
    """A sentence that begins with a quote: read with CSV quoting, the quotes would vanish and
    the text would match no pair text; the 2017 layout's one reader keeps them."""
    cast, system = self_reported
    quoted = PairInput(
        row=1,
        original_id="s4",
        variant_text='"Russell" is terrific as coach Herb Brooks.',
        variant_label="positive",
    )
    next_phase(cast)  # break
    pair_services.pair_set_submit(team=cast.breaker_team, user=cast.breaker, pairs=[quoted])
    next_phase(cast)  # contest
    texts = [
        '"Russell" is terrific as coach Herb Brooks.',
        "Russell is terrific as coach Herb Brooks.",
    ]
    rows = "".join(f"p{n}_a\t{text}\t1\n" for n, text in enumerate(texts))
    response = post_predictions(
        cast, system, f"sentence_id\tsentence\tlabel\n{rows}".encode(), "pairs.tsv",
        label_map="1=positive,-1=negative",
    )  # fmt: skip
    assert response.status_code == 201, response.json()
    assert sorted(Prediction.objects.filter(source="pairs").values_list("text", flat=True)) == texts


# --- A 2017 builder's files: one per breaker team, repeating the shared originals ---------

ORIGINALS = ["I love this movie!", "Russell is terrific as coach Herb Brooks."]


def post_files(cast, system, files: dict[str, str], **fields):
    return cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/predictions/",
        {
            "file": [SimpleUploadedFile(name, data.encode()) for name, data in files.items()],
            "source": "pairs",
            **fields,
        },
        format="multipart",
    )


def test_one_file_per_breaker_team_together_predict_the_pair_texts(predicting):
    cast, system = predicting
    originals = "".join(f"+1\t{text}\n" for text in ORIGINALS)
    files = {
        # The 2017 files' names and layout: label<TAB>sentence, no header; each breaker
        # team's file repeats the originals (the same labels), quotes read as written.
        "utrecht.non_neural": f"{originals}-1\tI'm mad for this movie!\n",
        "osu.non_neural": f'{originals}-1\tRussell is "terrific" as coach Herb Brooks.\n',
    }
    response = post_files(cast, system, files, label_map="1=positive,-1=negative")
    assert response.status_code == 201, response.json()
    assert response.json()["repeated_predictions"] == 2
    stored = dict(Prediction.objects.filter(source="pairs").values_list("text", "label"))
    assert stored == {
        "I love this movie!": "positive",
        "Russell is terrific as coach Herb Brooks.": "positive",
        "I'm mad for this movie!": "negative",
        'Russell is "terrific" as coach Herb Brooks.': "negative",
    }
    assert system.versions.count() == 1


def test_files_that_disagree_on_a_shared_original_are_refused_naming_both(predicting):
    cast, system = predicting
    files = {
        "a.tsv": "label\ttext\n" + "".join(f"positive\t{text}\n" for text in TEXTS),
        "b.tsv": f"label\ttext\npositive\t{TEXTS[1]}\nnegative\t{ORIGINALS[0]}\n",
    }
    response = post_files(cast, system, files)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "line": 3,
            "reason": f"in b.tsv, text {ORIGINALS[0]!r} is predicted 'negative' here but "
            "'positive' on line 2 of a.tsv",
        }
    ]
    assert not Prediction.objects.filter(source="pairs").exists()


def test_a_label_alone_cannot_name_a_pair_text(predicting):
    cast, system = predicting
    response = post_predictions(cast, system, b"positive\nnegative\n", "team.opinion")
    assert response.status_code == 400
    assert "a label alone answers the blind dev set only" in json.dumps(response.json())
