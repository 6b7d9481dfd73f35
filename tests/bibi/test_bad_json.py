"""Strings no database can store, and JSON nested past reason, are refused with a reason.

NUL (which PostgreSQL refuses in text), lone surrogates (which no UTF-8 text holds) and
deeply nested arrays used to crash requests with psycopg's DataError, UnicodeEncodeError or
RecursionError. Now a JSON Lines row holding one is a row error, a JSON body holding one a
400 naming the field; the fuzz tests below throw such strings at every parser that takes
JSON and assert that no request fails with 500 and nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from bibi.pairs.models import Pair, PairSet
from bibi.sharedtasks.models import AuditLogEntry, Example
from bibi.systems import services as system_services
from bibi.systems.models import Prediction, SystemVersion

from .conftest import Cast, build_cast

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

BASE = "/api/v1/shared-tasks/sst"
UNSTORABLE = ["\x00", "\ud800", "\udbff", "\udc00", "\udfff"]
DEEP = "[" * 5000 + "]" * 5000


def no_500_client(cast: Cast, who: str) -> APIClient:
    client = cast.client(who)
    client.raise_request_exception = False
    return client


def stored() -> tuple[int, ...]:
    return (
        PairSet.objects.count(),
        Pair.objects.count(),
        Example.objects.count(),
        Prediction.objects.count(),
        SystemVersion.objects.count(),
        AuditLogEntry.objects.count(),
    )


# --- The refusals, one by one ---------------------------------------------------------------


def test_a_pair_file_row_naming_its_original_with_nul_is_a_row_error():
    cast = build_cast(current_phase="break")
    line = json.dumps({"original_id": "s1\x00", "variant_text": "x", "variant_label": "positive"})
    response = no_500_client(cast, "breaker").post(
        f"{BASE}/pair-sets/",
        {"file": SimpleUploadedFile("pairs.jsonl", line.encode())},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {
            "line": 1,
            "reason": '"original_id" holds U+0000 (a control character), which cannot be stored',
        }
    ]


def test_an_example_text_with_a_lone_surrogate_is_a_row_error():
    cast = build_cast()
    line = json.dumps({"id": "z1", "text": "fine \ud83d film", "label": "positive"})
    response = no_500_client(cast, "organizer").post(
        f"{BASE}/datasets/train/import/",
        {"file": SimpleUploadedFile("train.jsonl", line.encode())},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"line": 1, "reason": '"text" holds U+D83D (a lone surrogate), which cannot be stored'}
    ]


def test_a_json_body_names_each_field_that_cannot_be_stored():
    cast = build_cast(current_phase="break")
    body = {
        "label_map": {"\ud800": "positive"},
        "pairs": [{"original_id": "s1", "variant_text": "I adore\x00 it", "variant_label": "p"}],
    }
    response = no_500_client(cast, "breaker").post(
        f"{BASE}/pair-sets/", json.dumps(body), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "label_map.\\ud800": [
            "has a name that holds U+D800 (a lone surrogate), which cannot be stored"
        ],
        "pairs[0].variant_text": ["holds U+0000 (a control character), which cannot be stored"],
    }


def test_a_deeply_nested_json_body_is_refused_with_a_reason():
    cast = build_cast(current_phase="break")
    response = no_500_client(cast, "breaker").post(
        f"{BASE}/pair-sets/", f'{{"pairs": {DEEP}}}', content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "detail": "JSON parse error - the body nests arrays or objects deeper than 32 levels"
    }


def test_a_label_map_with_nul_is_refused_before_it_reaches_the_audit_log():
    cast = build_cast()
    response = no_500_client(cast, "organizer").post(
        f"{BASE}/datasets/train/import/",
        {
            "file": SimpleUploadedFile("train.csv", b"id,text,label\nz1,fine,1\n"),
            "label_map": "1=positive,\x00=negative",
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json() == {
        "label_map": [
            "A label map entry holds U+0000 (a control character), which cannot be stored."
        ]
    }


def test_a_query_parameter_with_nul_is_refused_with_a_reason():
    cast = build_cast()
    response = no_500_client(cast, "organizer").get(
        f"{BASE}/datasets/starter/examples/", {"search": "I love\x00"}
    )
    assert response.status_code == 400
    assert response.json() == {
        "detail": "The query parameter 'search' holds U+0000 (a control character), "
        "which no search can hold."
    }


# --- Fuzzing every parser that takes JSON ---------------------------------------------------

text = st.text(max_size=30)
bad = st.builds(
    lambda before, char, after: before + char + after,
    st.text(max_size=10),
    st.sampled_from(UNSTORABLE),
    st.text(max_size=10),
)
value = st.one_of(text, bad, st.lists(st.one_of(text, bad), max_size=3), st.none())
# Values that pass, so that a bad string elsewhere is what the request meets first.
GOOD = {
    "id": ["d1", "d2", "z9"],
    "original_id": ["s1", "s4"],
    "text": ["a gripping , beautifully acted film .", "fine"],
    "variant_text": ["I adore this movie!", 'Russell is "terrific" as coach Herb Brooks.'],
    "variant_label": ["positive", "negative", "1"],
    "label": ["positive", "negative", "1"],
}


def has_unstorable(item: object) -> bool:
    if isinstance(item, str):
        return any(char in item for char in UNSTORABLE)
    if isinstance(item, list):
        return any(has_unstorable(element) for element in item)
    if isinstance(item, dict):
        return any(has_unstorable(key) or has_unstorable(val) for key, val in item.items())
    return False


def rows(fields: list[str]) -> st.SearchStrategy[list[dict[str, object]]]:
    """One to three JSON objects with these fields (and maybe an odd one), holding at least
    one string that cannot be stored, or nested past the limit."""
    row = st.fixed_dictionaries(
        {name: st.one_of(st.sampled_from(GOOD.get(name, [""])), value) for name in fields},
        optional={"extra": value, "\x00key": text},
    )
    return st.lists(row, min_size=1, max_size=3)


def jsonl(objects: list[dict[str, object]], deep_at: int | None) -> bytes:
    # ensure_ascii escapes NUL and surrogates as \u0000 and \ud800, as a JSON writer would.
    lines = [json.dumps(item) for item in objects]
    if deep_at is not None:
        index = deep_at % len(lines)
        lines[index] = lines[index][:-1] + f', "deep": {DEEP}}}'
    return ("\n".join(lines) + "\n").encode()


FUZZ = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def fuzz_file_upload(
    cast: Cast, who: str, url: str, fields: list[str], form: Callable[[], dict[str, str]]
) -> None:
    client = no_500_client(cast, who)
    before = stored()

    @FUZZ
    @given(objects=rows(fields), deep_at=st.one_of(st.none(), st.integers(0, 2)))
    def upload(objects: list[dict[str, object]], deep_at: int | None) -> None:
        assume(deep_at is not None or has_unstorable(objects))
        data = jsonl(objects, deep_at)
        response = client.post(
            url, {"file": SimpleUploadedFile("upload.jsonl", data), **form()}, format="multipart"
        )
        assert response.status_code == 400, (response.status_code, response.content[:500])
        assert response.json()["error_count"] >= 1
        assert stored() == before

    upload()


def test_fuzzed_pair_files_are_refused_never_failing_or_storing():
    cast = build_cast(current_phase="break")
    fields = ["original_id", "original_text", "variant_text", "variant_label", "rationale", "tags"]
    fuzz_file_upload(cast, "breaker", f"{BASE}/pair-sets/", fields, dict)


def test_fuzzed_example_imports_are_refused_never_failing_or_storing():
    cast = build_cast()
    fuzz_file_upload(
        cast, "organizer", f"{BASE}/datasets/train/import/", ["id", "text", "label"], dict
    )


def test_fuzzed_prediction_files_are_refused_never_failing_or_storing():
    cast = build_cast(current_phase="build")
    system = system_services.system_create(
        team=cast.builder_team, actor=cast.builder, name="by hand", kind="self_reported"
    )
    fuzz_file_upload(
        cast,
        "builder",
        f"{BASE}/systems/{system.id}/predictions/",
        ["id", "text", "label"],
        lambda: {"source": "blind_dev"},
    )


def test_fuzzed_json_pair_sets_and_pairs_are_refused_never_failing_or_storing():
    cast = build_cast(current_phase="break")
    client = no_500_client(cast, "breaker")
    before = stored()
    fields = ["original_id", "original_text", "variant_text", "variant_label", "rationale", "tags"]

    @FUZZ
    @given(
        pairs=rows(fields),
        label_map=st.one_of(st.none(), st.dictionaries(st.one_of(text, bad), st.one_of(text, bad))),
        wrapped=st.booleans(),
        one=st.booleans(),
        deep=st.booleans(),
    )
    def submit(pairs, label_map, wrapped, one, deep) -> None:
        if one:
            url, body = f"{BASE}/pairs/", {**pairs[0], "label_map": label_map}
        else:
            url = f"{BASE}/pair-sets/"
            body = {"pairs": pairs, "label_map": label_map} if wrapped or label_map else pairs
        assume(deep or has_unstorable(body))
        sent = json.dumps(body)
        if deep:
            sent = sent.replace("[", f"[{DEEP}, ", 1) if "[" in sent else f"[{DEEP}, {sent}]"
        response = client.post(url, sent, content_type="application/json")
        assert response.status_code == 400, (response.status_code, response.content[:500])
        assert stored() == before

    submit()
