"""Reading uploaded files: encodings, formats and line numbers, without a database."""

from __future__ import annotations

import json
import unicodedata

import pytest

from bibi.files import (
    DecodedText,
    FileFormatError,
    JsonRefused,
    Row,
    RowError,
    RowErrors,
    decode_upload,
    detect_format,
    json_parse,
    read_rows,
)

from .sharedtasks.conftest import FIXTURES, REVIEWS, SST2_DEV

# One quirk per sentence: each would be misread by the wrong legacy encoding.
TRICKY_SENTENCES = [
    "don’t",
    "a café",
    "Björk sings",
    "Élodie smiles",
    "ÉCOLE DES FEMMES",
    "über-cool",
    "hit – miss",
    "1990–2000",
    "well…",
    "wait … what",
    "this—that",
    "“great”",
    "‘odd’ choice",
    "a thriller à la Hitchcock",
    "vis-à-vis",
    "mañana",
]


def texts(rows: list[Row]) -> list[str]:
    return [row.fields["text"] for row in rows]


class TestDecoding:
    def test_it_reads_utf8(self):
        decoded = decode_upload("\n".join(REVIEWS).encode("utf-8"))
        assert decoded == DecodedText(text="\n".join(REVIEWS), encoding="utf-8")

    def test_it_drops_a_utf8_byte_order_mark(self):
        decoded = decode_upload(b"\xef\xbb\xbf" + "id,text\n1,Amélie\n".encode())
        assert decoded.text == "id,text\n1,Amélie\n"
        assert decoded.encoding == "utf-8"

    @pytest.mark.parametrize("encoding", ["cp1252", "mac_roman"])
    def test_it_tells_cp1252_from_mac_roman_on_movie_reviews(self, encoding):
        decoded = decode_upload("\n".join(REVIEWS).encode(encoding))
        assert decoded.encoding == encoding
        assert decoded.text == "\n".join(REVIEWS)

    @pytest.mark.parametrize("encoding", ["cp1252", "mac_roman"])
    @pytest.mark.parametrize("sentence", TRICKY_SENTENCES)
    def test_it_tells_the_encodings_apart_on_a_single_sentence(self, sentence, encoding):
        decoded = decode_upload(f"the film {sentence} is good".encode(encoding))
        assert decoded.encoding == encoding
        assert decoded.text == f"the film {sentence} is good"

    def test_it_reads_mac_roman_when_cp1252_cannot_decode_the_bytes(self):
        # è is 0x8F in Mac Roman, a byte cp1252 leaves undefined.
        assert decode_upload("crème".encode("mac_roman")).encoding == "mac_roman"

    def test_it_normalizes_text_to_nfc(self):
        # "e" + U+0301 looks like "é" but compares unequal: pairs would not match originals.
        decomposed = unicodedata.normalize("NFD", "Amélie’s café")
        decoded = decode_upload(decomposed.encode("utf-8"))
        assert decoded.text == unicodedata.normalize("NFC", "Amélie’s café")
        assert len(decoded.text) == len("Amélie’s café")

    def test_it_refuses_a_mostly_utf8_file_with_broken_bytes_and_names_the_line(self):
        data = ("naïve café “great” it’s\n" * 5).encode("utf-8") + "pasted é\n".encode("cp1252")
        with pytest.raises(FileFormatError) as raised:
            decode_upload(data)
        assert raised.value.line == 6
        assert "UTF-8" in str(raised.value)

    def test_it_refuses_utf16_with_a_clear_reason(self):
        with pytest.raises(FileFormatError, match="UTF-16"):
            decode_upload("id,text\n".encode("utf-16"))

    def test_it_refuses_a_spreadsheet_passed_off_as_text(self):
        with pytest.raises(FileFormatError, match="not text"):
            decode_upload(b"PK\x03\x04\x14\x00\x00\x00")

    @pytest.mark.parametrize(
        ("name", "encoding"),
        [
            ("reviews.utf8.csv", "utf-8"),
            ("reviews.cp1252.csv", "cp1252"),
            ("reviews.macroman.csv", "mac_roman"),
        ],
    )
    def test_the_fixture_files_decode_to_the_same_reviews(self, name, encoding):
        decoded = decode_upload((FIXTURES / name).read_bytes())
        assert decoded.encoding == encoding
        assert texts(read_rows(decoded.text, file_format="csv")) == REVIEWS


