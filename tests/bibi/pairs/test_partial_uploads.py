"""Uploads that help: a partial upload keeps the pairs that pass and hands back the others,
an identical re-upload is recognised, and refusals are summarised by the rule at fault."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs.models import PairSet

from .conftest import BAD_PAIR, GOOD_PAIRS, PAIRS_URL, csv_bytes

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

FAR_PAIR = {
    "original_id": "s1",
    "variant_text": "Nobody anywhere could ever hate such a film, said everyone.",
    "variant_label": "positive",
}


def post_file(cast, data: bytes, name: str = "pairs.csv", role: str = "breaker", **fields):
    return cast.client(role).post(
        PAIRS_URL, {"file": SimpleUploadedFile(name, data), **fields}, format="multipart"
    )


def test_a_partial_upload_stores_the_passing_pairs_and_lists_the_refused_rows(cast):
    data = csv_bytes([BAD_PAIR, *GOOD_PAIRS, FAR_PAIR])
    response = post_file(cast, data, partial="true")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["pair_count"] == len(GOOD_PAIRS)
    assert body["refused_count"] == 2
    kinds = {group["kind"]: group for group in body["refused_groups"]}
    assert set(kinds) == {"unchanged", "edit_distance", "shared_tokens"}
    assert kinds["edit_distance"]["setting"] == "pair_max_edit_distance"
    assert kinds["edit_distance"]["lines"] == str(len(GOOD_PAIRS) + 3)
    pair_set = PairSet.objects.get()
    assert pair_set.pairs.count() == len(GOOD_PAIRS)

    download = cast.client("breaker").get(body["refused_url"])
    assert download.status_code == 200
    assert download["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(download.content.decode())))
    assert [(row["line"], row["rule"]) for row in rows] == [
        ("1", "header"),
        ("2", "unchanged"),
        (str(len(GOOD_PAIRS) + 3), "shared_tokens; edit_distance"),
    ]
    # The line as it was in the file, to fix and upload again.
    assert rows[0]["content"] == data.decode().splitlines()[0]
    assert rows[1]["content"] == data.decode().splitlines()[1]
    assert rows[1]["reason"] == "the variant is identical to the original"
    assert "token edits away" in rows[2]["reason"]
    assert rows[2]["setting"] == "pair_min_shared_token_ratio; pair_max_edit_distance"


def test_the_refused_rows_are_the_teams_and_the_organizers_only(cast):
    body = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="true").json()
    url = body["refused_url"]
    assert cast.client("organizer").get(url).status_code == 200
    assert cast.client("outsider").get(url).status_code == 404


def test_all_or_nothing_stays_the_default(cast):
    response = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]))
    assert response.status_code == 400
    assert response.json()["detail"].startswith("Nothing was stored")
    assert not PairSet.objects.exists()


def test_a_partial_upload_with_no_passing_pair_stores_nothing(cast):
    response = post_file(cast, csv_bytes([BAD_PAIR, FAR_PAIR]), partial="true")
    assert response.status_code == 400
    assert not PairSet.objects.exists()


def test_an_identical_re_upload_is_refused_and_not_charged_to_the_quota(cast):
    cast.shared_task.max_pair_sets_per_team = 2
    cast.shared_task.save()
    data = csv_bytes(GOOD_PAIRS)
    first = post_file(cast, data, name="mine.csv")
    assert first.status_code == 201
    again = post_file(cast, data, name="copy.csv")
    assert again.status_code == 400
    detail = again.json()["detail"]
    assert f"identical to pair set {first.json()['id']}" in detail
    assert "did not count" in detail
    assert PairSet.objects.count() == 1
    # Another file still fits in the quota the identical one did not use.
    assert post_file(cast, csv_bytes(GOOD_PAIRS[:2])).status_code == 201


def test_a_label_written_in_another_case_is_the_tasks_label(cast):
    rows = [{**pair, "variant_label": pair["variant_label"].capitalize()} for pair in GOOD_PAIRS]
    response = post_file(cast, csv_bytes(rows))
    assert response.status_code == 201, response.json()
    assert set(PairSet.objects.get().pairs.values_list("variant_label", flat=True)) <= {
        "negative",
        "positive",
    }


def test_an_identical_json_list_is_refused_however_it_is_spaced(cast):
    cast.shared_task.max_pair_sets_per_team = 2
    cast.shared_task.save()
    client = cast.client("breaker")
    first = client.post(PAIRS_URL, {"pairs": GOOD_PAIRS}, format="json")
    assert first.status_code == 201, first.json()
    reordered = [dict(reversed(list(pair.items()))) for pair in GOOD_PAIRS]
    body = json.dumps({"pairs": reordered}, indent=3)
    again = client.post(PAIRS_URL, body, content_type="application/json")
    assert again.status_code == 400
    detail = again.json()["detail"]
    assert f"This list of pairs is identical to pair set {first.json()['id']}" in detail
    assert PairSet.objects.count() == 1
    # The same pairs in another order are another list.
    assert client.post(PAIRS_URL, {"pairs": GOOD_PAIRS[::-1]}, format="json").status_code == 201
