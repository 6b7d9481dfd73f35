"""Pair-set files: each format, each layout, each encoding, and files that cannot be read."""

from __future__ import annotations

import re
import unicodedata

import pytest

from bibi.files import FileFormatError
from bibi.pairs.models import Pair
from bibi.pairs.services import PairSetRejected
from bibi.sharedtasks.models import Example
from bibi.tasktypes.pair_files import read_pair_file, split_tags

from .conftest import (
    GOOD_PAIRS,
    PAIR_FIXTURES,
    csv_bytes,
    jsonl_bytes,
    upload,
    upload_submission,
)

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]

LABELS_2017 = {"1": "positive", "-1": "negative"}
STORED = [
    ("s1", "I'm mad for this movie!", "positive", ["semantics"]),
    ("s2", "[Bettis] has a smoldering, humorless intensity that's hilarious.", "positive", ["semantics"]),
    ("s3", "It's not harmless, sure, but it's also not charmless.", "positive", ["morphosyntax", "semantics"]),
    ("s4", 'Russell is "terrific" as coach Herb Brooks.', "negative", ["pragmatics"]),
]  # fmt: skip
FRENCH_ORIGINAL = "Un film très réussi, d’une grâce rare."
FRENCH_VARIANT = "Un film très raté, d’une grâce rare."


def upload_2017_fixture(cast, name: str):
    data = (PAIR_FIXTURES / name).read_bytes()
    return upload_submission(cast, data, name, label_map=LABELS_2017)


def stored(pair_set) -> list[tuple]:
    return [
        (p.original.external_id, p.variant_text, p.variant_label, p.tags)
        for p in pair_set.pairs.select_related("original").order_by("row")
    ]


@pytest.mark.parametrize("name", ["background.csv", "background.tsv", "background.jsonl"])
def test_each_format_of_the_pairs_layout_stores_the_background_pairs(cast, name):
    pair_set = upload(cast, (PAIR_FIXTURES / name).read_bytes(), name)
    assert stored(pair_set) == STORED
    assert (pair_set.layout, pair_set.file_format) == ("pairs", name.rsplit(".", 1)[1])
    assert pair_set.filename == name


def test_the_2017_layout_pairs_a_and_b_rows_and_finds_originals_by_their_text(cast):
    pair_set = upload_2017_fixture(cast, "background_2017.tsv").pair_set
    assert pair_set.layout == "sst2017"
    assert [(s[0], s[1], s[2]) for s in stored(pair_set)] == [s[:3] for s in STORED]
    pairs = list(pair_set.pairs.order_by("row"))
    assert [p.source_id for p in pairs] == ["bg1", "bg2", "bg3", "bg4"]
    assert [p.row for p in pairs] == [2, 4, 6, 8]
    # The 2017 table split a rationale over both rows of a pair.
    assert pairs[1].rationale == "Funny can be positive and negative"


def test_the_2017_layout_needs_a_label_map_for_its_numeric_labels(cast):
    with pytest.raises(PairSetRejected) as rejected:
        upload(cast, (PAIR_FIXTURES / "background_2017.tsv").read_bytes(), "b.tsv")
    assert rejected.value.errors[0].reason.startswith(
        "the original's label '1' is not one of this task's labels (negative, positive); "
        "give a label map"
    )
    assert not Pair.objects.exists()


def test_the_2017_layout_reports_unpaired_and_repeated_rows():
    data = (
        b"sentence_id,sentence,label\n"
        b"p1_a,I love this movie!,1\n"
        b"p2_b,I adore this movie!,1\n"
        b"p1_b,I adore this film!,1\n"
        b"p1_b,I adore the film!,1\n"
        b"p3,Russell is terrific.,1\n"
    )
    result = read_pair_file(data, filename="x.csv")
    assert [(e.line, e.reason) for e in result.errors] == [
        (3, "the pair 'p2' has no original (no row p2_a)"),
        (5, "'p1_b' is on line 4 and on line 5 with different content: keep one of them"),
        (6, "the sentence_id 'p3' must end in _a (the original) or _b (the variant)"),
    ]
    assert [p.source_id for p in result.pairs] == ["p1"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "cp1252", "mac_roman"])