class TestDetectFormat:
    @pytest.mark.parametrize(
        ("filename", "expected"),
        [
            ("reviews.csv", "csv"),
            ("REVIEWS.CSV", "csv"),
            ("reviews.tsv", "tsv"),
            ("reviews.jsonl", "jsonl"),
            ("reviews.ndjson", "jsonl"),
            ("reviews.txt", "sst2"),
            ("stsa.binary.dev", "sst2"),
            ("stsa.binary.train", "sst2"),
            ("stsa.binary.test", "sst2"),
            ("uploads/2017/starter.csv", "csv"),
        ],
    )
    def test_it_tells_the_format_from_the_extension(self, filename, expected):
        assert detect_format(filename) == expected

    def test_a_requested_format_wins_over_the_extension(self):
        assert detect_format("starter.txt", "TSV") == "tsv"

    def test_it_refuses_an_unknown_requested_format(self):
        with pytest.raises(FileFormatError, match="'xlsx' is not a file format"):
            detect_format("starter.csv", "xlsx")

    def test_it_refuses_an_unknown_extension_and_says_what_would_do(self):
        with pytest.raises(FileFormatError, match=r"\.csv, \.tsv"):
            detect_format("starter.xlsx")

    def test_it_points_a_json_document_to_json_lines(self):
        with pytest.raises(FileFormatError, match="JSON Lines"):
            detect_format("starter.json")


class TestCsvAndTsv:
    def test_it_numbers_rows_by_their_line_counting_the_header_as_line_one(self):
        rows = read_rows("id,text,label\ns1,good,positive\n\ns2,bad,negative\n", file_format="csv")
        assert rows == [
            Row(line=2, fields={"id": "s1", "text": "good", "label": "positive"}),
            Row(line=4, fields={"id": "s2", "text": "bad", "label": "negative"}),
        ]

    def test_a_quoted_field_may_hold_commas_quotes_and_line_breaks(self):
        text = 'id,text\ns1,"one, ""two""\nthree"\ns2,after\n'
        rows = read_rows(text, file_format="csv")
        assert rows[0] == Row(line=2, fields={"id": "s1", "text": 'one, "two"\nthree'})
        assert rows[1].line == 4

    def test_a_record_after_a_multiline_record_starts_on_its_own_line(self):
        text = 'id,text\r\ns1,"a\r\nb\r\nc"\r\ns2,d\r\n'
        assert [row.line for row in read_rows(text, file_format="csv")] == [2, 5]

    def test_it_reads_classic_mac_line_ends(self):
        rows = read_rows("id,text\rs1,a\rs2,b\r", file_format="csv")
        assert [(row.line, row.fields["id"]) for row in rows] == [(2, "s1"), (3, "s2")]

    def test_it_strips_spaces_around_header_names(self):
        rows = read_rows(" id , text \ns1,a\n", file_format="csv")
        assert rows[0].fields == {"id": "s1", "text": "a"}

    def test_a_row_with_the_wrong_number_of_fields_is_a_row_error(self):
        rows = read_rows(
            "id,text,label\ns1,good\ns2,bad,negative,extra\ns3,ok,positive\n", file_format="csv"
        )
        assert rows[0] == Row(line=2, fields={}, error="has 2 fields but the header has 3")
        assert rows[1].error == "has 4 fields but the header has 3"
        assert rows[2].error is None

    def test_a_quote_followed_by_more_text_is_a_row_error_not_a_silent_edit(self):
        rows = read_rows('id,text\ns1,"Terrific" says nobody\ns2,ok\n', file_format="csv")
        assert rows[0].line == 2
        assert "closing quote is followed by more text" in rows[0].error
        assert rows[1] == Row(line=3, fields={"id": "s2", "text": "ok"})

    def test_a_quote_that_is_never_closed_is_reported_where_it_opens(self):
        rows = read_rows('id,text\ns1,ok\ns2,"never closed\ns3,lost\n', file_format="csv")
        assert rows[1] == Row(
            line=3, fields={}, error="a quoted field starting on this line is never closed"
        )

    def test_tsv_keeps_quotes_inside_a_field(self):
        rows = read_rows('id\ttext\ns4\tRussell is "terrific" as coach.\n', file_format="tsv")
        assert rows[0].fields["text"] == 'Russell is "terrific" as coach.'

    def test_it_hints_at_the_other_delimiter(self):
        rows = read_rows("id,text,label\ns1\tgood\tpositive\n", file_format="csv")
        assert "separated by tabs" in rows[0].error

    def test_an_empty_file_cannot_be_read(self):
        with pytest.raises(FileFormatError, match="empty") as raised:
            read_rows("\n\n", file_format="csv")
        assert raised.value.line == 1

    def test_a_header_with_a_repeated_column_cannot_be_read(self):
        with pytest.raises(FileFormatError, match="names text more than once"):
            read_rows("id,text,text\n", file_format="csv")

    def test_a_header_with_an_empty_column_name_cannot_be_read(self):
        with pytest.raises(FileFormatError, match="empty column name"):
            read_rows("id,,label\n", file_format="csv")

    def test_the_tsv_fixture_has_the_reviews_and_signed_labels(self):
        rows = read_rows(
            decode_upload((FIXTURES / "reviews.tsv").read_bytes()).text, file_format="tsv"
        )
        assert texts(rows) == REVIEWS
        assert [row.fields["label"] for row in rows] == ["+1", "-1"] * 3


