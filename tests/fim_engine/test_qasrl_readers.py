"""The QA-SRL readers: both formats into one record type, every error kind with its line, and
the real wiki1 files with the counts their PROVENANCE.md states."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fim_engine.qasrl import (
    AnswerNotFoundError,
    CountMismatchError,
    FieldCountError,
    MalformedFieldError,
    QasrlReading,
    TokenIndexError,
    locate_answer,
    locate_span,
    predicate_case,
    read_qa,
    read_qasrl,
    read_tsv,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "qasrl"
QASRL_DIR = Path(os.environ.get("BIBI_QASRL_DIR", ROOT.parent / "shared" / "data" / "qasrl"))


def test_it_reads_the_qa_block_format_into_records_with_character_offsets() -> None:
    reading = read_qa(FIXTURES / "sample.qa")
    assert reading.errors == []
    assert [r.record_id for r in reading.records] == ["S1.0.0", "S1.0.1", "S1.1.0", "S2.0.0"]
    first = reading.records[0]
    assert first.sentence_id == "S1"
    assert first.text.startswith("UCD finished the 2006 championship")
    assert (first.predicate_index, first.predicate) == (1, "finished")
    assert first.question_slots == ("who", "", "", "finished", "something", "", "")
    assert first.question == "who finished something?"
    assert [(a.start, a.end, a.text) for a in first.answers] == [(0, 3, "UCD")]
    assert first.line == 4


def test_it_keeps_every_answer_and_maps_case_folded_answers_to_the_sentence() -> None:
    beat = read_qa(FIXTURES / "sample.qa").records[2]
    # "ucd" is found ignoring case; its text is the sentence's own characters.
    assert [(a.start, a.text) for a in beat.answers] == [(0, "UCD"), (0, "UCD")]


def test_it_takes_the_occurrence_nearest_the_predicate() -> None:
    said = read_qa(FIXTURES / "sample.qa").records[3]
    text = said.text
    assert [a.text for a in said.answers] == ["that he would return", "he would return"]
    # "he would return" occurs once; "he" alone twice: the one after "said" (index 1) is nearer.
    assert said.answers[1].start == text.index("he would")
    tokens = ("he", "said", "he", "left")
    assert locate_answer(tokens, "he", 3) == (8, 10)
    # Both equally near "said": ambiguous, so not placed at all (issue 33, point 3).
    assert locate_answer(tokens, "he", 1) is None


def test_it_reads_the_2017_tsv_format_and_rebuilds_the_sentence() -> None:
    reading = read_tsv(FIXTURES / "sample.tsv")
    assert reading.errors == []
    beat, finish, following, oxygenate = reading.records
    assert beat.record_id == "S1.1.0" and beat.sentence_id == "S1"
    # The TSV's capitals only mark the predicate: the sentence's case is restored.
    assert beat.tokens[beat.predicate_index] == beat.predicate == "beating"
    assert beat.question == "who beat someone?"
    assert [a.text for a in finish.answers] == [
        "the 2006 championship",
        "the 2006 championship as Dublin champions",
    ]
    # A sentence-initial predicate is capitalised; the answer that holds it is found.
    assert following.predicate_index == 0
    assert [(a.start, a.text) for a in following.answers] == [(0, "Following his death")]
    # "~" joins the words of one slot.
    assert oxygenate.question_slots[3] == "be oxygenated"
    assert oxygenate.question == "what might be oxygenated?"


def test_both_formats_give_the_same_record_for_the_same_question() -> None:
    from_qa = {r.record_id: r for r in read_qa(FIXTURES / "sample.qa").records}
    from_tsv = {r.record_id: r for r in read_tsv(FIXTURES / "sample.tsv").records}
    for key in ("S1.1.0", "S1.0.1"):
        qa, tsv = from_qa[key], from_tsv[key]
        assert qa.question == tsv.question and qa.question_slots == tsv.question_slots
        assert qa.text == tsv.text
        assert qa.predicate_index == tsv.predicate_index
        assert {a.start for a in tsv.answers} <= {a.start for a in qa.answers}


def _kinds(reading: QasrlReading) -> list[tuple[type, int]]:
    return [(type(error), error.line) for error in reading.errors]


def test_every_error_kind_of_the_qa_format_names_its_line() -> None:
    reading = read_qa(FIXTURES / "bad.qa")
    assert _kinds(reading) == [
        (FieldCountError, 1),
        (CountMismatchError, 8),
        (TokenIndexError, 11),
        (AnswerNotFoundError, 17),
        (CountMismatchError, 22),
        (MalformedFieldError, 27),
        (FieldCountError, 33),
        (TokenIndexError, 37),
    ]
    messages = [str(error) for error in reading.errors]
    assert messages[0] == "bad.qa, line 1: a sentence header needs 2 TAB-separated fields, found 3"
    assert "declares 2 predicates, found 1" in messages[1]
    assert "predicate index 40 is out of range: the sentence has 6 tokens" in messages[2]
    assert "answer 'the players' is not a span of the sentence" in messages[3]
    assert "declares 2 questions, found 1" in messages[4]
    assert "'many'" in messages[5]
    assert "token 3 is 'the', not the predicate 'won'" in messages[7]
    # Only the block with an unmatched answer yields records; the answer is kept as text.
    assert [r.record_id for r in reading.records] == ["B4.0.0", "B4.0.1"]
    assert reading.records[0].unmatched_answers == ("the players",)
    assert [a.text for a in reading.records[0].answers] == ["The team"]
    with pytest.raises(FieldCountError, match="line 1"):
        reading.raise_first()


def test_every_error_kind_of_the_tsv_format_names_its_line() -> None:
    reading = read_tsv(FIXTURES / "bad.tsv")
    assert _kinds(reading) == [
        (FieldCountError, 2),
        (MalformedFieldError, 3),
        (MalformedFieldError, 4),
        (AnswerNotFoundError, 5),
    ]
    assert "a row needs 6 TAB-separated fields, found 5" in str(reading.errors[0])
    assert "id 'T2-0-0'" in str(reading.errors[1])
    assert "seven space-separated slots" in str(reading.errors[2])
    assert [r.record_id for r in reading.records] == ["T4.0.0", "T5.0.0"]


def test_read_qasrl_picks_the_reader_by_suffix() -> None:
    assert read_qasrl(FIXTURES / "sample.tsv").records == read_tsv(FIXTURES / "sample.tsv").records
    assert read_qasrl(FIXTURES / "sample.qa").records == read_qa(FIXTURES / "sample.qa").records


def test_a_tsv_without_its_header_is_refused() -> None:
    reading = read_tsv(["id\tprefix\tpredicate", "x\ty\tz"])
    assert _kinds(reading) == [(MalformedFieldError, 1)]
    assert reading.records == []


def test_the_readers_import_no_torch() -> None:
    code = "import fim_engine.qasrl, sys; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "False"


needs_data = pytest.mark.skipif(
    not (QASRL_DIR / "wiki1.dev.qa").exists(),
    reason=f"the shared QA-SRL data is not at {QASRL_DIR} (set BIBI_QASRL_DIR)",
)


@needs_data
@pytest.mark.parametrize(
    ("name", "sentences", "predicates", "questions", "unmatched"),
    # Unmatched: the answers that are not whole-word spans (curly quotes, reordered words,
    # and, since answers are placed by whole words, those cut inside a word).
    [("wiki1.train.qa", 1174, 2674, 6414, 31), ("wiki1.dev.qa", 392, 895, 2183, 6)],
)
def test_it_reads_the_real_qa_files_with_the_stated_counts(
    name: str, sentences: int, predicates: int, questions: int, unmatched: int
) -> None:
    reading = read_qa(QASRL_DIR / name)
    records = reading.records
    assert len(records) == questions
    assert len({r.sentence_id for r in records}) == sentences
    assert len({(r.sentence_id, r.predicate_index) for r in records}) == predicates
    # The only errors are the few answers that are not spans (curly quotes for ``…'', words
    # reordered); each is kept as text on its record.
    assert {type(e) for e in reading.errors} == {AnswerNotFoundError}
    assert len(reading.errors) == sum(len(r.unmatched_answers) for r in records) == unmatched
    assert all(a.text == r.text[a.start : a.end] for r in records for a in r.answers)


@needs_data
@pytest.mark.parametrize(("name", "rows"), [("wiki1.train.tsv", 5148), ("wiki1.dev.tsv", 1719)])
def test_it_reads_the_real_tsv_files_and_agrees_with_the_qa_files(name: str, rows: int) -> None:
    reading = read_tsv(QASRL_DIR / name)
    assert len(reading.records) == rows
    assert {type(e) for e in reading.errors} == {AnswerNotFoundError}
    blocks = {r.record_id: r for r in read_qa(QASRL_DIR / name.replace(".tsv", ".qa")).records}
    for record in reading.records:
        source = blocks[record.record_id]
        assert record.question == source.question
        assert record.text.lower() == source.text.lower()
    # The predicate's case is restored (predicate_case): the TSV's sentences are the .qa's
    # but for the few verbs inside titles (`` I Pity the Fool '').
    differ = {r.text for r in reading.records if r.text != blocks[r.record_id].text}
    assert len(differ) <= {"wiki1.train.tsv": 20, "wiki1.dev.tsv": 5}[name]


def test_the_released_field_8_variants_are_read_and_every_bad_line_is_named() -> None:
    # Issue 33, point 1: question lines whose eighth field is '_' (as a released file has
    # them) are read; a line that cannot be read costs that question only, so every problem
    # of a block is listed at once, not the first per block.
    reading = read_qa(FIXTURES / "released_variants.qa")
    assert _kinds(reading) == [
        (AnswerNotFoundError, 7),
        (AnswerNotFoundError, 13),
        (AnswerNotFoundError, 14),
        (MalformedFieldError, 15),
    ]
    assert [r.record_id for r in reading.records] == [
        "R1.0.0",
        "R1.0.1",
        "R1.1.0",
        "R1.1.1",
        "R2.0.0",
        "R2.0.1",
        "R3.0.0",
    ]
    two_bad = ["S\t1", "A won it .", "1\twon\t3"] + [
        "\t".join(["who", "_", "_", "won", "something", "_", "_", mark, "A"])
        for mark in ("!", "_", "x")
    ]
    assert _kinds(read_qa(two_bad)) == [(MalformedFieldError, 4), (MalformedFieldError, 6)]
    assert [r.record_id for r in read_qa(two_bad).records] == ["S.0.1"]


def test_answers_are_placed_by_whole_words_nearest_the_predicate() -> None:
    records = {r.record_id: r for r in read_qa(FIXTURES / "released_variants.qa").records}
    # 'Augustu' and 'ADB Mouse I' are inside words: not spans, not placed.
    assert records["R1.1.0"].unmatched_answers == ("Augustu",)
    assert records["R2.0.0"].unmatched_answers == ("ADB Mouse I",)
    # 'Bhanu Athaiya' twice: the occurrence nearest each predicate.
    assert records["R1.0.0"].answers[0].start == 0
    assert records["R1.1.1"].answers[0].start == records["R1.1.1"].text.rindex("Bhanu")
    # 'he' is a word of "Then he founded", not the letters inside "Then".
    assert records["R3.0.0"].answers[0].start == 5
    assert locate_span("Then he FOUNDED it", "he") == ((5, 7), "")
    assert locate_span("he said he left", "he")[0] is None


def test_the_tsv_predicate_gets_the_sentence_case_back() -> None:
    assert predicate_case("FOUNDED", previous="had") == "founded"
    assert predicate_case("FOLLOWING", previous="") == "Following"
    assert predicate_case("LEAVE", previous="``") == "Leave"
    assert predicate_case("LOST", previous="Ten", answers="the Ten Lost Tribes") == "Lost"
    assert predicate_case("founded", previous="had") == "founded"