def test_files_in_utf8_cp1252_and_mac_roman_are_read_and_stored_as_nfc(cast, encoding):
    Example.objects.create(
        dataset=cast.starter, external_id="fr", text=FRENCH_ORIGINAL, label="positive", position=9
    )
    rows = [{"original_id": "fr", "variant_text": FRENCH_VARIANT, "variant_label": "negative"}]
    pair_set = upload(cast, csv_bytes(rows, encoding=encoding), "fr.csv")
    expected = {"utf-8-sig": "utf-8"}.get(encoding, encoding)
    assert pair_set.encoding == expected
    assert pair_set.pairs.get().variant_text == FRENCH_VARIANT


def test_decomposed_utf8_is_stored_composed(cast):
    Example.objects.create(
        dataset=cast.starter, external_id="fr", text=FRENCH_ORIGINAL, label="positive", position=9
    )
    decomposed = unicodedata.normalize("NFD", FRENCH_VARIANT)
    rows = [{"original_id": "fr", "variant_text": decomposed, "variant_label": "negative"}]
    pair_set = upload(cast, csv_bytes(rows), "fr.csv")
    assert pair_set.pairs.get().variant_text == unicodedata.normalize("NFC", FRENCH_VARIANT)


def test_the_format_may_be_given_when_the_name_does_not_say_it(cast):
    pair_set = upload(cast, csv_bytes(GOOD_PAIRS, delimiter="\t"), "pairs.data", file_format="tsv")
    assert pair_set.file_format == "tsv"
    assert pair_set.pairs.count() == 4


def test_jsonl_tags_may_be_a_list_or_a_string(cast):
    rows = [dict(row, tags=row["tags"].split(";")) for row in GOOD_PAIRS[:2]] + GOOD_PAIRS[2:]
    assert stored(upload(cast, jsonl_bytes(rows), "p.jsonl")) == STORED


def test_column_names_ignore_case_and_edge_spaces():
    data = b" Original_ID ,VARIANT_TEXT,Variant_Label\ns1,I adore this movie!,positive\n"
    assert read_pair_file(data, filename="p.csv").pairs[0].original_id == "s1"


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (b"original_id,variant_text,variant_label,notes\ns1,a,b,c\n", "p.csv", "unknown column(s) 'notes'"),
        (b"id,text,label\ns1,a,b\n", "p.csv", "cannot tell the file's layout"),
        (b"variant_text,variant_label\nI adore it!,positive\n", "p.csv", "needs the column(s) original_id"),
        (b"original_id,variant_text,variant_label\n", "p.csv", "the file has no pairs"),
        (b"positive I adore it!\n", "p.txt", "has no ids"),
        (b"{}", "p.json", "JSON Lines"),
        (b"\xff\xfeo\x00r\x00", "p.csv", "UTF-16"),
    ],
)  # fmt: skip
def test_a_file_that_cannot_be_read_says_why(data, name, message):
    with pytest.raises(FileFormatError, match=re.escape(message)):
        read_pair_file(data, filename=name)


def test_rows_that_cannot_be_read_are_reported_with_the_pairs_problems(cast):
    data = csv_bytes(GOOD_PAIRS[:2]) + b's3,"never closed\n'
    with pytest.raises(PairSetRejected) as rejected:
        upload(cast, data, "p.csv")
    assert [e.line for e in rejected.value.errors] == [4]
    assert "never closed" in rejected.value.errors[0].reason
    assert not Pair.objects.exists()


def test_tags_split_on_semicolons_commas_or_a_json_list():
    assert split_tags("semantics; pragmatics") == ("semantics", "pragmatics")
    assert split_tags("semantics,pragmatics") == ("semantics", "pragmatics")
    assert split_tags('["semantics", "other"]') == ("semantics", "other")
    assert split_tags(["a ", ""]) == ("a",)
    assert split_tags(None) == ()


def test_a_column_problem_is_reported_on_the_header_line():
    data = b"original_id,variant_text,variant_label,notes\ns1,a,b,c\ns2,d,e,f\n"
    with pytest.raises(FileFormatError) as raised:
        read_pair_file(data, filename="p.csv")
    assert raised.value.line == 1