class TestJsonLines:
    def test_it_reads_one_object_per_line_and_skips_blank_lines(self):
        rows = read_rows(
            '{"id": "s1", "text": "good"}\n\n{"id": "s2", "text": "bad"}\n', file_format="jsonl"
        )
        assert rows == [
            Row(line=1, fields={"id": "s1", "text": "good"}),
            Row(line=3, fields={"id": "s2", "text": "bad"}),
        ]

    def test_it_turns_values_into_text_and_null_into_empty_text(self):
        line = json.dumps({"id": 7, "label": -1, "text": None, "gold": True, "score": 0.5})
        assert read_rows(line, file_format="jsonl")[0].fields == {
            "id": "7",
            "label": "-1",
            "text": "",
            "gold": "true",
            "score": "0.5",
        }

    def test_a_line_that_is_not_json_is_a_row_error_and_reading_goes_on(self):
        rows = read_rows('{"id": "s1"}\n{"id": "s2",\n{"id": "s3"}\n', file_format="jsonl")
        assert [row.line for row in rows] == [1, 2, 3]
        assert rows[1].error.startswith("is not valid JSON")
        assert rows[2].fields == {"id": "s3"}

    def test_a_line_that_is_json_but_not_an_object_is_a_row_error(self):
        rows = read_rows('["s1", "good"]\n', file_format="jsonl")
        assert rows == [
            Row(line=1, fields={}, error="is not a JSON object ({...}) of named fields")
        ]

    def test_a_line_separator_inside_a_string_does_not_end_the_line(self):
        rows = read_rows('{"text": "one\u2028two"}\n{"text": "three"}\n', file_format="jsonl")
        assert texts(rows) == ["one\u2028two", "three"]
        assert rows[1].line == 2

    def test_the_jsonl_fixture_has_the_reviews(self):
        rows = read_rows(
            (FIXTURES / "reviews.jsonl").read_text(encoding="utf-8"), file_format="jsonl"
        )
        assert texts(rows) == REVIEWS


