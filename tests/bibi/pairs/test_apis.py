"""The pair API as a breaker team's script uses it: uploads, JSON lists, answers and errors."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs import selectors
from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks.models import Example

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
        "give a label map to translate the file's labels, e.g. 0=negative,1=positive"
    )
    assert response.json() == {
        "detail": "Nothing was stored: 2 problem(s) in pairs.csv.",
        "encoding": "cp1252",
        "format": "csv",
        "error_count": 2,
        "groups": [
            {
                "reason": "the variant does not change the original's words",
                "count": 1,
                "lines": "2",
                "kind": "unchanged",
                "setting": "",
                "examples": ["the variant is identical to the original"],
            },
            {
                "reason": "a label is not one of this task's labels (a label map can "
                "translate the file's)",
                "count": 1,
                "lines": "7",
                "kind": "label",
                "setting": "labels",
                "examples": [label_problem],
            },
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


# --- What a submission does to the team's entry, said in the answer ----------------------


def add_to_draft(cast, rows: list[dict]) -> int:
    client = cast.client("breaker")
    for row in rows:
        added = client.post("/api/v1/shared-tasks/sst/pairs/", row, format="json")
        assert added.status_code == 201, added.json()
    return client.get(f"{PAIRS_URL}?status=draft").json()["results"][0]["id"]


DRAFT_PAIRS = [
    {"original_id": "s1", "variant_text": "I adore this movie!", "variant_label": "positive"},
    {"original_id": "s2", "variant_text": "[Bettis] has a smoldering, humorless intensity that's grating.", "variant_label": "negative"},
    {"original_id": "s4", "variant_text": "Russell is dull as coach Herb Brooks.", "variant_label": "negative"},
]  # fmt: skip


def test_a_draft_submitted_over_a_larger_entry_says_which_entry_it_replaced(cast):
    entry = post_file(cast, csv_bytes(GOOD_PAIRS), "four.csv").json()
    draft = add_to_draft(cast, DRAFT_PAIRS)
    body = cast.client("breaker").post(f"/api/v1/pair-sets/{draft}/submit/").json()
    assert body["is_entry"] is True
    assert body["replaced_entry"] == {"id": entry["id"], "pair_count": 4}
    assert body["final_entry"] is None
    [warning] = body["warnings"]
    assert warning["line"] == 0
    assert warning["reason"].startswith(
        f"This set (3 pairs) replaces set {entry['id']} (4 pairs, submitted "
    )
    assert "mark it final" in warning["reason"]


def test_a_set_marked_final_stays_the_entry_and_the_answer_says_so(cast):
    client = cast.client("breaker")
    final = post_file(cast, csv_bytes(GOOD_PAIRS), "four.csv").json()["id"]
    client.patch(f"/api/v1/pair-sets/{final}/", {"is_final": True}, format="json")
    later = post_file(cast, csv_bytes(GOOD_PAIRS[:1]), "one.csv").json()
    draft = add_to_draft(cast, DRAFT_PAIRS)
    from_draft = client.post(f"/api/v1/pair-sets/{draft}/submit/").json()
    for body in (later, from_draft):
        assert body["is_entry"] is False
        assert body["replaced_entry"] is None
        assert body["final_entry"] == {"id": final, "pair_count": 4}
        assert body["warnings"][0]["reason"].startswith(f"The entry stays set {final} (4 pairs")
    assert selectors.pair_set_entry(team=cast.breaker_team).id == final


def test_the_first_set_of_a_team_replaces_nothing_and_warns_of_nothing(cast):
    body = post_file(cast, csv_bytes(GOOD_PAIRS), "p.csv").json()
    assert (body["is_entry"], body["replaced_entry"], body["warnings"]) == (True, None, [])
    assert body["dry_run"] is False


# --- Edits that systems may not see --------------------------------------------------------

# 87 tokens, the last edit at 86: past what a system reading 128 sub-word tokens surely sees (84, see checks).
LONG_REVIEW = (
    "For the first hour the film wanders through a small town , its diner , its church , "
    "its school , its library , its hardware store , its dusty main street and the long , "
    "flat fields around it , following "
    "a retired teacher , her restless grandson , a widowed mechanic and the mechanic 's "
    "silent dog through one slow summer , and every scene is patient , warm and carefully "
    "framed , until the last ten minutes , when it finally becomes wonderful ."
)


def test_a_pair_whose_edit_lies_past_the_token_limit_is_accepted_with_a_warning(cast):
    Example.objects.create(
        dataset=cast.starter, external_id="long", text=LONG_REVIEW, label="positive", position=9
    )
    late = LONG_REVIEW.replace("becomes wonderful", "becomes tedious")
    early = LONG_REVIEW.replace("For the first hour", "For the whole hour")
    rows = [
        {"original_id": "long", "variant_text": early, "variant_label": "positive"},
        {"original_id": "long", "variant_text": late, "variant_label": "negative"},
    ]
    response = post_file(cast, csv_bytes(rows), "long.csv")
    assert response.status_code == 201, response.json()
    [warning] = response.json()["warnings"]
    assert warning["line"] == 3
    assert warning["reason"].startswith("the edit begins at token 86, past the first 84 tokens")
    assert "SYSTEM_MAX_SEQUENCE_LENGTH" in warning["reason"]

    # A pair added to a draft gets the same warning at once.
    added = cast.client("breaker").post(
        "/api/v1/shared-tasks/sst/pairs/",
        {"original_id": "long", "variant_text": late.replace("tedious", "dull"), "variant_label": "negative"},
        format="json",
    )  # fmt: skip
    assert added.status_code == 201
    assert added.json()["warnings"][0]["reason"].startswith("the edit begins at token 86")


# --- Dry runs -----------------------------------------------------------------------------


def test_a_dry_run_answers_like_a_submission_and_stores_nothing(cast):
    entry = post_file(cast, csv_bytes(GOOD_PAIRS), "four.csv").json()
    checked = post_file(cast, csv_bytes(GOOD_PAIRS[:2]), "two.csv", dry_run="true")
    assert checked.status_code == 200, checked.json()
    body = checked.json()
    assert body["dry_run"] is True
    assert body["id"] is None
    assert (body["pair_count"], body["layout"], body["file_format"]) == (2, "pairs", "csv")
    assert body["is_entry"] is True
    assert body["replaced_entry"] == {"id": entry["id"], "pair_count": 4}
    assert body["warnings"][0]["reason"].startswith("This set (2 pairs) would replace set")
    assert PairSet.objects.count() == 1
    assert Pair.objects.count() == 4


def test_a_dry_run_of_a_failing_set_answers_with_the_same_refusal(cast):
    rows = [*GOOD_PAIRS, BAD_PAIR]
    real = post_file(cast, csv_bytes(rows), "p.csv").json()
    dry = post_file(cast, csv_bytes(rows), "p.csv", dry_run="true").json()
    assert dry == real
    json_dry = cast.client("breaker").post(f"{PAIRS_URL}?dry_run=true", rows, format="json")
    assert json_dry.status_code == 400
    assert json_dry.json()["errors"] == [
        {"line": 5, "reason": "the variant is identical to the original"}
    ]


def test_dry_runs_do_not_count_against_the_set_quota(cast):
    cast.shared_task.max_pair_sets_per_team = 1
    cast.shared_task.save()
    client = cast.client("breaker")
    for _ in range(3):
        dry = client.post(PAIRS_URL, {"pairs": GOOD_PAIRS, "dry_run": True}, format="json")
        assert dry.status_code == 200, dry.json()
    assert client.post(PAIRS_URL, {"pairs": GOOD_PAIRS}, format="json").status_code == 201
    assert not PairSet.objects.filter(pairs__isnull=True).exists()


def test_245_identical_problems_are_grouped_under_one_line_range(cast):
    rows = [
        {"original_text": f"A sentence nobody wrote, number {n}.", "variant_text": f"A sentence somebody wrote, number {n}.", "variant_label": "positive"}
        for n in range(245)
    ]  # fmt: skip
    body = post_file(cast, csv_bytes(rows), "p.csv", dry_run="true").json()
    assert body["error_count"] == 245
    assert [(g["kind"], g["count"], g["lines"]) for g in body["groups"]] == [
        ("original", 245, "2–246")
    ]
    assert body["groups"][0]["examples"] == [
        "the original text is not a sentence of the starter set"
    ]
    assert len(body["errors"]) == 200


# --- JSON lists name no field they do not know ---------------------------------------------


def test_a_json_pair_with_an_unknown_field_is_refused_naming_the_field(cast):
    pairs = [GOOD_PAIRS[0], {**GOOD_PAIRS[1], "varient_label": "negative"}]
    response = cast.client("breaker").post(PAIRS_URL, {"pairs": pairs}, format="json")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["line"] == 2
    assert error["reason"].startswith("unknown field(s) 'varient_label': the fields are ")
    assert not PairSet.objects.exists()


def test_an_unknown_field_beside_the_pairs_is_refused(cast):
    body = {"pairs": GOOD_PAIRS, "labelmap": "1=positive"}
    response = cast.client("breaker").post(PAIRS_URL, body, format="json")
    assert response.status_code == 400
    assert "unknown field(s) 'labelmap'" in str(response.json())
    single = cast.client("breaker").post(
        "/api/v1/shared-tasks/sst/pairs/", {**DRAFT_PAIRS[0], "note": "x"}, format="json"
    )
    assert single.status_code == 400
    assert "unknown field(s) 'note'" in str(single.json())
