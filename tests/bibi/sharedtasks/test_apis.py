from __future__ import annotations

import uuid

import pytest
from rest_framework.throttling import AnonRateThrottle

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

BASE = "/api/v1/shared-tasks/sst"


def test_an_organizer_creates_a_task_with_its_labels_and_settings(cast):
    body = {
        "name": "Three-way sentiment",
        "slug": "sst-3",
        "labels": ["negative", "neutral", "positive"],
        "weight_mode": "original_f1",
        "break_rate_mode": "sentences",
        "pair_require_rationale": True,
    }
    response = cast.client("outsider").post("/api/v1/shared-tasks/", body, format="json")
    assert response.status_code == 201, response.json()
    created = response.json()
    assert created["labels"] == ["negative", "neutral", "positive"]
    assert created["weight_mode"] == "original_f1"
    assert created["my_role"] == "organizer"
    assert created["current_phase"] is None


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "x", "slug": "x", "labels": "positive"}, "labels"),
        ({"name": "x", "slug": "x", "labels": ["only"]}, "labels"),
        ({"name": "x", "slug": "x", "weight_mode": "popularity"}, "weight_mode"),
        ({"name": "x", "slug": "not a slug"}, "slug"),
        ({"name": "x", "slug": "sst"}, "slug"),
        ({"name": "x", "slug": "x", "pair_max_edit_ratio": 3}, "pair_max_edit_ratio"),
    ],
)
def test_a_bad_task_is_refused_with_the_field_named(cast, body, field):
    response = cast.client("outsider").post("/api/v1/shared-tasks/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()


def test_the_task_reports_the_current_phase_and_the_callers_role(cast):
    assert cast.client("breaker").get(f"{BASE}/").json()["current_phase"] == "break"
    assert cast.client("breaker").get(f"{BASE}/").json()["my_role"] == "breaker"
    assert cast.client("anonymous").get(f"{BASE}/").json()["my_role"] is None


def test_examples_are_paginated_and_searchable(cast, settings):
    response = cast.client("anonymous").get(f"{BASE}/datasets/starter/examples/?search=movie")
    assert response.status_code == 200
    body = response.json()
    assert body["count"] == 1
    assert body["results"] == [{"id": "s1", "text": "I love this movie!", "label": "positive"}]


def test_starter_examples_filter_by_label(cast):
    body = cast.client("breaker").get(f"{BASE}/datasets/starter/examples/?label=negative").json()
    assert [row["id"] for row in body["results"]] == ["s2", "s3"]


def test_an_unknown_split_or_phase_is_not_found(cast):
    client = cast.client("organizer")
    assert client.get(f"{BASE}/datasets/test/examples/").status_code == 404
    assert client.get(f"{BASE}/phases/warmup/").status_code == 404


def test_a_deadline_extension_shows_in_the_audit_log(cast):
    client = cast.client("organizer")
    results = client.get(f"{BASE}/phases/results/").json()
    new_end = results["ends_at"].replace("Z", "+00:00")
    from datetime import datetime, timedelta

    later = (datetime.fromisoformat(new_end) + timedelta(days=1)).isoformat()
    assert (
        client.post(
            f"{BASE}/phases/results/extend/", {"ends_at": later, "reason": "typo"}, format="json"
        ).status_code
        == 200
    )
    log = client.get(f"{BASE}/audit-log/").json()["results"]
    assert log[0]["action"] == "phase.extend"
    assert log[0]["actor"] == "olga"
    assert log[0]["details"]["reason"] == "typo"


def test_a_token_is_issued_for_a_username_and_password(cast):
    response = cast.client("anonymous").post(
        "/api/v1/auth/token/", {"username": "brian", "password": "pw-brian-123"}, format="json"
    )
    assert response.status_code == 200
    assert len(response.json()["token"]) == 40


def test_anonymous_callers_are_throttled(cast, monkeypatch):
    monkeypatch.setattr(
        AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute", "user": "1000/minute"}
    )
    # An address of its own: the shared cache remembers every other test's calls.
    address = f"198.51.100.{uuid.uuid4().int % 250 + 1}-{uuid.uuid4().hex}"
    client = cast.client("anonymous")
    codes = [client.get(f"{BASE}/", REMOTE_ADDR=address).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 429, 429]


def test_a_made_up_forwarded_address_does_not_escape_the_throttle(cast, monkeypatch):
    monkeypatch.setattr(
        AnonRateThrottle, "THROTTLE_RATES", {"anon": "3/minute", "user": "1000/minute"}
    )
    address = f"203.0.113.{uuid.uuid4().hex}"
    client = cast.client("anonymous")
    codes = [
        client.get(f"{BASE}/", REMOTE_ADDR=address, HTTP_X_FORWARDED_FOR=f"10.0.0.{n}").status_code
        for n in range(5)
    ]
    assert codes == [200, 200, 200, 429, 429]


def test_the_docs_page_is_served_without_a_cdn(cast):
    response = cast.client("anonymous").get("/api/v1/docs/")
    assert response.status_code == 200
    assert b"cdn.jsdelivr" not in response.content
    assert b"swagger-ui" in response.content


def _import(cast, split: str, name: str, data: bytes, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    body = {"file": SimpleUploadedFile(name, data), **fields}
    return cast.client("organizer").post(
        f"{BASE}/datasets/{split}/import/", body, format="multipart"
    )


def test_an_organizer_imports_an_sst2_file_with_a_label_map(cast):
    response = _import(
        cast, "train", "extra.train", b"1 a joy .\n0 a chore .\n", label_map="0=negative,1=positive"
    )
    assert response.status_code == 201, response.json()
    assert response.json() == {
        "created": 2,
        "encoding": "utf-8",
        "format": "sst2",
        "duplicate_count": 0,
        "duplicates": [],
        "cells_to_compute": 0,
        "dropped_answers": 0,
        "dropped_items": 0,
        "repeated_rows": 0,
        "restored_case": 0,
        "refused_count": 0,
        "refused": [],
        "refused_file": "",
    }
    assert cast.train.examples.count() == 4


def test_a_rejected_import_lists_every_bad_row_and_stores_nothing(cast_building):
    cast = cast_building
    data = b"id\ttext\tlabel\nn1\t\tpositive\nn2\tfine\tmaybe\nn3\tgood\tpositive\n"
    response = _import(cast, "starter", "bad.tsv", data)
    assert response.status_code == 400
    body = response.json()
    assert body["detail"] == "Nothing was stored: 2 problem(s) in bad.tsv."
    assert [error["line"] for error in body["errors"]] == [2, 3]
    assert cast.starter.examples.count() == 4


def test_a_label_map_that_is_not_from_to_pairs_is_refused(cast):
    response = _import(cast, "train", "x.tsv", b"id\ttext\tlabel\n", label_map="0:negative")
    assert response.status_code == 400
    assert "'0:negative' is not a label mapping" in response.json()["label_map"][0]


def test_a_refused_import_into_a_new_split_leaves_no_dataset_behind(cast):
    cast.train.delete()
    response = _import(cast, "train", "bad.tsv", b"id\ttext\tlabel\nx\t\tpositive\n")
    assert response.status_code == 400
    assert not cast.shared_task.datasets.filter(split="train").exists()
