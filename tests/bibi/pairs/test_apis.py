"""The pair API as a breaker team's script uses it: uploads, JSON lists, answers and errors."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs.models import Pair, PairSet

from .conftest import BAD_PAIR, GOOD_PAIRS, PAIR_FIXTURES, PAIRS_URL, csv_bytes

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def post_file(cast, data: bytes, name: str, **fields):
    return cast.client("breaker").post(
        PAIRS_URL, {"file": SimpleUploadedFile(name, data), **fields}, format="multipart"
    )


def test_a_file_upload_answers_with_the_new_set(cast):
    response = post_file(cast, (PAIR_FIXTURES / "background.csv").read_bytes(), "background.csv")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["pair_count"] == 4
    assert body["status"] == "submitted"
    assert body["is_entry"] is True
    assert body["team"] == {"id": cast.breaker_team.id, "name": "Utrecht"}
    assert body["submitted_by"] == "brian"
    assert (body["filename"], body["file_format"], body["layout"]) == (
        "background.csv",
        "csv",
        "pairs",
    )


def test_a_2017_file_with_a_label_map(cast):
    response = post_file(
        cast,
        (PAIR_FIXTURES / "background_2017.tsv").read_bytes(),
        "background_2017.tsv",
        label_map="1=positive,-1=negative",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["layout"] == "sst2017"


def test_a_rejected_file_lists_every_problem_by_line_and_stores_nothing(cast):
    # The curly apostrophe (0x92 in cp1252) shows the encoding was recognized.
    curly = {**GOOD_PAIRS[0], "variant_text": "I’m crazy about this movie!", "variant_label": "+1"}
    rows = [BAD_PAIR, *GOOD_PAIRS, curly]
    response = post_file(cast, csv_bytes(rows, encoding="cp1252"), "pairs.csv")
    assert response.status_code == 400
    label_problem = (
        "the variant's label '+1' is not one of this task's labels (negative, positive); "
        "give a label map to translate the file's labels, e.g. 1=positive"
    )
    assert response.json() == {
        "detail": "Nothing was stored: 2 problem(s) in pairs.csv.",
        "encoding": "cp1252",
        "format": "csv",
        "error_count": 2,
        "groups": [
            {"reason": "the variant is identical to the original", "count": 1, "lines": "2"},
            {"reason": label_problem, "count": 1, "lines": "7"},
        ],
        "errors": [
            {"line": 2, "reason": "the variant is identical to the original"},
            {"line": 7, "reason": label_problem},
        ],
    }
    assert not PairSet.objects.exists()


def test_an_unreadable_file_is_a_rejection_of_the_whole_file(cast):
    response = post_file(cast, b"whatever", "pairs.xlsx")
    assert response.status_code == 400
    assert response.json()["errors"][0]["line"] == 0
    assert "cannot tell the format of 'pairs.xlsx'" in response.json()["errors"][0]["reason"]


def test_a_bad_label_map_is_refused(cast):
    response = post_file(cast, csv_bytes(GOOD_PAIRS), "p.csv", label_map="1:positive")
    assert response.status_code == 400
    assert response.json() == {
        "label_map": [
            "'1:positive' is not a label mapping: write FILE_LABEL=TASK_LABEL, "
            "e.g. 0=negative,1=positive"
        ]
    }


def test_a_json_list_of_pairs_is_a_set(cast):
    pairs = [{**row, "tags": row["tags"].split(";")} for row in GOOD_PAIRS]
    response = cast.client("breaker").post(PAIRS_URL, {"pairs": pairs}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["source"] == "api"
    assert Pair.objects.count() == 4


def test_a_bare_json_list_is_accepted_too(cast):
    response = cast.client("breaker").post(PAIRS_URL, GOOD_PAIRS[:2], format="json")
    assert response.status_code == 201, response.json()


def test_json_pairs_with_wrong_types_are_reported_by_row(cast):
    pairs = [GOOD_PAIRS[0], {"original_id": "s2", "variant_text": {"a": 1}}, "not a pair"]
    response = cast.client("breaker").post(PAIRS_URL, {"pairs": pairs}, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert {e["line"] for e in errors} == {2, 3}
    assert "variant_text: Not a valid string." in [e["reason"] for e in errors]
    assert not PairSet.objects.exists()


def test_json_rows_are_positions_in_the_list(cast):
    pairs = [GOOD_PAIRS[0], BAD_PAIR]
    response = cast.client("breaker").post(PAIRS_URL, {"pairs": pairs}, format="json")
    assert response.json()["errors"] == [
        {"line": 2, "reason": "the variant is identical to the original"}
    ]


@pytest.mark.parametrize(
    "body",
    [{}, {"pairs": []}, {"pairs": "x"}, {"pairs": [{}], "label_map": "1=positive"}, [None]],
)
def test_malformed_json_is_a_400(cast, body):
    response = cast.client("breaker").post(PAIRS_URL, body, format="json")
    assert response.status_code == 400


def test_the_detail_of_a_set_holds_its_pairs_in_row_order(cast):
    created = post_file(cast, csv_bytes(GOOD_PAIRS), "p.csv").json()
    body = cast.client("breaker").get(f"/api/v1/pair-sets/{created['id']}/").json()
    assert [p["row"] for p in body["pairs"]] == [2, 3, 4, 5]
    first = body["pairs"][0]
    assert first["original_id"] == "s1"
    assert first["original_label"] == "positive"
    assert first["tags"] == ["semantics"]
    assert first["edit_distance"] == 3


def test_marking_an_older_set_final_makes_it_the_entry(cast):
    client = cast.client("breaker")
    first = post_file(cast, csv_bytes(GOOD_PAIRS), "a.csv").json()["id"]
    second = post_file(cast, csv_bytes(GOOD_PAIRS[:1]), "b.csv").json()["id"]
    marked = client.patch(f"/api/v1/pair-sets/{first}/", {"is_final": True}, format="json")
    assert marked.json()["is_final"] is True
    listed = {s["id"]: s["is_entry"] for s in client.get(PAIRS_URL).json()["results"]}
    assert listed == {first: True, second: False}


def test_one_pair_at_a_time_then_submit_the_draft(cast):
    client = cast.client("breaker")
    for row in GOOD_PAIRS[:2]:
        added = client.post("/api/v1/shared-tasks/sst/pairs/", row, format="json")
        assert added.status_code == 201, added.json()
    refused = client.post("/api/v1/shared-tasks/sst/pairs/", BAD_PAIR, format="json")
    assert refused.json()["errors"] == [
        {"line": 3, "reason": "the variant is identical to the original"}
    ]
    draft = client.get(f"{PAIRS_URL}?status=draft").json()["results"][0]
    assert draft["pair_count"] == 2
    submitted = client.post(f"/api/v1/pair-sets/{draft['id']}/submit/")
    assert submitted.status_code == 200
    assert submitted.json()["status"] == "submitted"
    assert submitted.json()["is_entry"] is True


def test_an_upload_after_the_deadline_says_when_it_closed(db):
    from ..conftest import build_cast

    cast = build_cast(current_phase="contest")
    response = post_file(cast, csv_bytes(GOOD_PAIRS), "p.csv")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("The break phase closed at ")