def test_an_unknown_field_of_json_lines_is_reported_where_it_first_appears():
    data = b'{"original_id": "s1", "variant_text": "a", "variant_label": "b"}\n{"notes": 1}\n'
    with pytest.raises(FileFormatError) as raised:
        read_pair_file(data, filename="p.jsonl")
    assert raised.value.line == 2


# --- The 2017 breaker files as the organizers released them -------------------------------


def test_the_released_2017_breaker_file_is_read_as_written(cast):
    """``sentiment_label``, no quoting (a sentence may begin with a quote), a pair repeated."""
    submission = upload_2017_fixture(cast, "breakers_2017.tsv")
    pairs = list(submission.pair_set.pairs.order_by("row"))
    assert [(p.source_id, p.variant_text, p.variant_label) for p in pairs] == [
        ("u1", '"I love this movie!"', "negative"),
        ("u2", '"Harmless", sure, but it\'s also charmless.', "negative"),
        ("u3", 'Russell is "terrific" as coach Herb Brooks.', "negative"),
        ("u4", "[Bettis] has a smoldering, humorless intensity that's hilarious.", "positive"),
    ]
    assert [(p.original.external_id, p.original_label) for p in pairs] == [
        ("s1", "positive"),
        ("s3", "negative"),
        ("s4", "positive"),
        ("s2", "negative"),
    ]
    repeats = [(w.line, w.reason) for w in submission.warnings if w.line]
    assert repeats == [
        (8, "'u1_a' repeats line 2 exactly: read once"),
        (9, "'u1_b' repeats line 3 exactly: read once"),
    ]


def test_a_repeated_2017_id_with_other_content_is_an_error_naming_both_lines():
    data = (
        b"sentence_id\tsentence\tsentiment_label\n"
        b"u1_a\tI love this movie!\t1\n"
        b'u1_b\t"I love this movie!"\t-1\n'
        b'u1_b\t"I love this movie!"\t1\n'
        b"u1_a\tI  love this movie!\t1\n"
    )
    result = read_pair_file(data, filename="b.tsv")
    assert [(e.line, e.reason) for e in result.errors] == [
        (4, "'u1_b' is on line 3 and on line 4 with different content: keep one of them")
    ]
    # Spacing is not content: texts are compared as the checks read them.
    assert [(w.line, w.reason) for w in result.warnings] == [
        (5, "'u1_a' repeats line 2 exactly: read once")
    ]


def test_a_2017_tsv_written_with_csv_quoting_is_refused_with_a_hint():
    data = (
        b"sentence_id\tsentence\tsentiment_label\n"
        b"u3_a\tRussell is terrific as coach Herb Brooks.\t1\n"
        b'u3_b\t"Russell is ""terrific"" as coach Herb Brooks."\t-1\n'
    )
    result = read_pair_file(data, filename="b.tsv")
    assert [e.line for e in result.errors] == [3]
    assert "upload it as CSV" in result.errors[0].reason


def test_the_2017_layout_takes_label_or_sentiment_label_but_not_both():
    data = b"sentence_id\tsentence\tlabel\tsentiment_label\nu1_a\tI love it!\t1\t1\n"
    with pytest.raises(FileFormatError, match="both label and sentiment_label"):
        read_pair_file(data, filename="b.tsv")


def test_the_pairs_layout_in_tsv_still_reads_quoted_fields(cast):
    # Only the 2017 layout is read without quoting: the pairs layout keeps CSV's rules.
    data = csv_bytes(GOOD_PAIRS, delimiter="\t")
    assert b'"Russell is ""terrific""' in data
    assert stored(upload(cast, data, "p.tsv")) == STORED


# --- JSON pair sets name no field they do not know --------------------------------------


def test_an_unknown_field_of_json_lines_is_refused_naming_it_as_a_field():
    data = b'{"original_id": "s1", "variant_text": "a", "variant_label": "b", "varient": 1}\n'
    with pytest.raises(FileFormatError, match=re.escape("unknown field(s) 'varient'")):
        read_pair_file(data, filename="p.jsonl")
