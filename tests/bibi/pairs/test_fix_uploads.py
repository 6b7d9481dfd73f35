"""Fixing a partial upload: the refused rows download as a file that uploads again (both rows
of a 2017 pair, the breaker's text kept whatever it starts with), and the fixed pairs are added
to the set they were refused from instead of replacing it as the entry."""

from __future__ import annotations

import csv
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.pairs import selectors
from bibi.pairs.models import Pair, PairSet

from .conftest import BAD_PAIR, GOOD_PAIRS, PAIRS_URL, csv_bytes

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

# BAD_PAIR (line 2 of the file) fixed: a one-word edit of s1.
FIXED_PAIR = {**BAD_PAIR, "variant_text": "I adore this movie!"}


def post_file(cast, data: bytes, name: str = "pairs.csv", **fields):
    return cast.client("breaker").post(
        PAIRS_URL, {"file": SimpleUploadedFile(name, data), **fields}, format="multipart"
    )


def refused_download(cast, body) -> str:
    response = cast.client("breaker").get(body["refused_url"])
    assert response.status_code == 200
    return response.content.decode()


def entry_texts(cast) -> list[str]:
    entry = selectors.pair_set_entry(team=cast.breaker_team)
    return sorted(entry.pairs.values_list("variant_text", flat=True))


def test_a_fix_added_to_the_set_makes_an_entry_of_both(cast):
    first = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="true").json()
    assert (first["pair_count"], first["refused_count"]) == (len(GOOD_PAIRS), 1)
    response = post_file(cast, csv_bytes([FIXED_PAIR]), "fix.csv", append_to=first["id"])
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["pair_count"] == len(GOOD_PAIRS) + 1
    assert body["is_entry"] is True
    reasons = [warning["reason"] for warning in body["warnings"]]
    assert any(
        f"This set holds the {len(GOOD_PAIRS)} pairs of set {first['id']} and the 1 pair added"
        in reason
        for reason in reasons
    ), reasons
    assert entry_texts(cast) == sorted(
        [pair["variant_text"] for pair in GOOD_PAIRS] + [FIXED_PAIR["variant_text"]]
    )
    # The first set never changes.
    assert PairSet.objects.get(pk=first["id"]).pairs.count() == len(GOOD_PAIRS)


def test_a_fix_uploaded_as_a_set_of_its_own_says_it_replaces_the_entry(cast):
    first = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="true").json()
    body = post_file(cast, csv_bytes([FIXED_PAIR]), "fix.csv").json()
    assert body["pair_count"] == 1
    assert body["replaced_entry"] == {"id": first["id"], "pair_count": len(GOOD_PAIRS)}
    assert any(
        f"This set (1 pair) replaces set {first['id']} ({len(GOOD_PAIRS)} pairs" in w["reason"]
        for w in body["warnings"]
    )


def test_an_added_fix_may_not_repeat_a_variant_of_the_set_nor_go_past_the_size(cast):
    first = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="true").json()
    response = post_file(cast, csv_bytes([GOOD_PAIRS[0]]), "again.csv", append_to=first["id"])
    assert response.status_code == 400
    assert "as row" in response.json()["errors"][0]["reason"]
    cast.shared_task.max_pairs_per_set = len(GOOD_PAIRS)
    cast.shared_task.save()
    response = post_file(cast, csv_bytes([FIXED_PAIR]), "fix.csv", append_to=first["id"])
    assert response.status_code == 400
    assert "allows at most" in response.json()["errors"][0]["reason"]


def test_pairs_are_added_only_to_a_submitted_set_of_the_team(cast):
    response = post_file(cast, csv_bytes([FIXED_PAIR]), "fix.csv", append_to=987654)
    assert response.status_code == 400
    assert "append_to" in response.json()
    assert not PairSet.objects.exists()


def test_the_refused_rows_file_uploads_again_once_fixed(cast):
    first = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="true").json()
    refused = refused_download(cast, first)
    fixed = refused.replace(",I love this movie!,", ",I adore this movie!,")
    assert fixed != refused
    response = post_file(cast, fixed.encode(), "refused.csv", append_to=first["id"])
    assert response.status_code == 201, response.json()
    assert response.json()["pair_count"] == len(GOOD_PAIRS) + 1
    # The fixed pair keeps its line in the first file.
    added = Pair.objects.get(pair_set_id=response.json()["id"], variant_text="I adore this movie!")
    assert added.row == 2


