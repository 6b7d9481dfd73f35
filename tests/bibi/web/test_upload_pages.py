"""Upload pages that help: a partial pair-set upload and its refused rows, uploads left, forms
shown only when they can succeed, and out-of-label predictions reported on the system page."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs.models import PairSet
from bibi.systems.models import System

from ..conftest import build_cast
from ..pairs.conftest import BAD_PAIR, GOOD_PAIRS, csv_bytes
from .conftest import TASK, page_client

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


def upload(client, data: bytes, **fields):
    file = SimpleUploadedFile("mine.csv", data)
    return client.post(
        f"{TASK}pairs/upload/", {"file": file, "format": "", "label_map": "", **fields}
    )


def test_a_partial_upload_keeps_the_passing_pairs_and_offers_the_refused_rows(cast):
    client = page_client(cast, "breaker")
    response = upload(client, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="on")
    pair_set = PairSet.objects.get(team=cast.breaker_team)
    assert response["Location"] == f"{TASK}pair-sets/{pair_set.id}/"
    page = client.get(response["Location"]).content.decode()
    assert f"Pair set {pair_set.id} is submitted: {len(GOOD_PAIRS)} pairs." in page
    assert "1 row of the file was refused and left out" in page
    assert "1 row refused and left out" in page
    assert "the variant is identical to the original" in page
    download = client.get(f"{TASK}pair-sets/{pair_set.id}/refused.csv")
    assert download["Content-Disposition"] == (
        f'attachment; filename="mine-refused-set-{pair_set.id}.csv"'
    )
    # The file's header row first (line 1), so that the download uploads again once fixed.
    header, row = csv.DictReader(io.StringIO(download.content.decode()))
    assert (header["line"], header["rule"]) == ("1", "header")
    assert (row["line"], row["rule"]) == ("2", "unchanged")
    # Another team's member sees neither the rows nor the download.
    assert page_client(cast, "builder").get(
        f"{TASK}pair-sets/{pair_set.id}/refused.csv"
    ).status_code in (403, 404)


def test_a_refusal_links_each_rule_to_the_tasks_rules(cast):
    far = {
        **GOOD_PAIRS[0],
        "variant_text": "Nobody anywhere could ever hate such a film, said all.",
    }
    response = upload(page_client(cast, "breaker"), csv_bytes([far]))
    assert response.status_code == 400
    html = response.content.decode()
    assert '<a href="#rule-pair_max_edit_distance">the rule</a>' in html
    assert 'id="rule-pair_max_edit_distance"' in html


def test_the_pairs_page_says_how_many_sets_are_left(cast):
    cast.shared_task.max_pair_sets_per_team = 2
    cast.shared_task.save()
    client = page_client(cast, "breaker")
    upload(client, csv_bytes(GOOD_PAIRS))
    html = client.get(f"{TASK}pairs/").content.decode()
    assert "Your team may submit <strong>1</strong> more set (at most 2)" in html


def test_the_upload_form_is_shown_only_in_the_break_phase(db):
    cast = build_cast(current_phase="build")
    html = page_client(cast, "breaker").get(f"{TASK}pairs/").content.decode()
    assert 'id="upload-closed"' in html
    assert "The break phase opens at" in html
    assert "Upload and check" not in html


def test_the_system_page_counts_predictions_outside_the_labels(db):
    cast = build_cast(current_phase="build")
    client = page_client(cast, "builder")
    client.post(f"{TASK}systems/create/", {"name": "by hand", "kind": "self_reported"})
    system = System.objects.get(name="by hand")
    rows = "id,label\nd1,positive\nd2,negative\nd3,neutral\n"
    response = client.post(
        f"{TASK}systems/{system.id}/predictions/",
        {"file": SimpleUploadedFile("dev.csv", rows.encode()), "source": "blind_dev"},
        follow=True,
    )
    html = response.content.decode()
    assert "1 of them name a label outside this task" in html
    assert 'data-outside-labels="1">1, kept as given and counted wrong' in html
    left = cast.shared_task.max_uploads_per_system - 1
    assert f"{left} of {cast.shared_task.max_uploads_per_system} left" in html


def test_a_warning_of_the_whole_set_names_no_empty_line(cast):
    client = page_client(cast, "breaker")
    upload(client, csv_bytes(GOOD_PAIRS))
    response = upload(client, csv_bytes([{**BAD_PAIR, "variant_text": "I adore this movie!"}]))
    page = client.get(response["Location"]).content.decode()
    assert "This set (1 pair) replaces set" in page
    assert "Line :" not in page and "Line : " not in page


def test_the_set_page_offers_to_add_the_fixed_rows_to_the_set(cast):
    client = page_client(cast, "breaker")
    response = upload(client, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="on")
    pair_set = PairSet.objects.get(team=cast.breaker_team)
    page = client.get(response["Location"]).content.decode()
    assert "upload them as a new set" not in page
    assert f'href="{TASK}pairs/?append_to={pair_set.id}#upload-heading" id="add-to-set"' in page
    form = client.get(f"{TASK}pairs/?append_to={pair_set.id}").content.decode()
    assert f'<option value="{pair_set.id}" selected>Set {pair_set.id}: 4 pairs, mine.csv' in form
    fixed = csv_bytes([{**BAD_PAIR, "variant_text": "I adore this movie!"}])
    response = upload(client, fixed, append_to=str(pair_set.id))
    assert response.status_code == 302
    added = PairSet.objects.exclude(pk=pair_set.pk).get(team=cast.breaker_team)
    assert added.pairs.count() == len(GOOD_PAIRS) + 1
    page = client.get(response["Location"]).content.decode()
    assert f"This set holds the {len(GOOD_PAIRS)} pairs of set {pair_set.id}" in page
