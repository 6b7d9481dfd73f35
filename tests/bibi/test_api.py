"""The envelope every refused upload answers with, whichever app read the file."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.api import error_groups
from bibi.files import RowError, RowErrors
from bibi.sharedtasks.models import Example

pytestmark = pytest.mark.embedded


def test_identical_messages_are_grouped_with_their_line_ranges_most_frequent_first():
    errors = [RowError(line, "not in the starter set") for line in [*range(2, 247), 300, 302]]
    errors += [RowError(5, "the label is missing"), RowError(0, "the file has no pairs")]
    assert [(g["reason"], g["count"], g["lines"]) for g in error_groups(errors)] == [
        ("not in the starter set", 247, "2–246, 300, 302"),
        ("the label is missing", 1, "5"),
        # The file as a whole has no line to name ("Lines = 0" told nothing).
        ("the file has no pairs", 1, ""),
    ]


def test_errors_of_one_kind_are_one_group_with_its_summary_and_a_few_examples():
    errors = RowErrors()
    for line in range(2, 12):
        errors.add(line, f"id 'x{line}' is predicted twice", kind="duplicate")
    for n in range(342):
        errors.add(0, f"no prediction for id 'd{n}'", kind="missing_prediction")
    errors.add(3, "the edit is too far", kind="edit_distance", setting="pair_max_edit_distance")
    errors.summarize("missing_prediction", "342 of 540 texts have no prediction")
    groups = error_groups(errors)
    assert [(g["reason"], g["count"], g["lines"], g["kind"]) for g in groups] == [
        ("342 of 540 texts have no prediction", 342, "", "missing_prediction"),
        ("id 'x2' is predicted twice", 10, "2–11", "duplicate"),
        ("the edit is too far", 1, "3", "edit_distance"),
    ]
    assert groups[1]["examples"] == [
        "id 'x2' is predicted twice",
        "id 'x3' is predicted twice",
        "id 'x4' is predicted twice",
    ]
    assert groups[2]["setting"] == "pair_max_edit_distance"


def test_a_group_names_at_most_fifty_ranges():
    errors = [RowError(line, "bad") for line in range(2, 400, 2)]
    lines = error_groups(errors)[0]["lines"]
    assert lines.startswith("2, 4, 6") and lines.endswith("and 149 more")


def test_a_huge_refused_import_lists_the_first_200_rows_and_counts_them_all(cast):
    rows = "".join(f"x{i},,positive\n" for i in range(5000))
    upload = SimpleUploadedFile("train.csv", f"id,text,label\n{rows}".encode())
    response = cast.client("organizer").post(
        "/api/v1/shared-tasks/sst/datasets/train/import/", {"file": upload}, format="multipart"
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error_count"] == 5000
    assert len(body["errors"]) == 200
    assert body["errors"][0] == {"line": 2, "reason": "the text is empty"}
    assert [(g["reason"], g["count"], g["lines"]) for g in body["groups"]] == [
        ("the text is empty", 5000, "2–5001")
    ]
    assert body["format"] == "csv"
    assert not Example.objects.filter(dataset__split="train", external_id="x0").exists()


def test_page_size_is_honoured_up_to_the_documented_maximum(cast, settings):
    settings.API_MAX_PAGE_SIZE = 3
    client = cast.client("organizer")
    url = "/api/v1/shared-tasks/sst/datasets/starter/examples/"
    assert len(client.get(url, {"page_size": 2}).json()["results"]) == 2
    assert len(client.get(url, {"page_size": 1000}).json()["results"]) == 3


def test_a_predictions_file_of_thirty_thousand_different_mistakes_answers_a_bounded_envelope(db):
    from bibi.systems import services as system_services

    from .conftest import build_cast

    cast = build_cast(current_phase="build")
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="by hand", kind="self_reported"
    )
    rows = "".join(f"x{i},positive\n" for i in range(30_000))
    response = cast.client("builder").post(
        f"/api/v1/shared-tasks/sst/systems/{system.id}/predictions/",
        {
            "file": SimpleUploadedFile("dev.csv", f"id,label\n{rows}".encode()),
            "source": "blind_dev",
        },
        format="multipart",
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error_count"] == 30_003  # every row, and the three examples not predicted
    assert len(body["errors"]) == 200
    assert body["errors"][0]["line"] == 0
    # One group per kind, however many different ids the messages name.
    assert [(g["reason"], g["count"], g["lines"]) for g in body["groups"]] == [
        ("an id that is not one of the texts to predict", 30_000, "2–20001 and other lines"),
        ("3 of 3 texts have no prediction", 3, ""),
    ]