TSV_2017 = (
    "sentence_id\tsentence\tlabel\n"
    "bg1_a\tI love this movie!\t1\n"
    "bg1_b\tI'm mad for this movie!\t1\n"
    "bg3_a\tIt's harmless, sure, but it's also charmless.\t-1\n"
    "bg3_b\tIt's harmless, sure, but it's also charmless.\t1\n"
)


def test_a_refused_2017_pair_downloads_with_both_rows_and_uploads_again(cast):
    first = post_file(
        cast, TSV_2017.encode(), "breakers.tsv", partial="true", label_map="1=positive,-1=negative"
    ).json()
    assert (first["pair_count"], first["refused_count"]) == (1, 1)
    rows = list(csv.DictReader(io.StringIO(refused_download(cast, first))))
    assert [(row["line"], row["rule"]) for row in rows] == [("1", "header"), ("4", "unchanged")]
    assert rows[1]["content"].split("\n") == TSV_2017.splitlines()[3:5]
    fixed = (
        refused_download(cast, first)
        .replace("bg3_b\tIt's harmless", "bg3_b\tIt's not harmless")
        .replace("also charmless.\t1", "also not charmless.\t1")
    )
    response = post_file(
        cast,
        fixed.encode(),
        "refused.csv",
        append_to=first["id"],
        label_map="1=positive,-1=negative",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["pair_count"] == 2
    assert "It's not harmless, sure, but it's also not charmless." in entry_texts(cast)


def test_a_text_starting_like_a_formula_survives_the_round_trip(cast):
    # The variant column first, so that a refused line starts with the breaker's text.
    rows = [
        {"variant_text": "- I love this movie!", "original_id": "s1", "variant_label": "posit"},
        {"variant_text": "= I love this movie!", "original_id": "s1", "variant_label": "posit"},
        {"variant_text": "I adore this movie!", "original_id": "s1", "variant_label": "positive"},
    ]
    first = post_file(cast, csv_bytes(rows), partial="true").json()
    assert first["refused_count"] == 2
    refused = refused_download(cast, first)
    contents = [row["content"] for row in csv.DictReader(io.StringIO(refused))]
    # Neutralised in the download: a spreadsheet shows the cells, it does not run them.
    assert contents[1:] == ["'- I love this movie!,s1,posit", "'= I love this movie!,s1,posit"]
    fixed = refused.replace(",posit\n", ",positive\n").replace(',posit"', ',positive"')
    response = post_file(cast, fixed.encode(), "refused.csv", append_to=first["id"])
    assert response.status_code == 201, response.json()
    assert "- I love this movie!" in entry_texts(cast)
    assert "= I love this movie!" in entry_texts(cast)


def test_a_refused_label_suggests_a_map_from_the_files_own_labels(cast):
    response = post_file(cast, TSV_2017.encode(), "breakers.tsv")
    assert response.status_code == 400
    reasons = " ".join(error["reason"] for error in response.json()["errors"])
    assert "e.g. -1=negative,1=positive" in reasons
    assert "0=negative" not in reasons


def test_a_refused_rows_file_puts_rows_back_on_their_lines_within_bounds():
    from bibi.files import FileFormatError, refused_file_unfold
    from bibi.files.refused import LINE_MAX

    text = (
        "line,rule,setting,reason,content\n"
        '1,header,,,"original_id,variant_text,variant_label"\n'
        '4,label,,,"s1,I adore this movie!,positive"\n'
        ',,,,"s2,a row added by hand,negative"\n'
    )
    unfolded, file_format = refused_file_unfold(text)
    assert file_format == "csv"
    assert unfolded.split("\n") == [
        "original_id,variant_text,variant_label",
        "",
        "",
        "s1,I adore this movie!,positive",
        "s2,a row added by hand,negative",
        "",
    ]
    with pytest.raises(FileFormatError, match="is not a line number"):
        refused_file_unfold(text.replace("\n4,", f"\n{LINE_MAX + 1},"))
    with pytest.raises(FileFormatError, match="no header row"):
        refused_file_unfold(text.replace("1,header", "1,label"))


def test_a_json_list_may_be_added_to_a_set_too(cast):
    first = post_file(cast, csv_bytes([BAD_PAIR, *GOOD_PAIRS]), partial="true").json()
    response = cast.client("breaker").post(
        PAIRS_URL, {"pairs": [FIXED_PAIR], "append_to": first["id"]}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["pair_count"] == len(GOOD_PAIRS) + 1
    response = cast.client("breaker").post(
        PAIRS_URL, {"pairs": [FIXED_PAIR], "append_to": 987654}, format="json"
    )
    assert response.status_code == 400
    assert "append_to" in response.json()
