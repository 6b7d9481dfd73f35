"""Self-reported builders after the break phase: pair texts out, predictions for them in."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import F

from bibi.pairs import services as pair_services
from bibi.pairs.checks import PairInput
from bibi.pairs.models import PairSet
from bibi.sharedtasks.models import Phase
from bibi.systems import services
from bibi.systems.models import Prediction

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
    services.system_predictions_upload(
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
    assert reasons[2].startswith("text ") and "predicted twice" in reasons[2]
    assert "the label '0' is not one of this task's labels" in reasons[3]
    assert not Prediction.objects.filter(source="pairs").exists()