class TestSst2Lines:
    def test_it_splits_the_label_from_the_sentence(self):
        rows = read_rows(
            "0 one long string of cliches .\n1 a gripping film .\n", file_format="sst2"
        )
        assert rows == [
            Row(line=1, fields={"label": "0", "text": "one long string of cliches ."}),
            Row(line=2, fields={"label": "1", "text": "a gripping film ."}),
        ]

    def test_a_label_without_a_sentence_is_a_row_error(self):
        rows = read_rows("0 fine\n1\n\n1 also fine\n", file_format="sst2")
        assert rows[1] == Row(line=2, fields={}, error="has a label but no sentence after it")
        assert rows[2].line == 4

    def test_it_reads_the_real_sst2_dev_file(self):
        decoded = decode_upload(SST2_DEV.read_bytes())
        rows = read_rows(decoded.text, file_format=detect_format(SST2_DEV.name))
        assert decoded.encoding == "utf-8"
        assert len(rows) == 872
        assert all(row.error is None for row in rows)
        assert {row.fields["label"] for row in rows} == {"0", "1"}
        assert rows[0] == Row(line=1, fields={"label": "0", "text": "one long string of cliches ."})


def test_a_row_error_reads_as_its_line_and_reason():
    assert str(RowError(line=3, reason="the text is empty")) == "line 3: the text is empty"
    assert str(RowError(line=0, reason="the file has no examples")) == "the file has no examples"


# --- JSON that cannot be stored, and huge lists of problems --------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            '{"id": "d1", "text": "a\\u0000b"}',
            '"text" holds U+0000 (a control character), which cannot be stored',
        ),
        (
            '{"id": "d1", "tags": ["ok", "\\ud83d"]}',
            '"tags[1]" holds U+D83D (a lone surrogate), which cannot be stored',
        ),
        (
            '{"\\udfff": "x"}',
            '"\\udfff" has a name that holds U+DFFF (a lone surrogate), which cannot be stored',
        ),
        (
            '{"id": ' + "[" * 5000 + "]" * 5000 + "}",
            "nests arrays or objects deeper than 32 levels",
        ),
        ('{"id": ' + "[" * 40 + "]" * 40 + "}", "nests arrays or objects deeper than 32 levels"),
        ('{"id": NaN}', "is not valid JSON: NaN is not a JSON number"),
    ],
)
def test_a_jsonl_line_that_cannot_be_stored_is_a_row_error(line, reason):
    rows = read_rows(f'{{"id": "d0"}}\n{line}\n{{"id": "d2"}}\n', file_format="jsonl")
    assert rows[1] == Row(line=2, fields={}, error=reason)
    assert [row.fields for row in (rows[0], rows[2])] == [{"id": "d0"}, {"id": "d2"}]


def test_json_refusals_name_every_string_at_fault_by_its_path():
    with pytest.raises(JsonRefused) as refused:
        json_parse(
            '{"pairs": [{"variant_text": "ok"}, {"variant_text": "x\\u0000"}], "a": "\\ud800"}'
        )
    assert refused.value.fields == {
        "a": ["holds U+D800 (a lone surrogate), which cannot be stored"],
        "pairs[1].variant_text": ["holds U+0000 (a control character), which cannot be stored"],
    }


def test_a_huge_number_of_problems_is_counted_but_only_what_is_shown_is_kept():
    import tracemalloc

    count = 20_000
    tracemalloc.start()
    problems = RowErrors(
        RowError(line, f"the id 'x{line}' is not one of the texts to predict")
        for line in range(count + 1, 1, -1)
    )
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # The errors themselves, kept in a list, would take about 5 MB; what is kept levels off
    # under 1 MB well before this count (tracing every allocation is slow: more tells no more).
    assert peak < 2 * 1024 * 1024
    assert len(problems) == count
    assert [error.line for error in problems.first] == list(range(2, 202))
    groups = problems.groups()
    assert len(groups) == 201
    assert groups[0].reason == RowErrors.OTHER
    assert groups[0].count == count - 200
