"""What a page does with input that is wrong, odd or hostile: a clear message beside the
field or above the form, nothing stored, nothing executed."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs.models import PairSet
from bibi.sharedtasks.models import Team

from .conftest import TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("pairs.csv", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "the file is not text"),
        ("pairs.xlsx", b"PK\x03\x04", "pairs.xlsx"),
        ("pairs.csv", b"", "The submitted file is empty."),
        ("pairs.csv", "original_id,variant_text\nsé,x\n".encode("utf-16"), "UTF-16"),
    ],
)
def test_a_file_that_is_no_pair_set_is_refused_with_the_reason(cast, name, content, message):
    response = page_client(cast, "breaker").post(
        f"{TASK}pairs/upload/", {"file": SimpleUploadedFile(name, content)}
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not PairSet.objects.exists()


def test_a_label_map_that_is_not_a_map_is_refused_beside_its_field(cast):
    response = page_client(cast, "breaker").post(
        f"{TASK}pairs/upload/",
        {"file": SimpleUploadedFile("p.csv", b"original_id\n"), "label_map": "0:negative"},
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="id_label_map_error"' in html
    assert "is not a label mapping: write FILE_LABEL=TASK_LABEL" in html


def test_markup_in_a_team_name_is_shown_as_text(cast):
    client = page_client(cast, "outsider")
    client.post(f"{TASK}team/create/", {"kind": "breaker", "name": "<script>alert(1)</script>"})
    assert Team.objects.filter(name="<script>alert(1)</script>").exists()
    page = client.get(f"{TASK}team/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.parametrize("query", ["' OR 1=1 --", "%", "_" * 5000, "\u202e"])
def test_any_search_text_is_just_text(cast, query):
    response = page_client(cast, "anonymous").get(f"{TASK}data/starter/", {"q": query})
    assert response.status_code == 200
    assert "No text matches" in response.content.decode()


@pytest.mark.parametrize("page", ["abc", "-1", "99999", "1e9"])
def test_any_page_number_shows_a_page(cast, page):
    response = page_client(cast, "anonymous").get(f"{TASK}data/starter/", {"page": page})
    assert response.status_code == 200
    assert "Russell is terrific" in response.content.decode()


@pytest.mark.parametrize(
    "path", ["data/dev/", "organize/phases/nope/", "pair-sets/999999/", "systems/999999/"]
)
def test_addresses_of_nothing_are_404(cast, path):
    client = page_client(cast, "organizer")
    assert client.post(f"{TASK}{path}").status_code in (404, 405)
    assert client.get(f"{TASK}{path}").status_code in (404, 405)


def test_a_phase_form_with_a_date_that_is_no_date_says_so(cast):
    response = page_client(cast, "organizer").post(
        f"{TASK}organize/phases/results/extend/",
        {"results-extend-ends_at": "next tuesday", "results-extend-reason": ""},
    )
    assert response.status_code == 400
    assert "Enter a valid date/time." in response.content.decode()
