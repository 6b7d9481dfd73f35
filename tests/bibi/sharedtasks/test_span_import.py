"""Importing span examples (QA-SRL): both QA-SRL formats and the platform's own layouts, every
answer kept, every bad line named, nothing stored from a refused file."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from bibi.sharedtasks.importing import ExamplesImportRejected, examples_import
from bibi.sharedtasks.models import Dataset, Example

from ...conftest import REPO_ROOT
from ..spancast import build_span_cast

pytestmark = pytest.mark.django_db

QASRL = REPO_ROOT / "fixtures" / "qasrl"
SHARED_QASRL = REPO_ROOT.parent / "shared" / "data" / "qasrl"


@pytest.fixture
def cast(db):
    return build_span_cast(current_phase="build")


def import_file(cast, name: str, data: bytes | None = None, split: str = "train", **options):
    return examples_import(
        shared_task=cast.shared_task,
        split=split,
        actor=cast.organizer,
        data=data if data is not None else (QASRL / name).read_bytes(),
        filename=name,
        **options,
    )


def train_examples(cast) -> list[Example]:
    return list(Dataset.objects.get(shared_task=cast.shared_task, split="train").examples.all())


def test_it_imports_the_qa_block_format_with_every_answer(cast):
    report = import_file(cast, "sample.qa")
    assert (report.created, report.file_format) == (4, "qa")
    beat = next(e for e in train_examples(cast) if e.question == "who beat someone?")
    assert (beat.external_id, beat.predicate_index, beat.predicate, beat.label) == (
        "S1.1.0",
        10,
        "beating",
        "",
    )
    # "UCD ### ucd": the case-folded answer locates the same span, kept once.
    assert beat.answers == [{"start": 0, "end": 3, "text": "UCD"}]
    said = next(e for e in train_examples(cast) if e.external_id == "S2.0.0")
    assert [a["text"] for a in said.answers] == ["that he would return", "he would return"]
    for example in train_examples(cast):
        for answer in example.answers:
            assert example.text[answer["start"] : answer["end"]] == answer["text"]


def test_it_imports_the_2017_tsv_told_by_its_header(cast):
    report = import_file(cast, "sample.tsv")
    assert (report.created, report.file_format) == (4, "qasrl_tsv")
    finish = next(e for e in train_examples(cast) if e.external_id == "S1.0.1")
    assert [a["text"] for a in finish.answers] == [
        "the 2006 championship",
        "the 2006 championship as Dublin champions",
    ]
    # The TSV marks the predicate in capitals; the sentence's case is restored (issue 33),
    # and the import says so.
    assert finish.predicate == "finished"
    assert "finished the 2006 championship" in finish.text
    assert len(report.restored_case) == 4
    assert "4 predicates written in capitals by the TSV were given the sentence's case back" in (
        report.summary_text()
    )


def test_it_imports_json_lines_with_texts_and_offsets(cast):
    report = import_file(cast, "items.jsonl")
    assert (report.created, report.file_format) == (3, "jsonl")
    beaten = next(e for e in train_examples(cast) if e.external_id == "j2")
    assert beaten.answers == [{"start": 68, "end": 79, "text": "St Vincents"}]
    assert beaten.predicate_index == 10


def test_it_imports_csv_with_answers_joined(cast):
    report = import_file(cast, "items.csv")
    assert report.created == 2
    said = next(e for e in train_examples(cast) if e.external_id == "c2")
    assert len(said.answers) == 2


def test_it_refuses_every_bad_line_of_a_qa_file_and_stores_nothing(cast):
    with pytest.raises(ExamplesImportRejected) as raised:
        import_file(cast, "bad.qa")
    reasons = " | ".join(str(error) for error in raised.value.errors)
    assert "is not a span of the sentence" in reasons
    assert raised.value.error_count >= 7
    assert not Example.objects.filter(dataset__shared_task=cast.shared_task, dataset__split="train")


def test_it_names_the_lines_of_a_bad_csv(cast):
    rows = (
        "id,text,question,answers\n"
        "a,UCD won the final .,who won?,Dublin\n"
        "b,UCD won the final .,,UCD\n"
        'c,UCD won the final .,who won?,"[{""start"": 4, ""end"": 2}]"\n'
        "d,UCD won the final .,who won?,UCD\n"
        "d,UCD won the final .,what was won?,the final\n"
    )
    with pytest.raises(ExamplesImportRejected) as raised:
        import_file(cast, "rows.csv", rows.encode())
    errors = [(error.line, error.reason) for error in raised.value.errors]
    assert errors == [
        (2, "the answer 'Dublin' is not a span of the sentence"),
        (3, "the question is empty"),
        (4, "the answer offsets 4-2 are not a span of the sentence (0 <= start < end <= 19)"),
        (6, "the id 'd' is used twice (first on line 5)"),
    ]


def test_it_refuses_a_csv_without_the_answers_column(cast):
    with pytest.raises(ExamplesImportRejected) as raised:
        import_file(cast, "rows.csv", b"id,text,question\na,UCD won .,who won?\n")
    assert "has no 'answers' field" in str(raised.value.errors[0])


def test_the_shared_dev_data_imports_when_unmatched_answers_are_dropped(cast):
    data = (SHARED_QASRL / "wiki1.dev.qa").read_bytes()
    with pytest.raises(ExamplesImportRejected) as raised:
        import_file(cast, "wiki1.dev.qa", data)
    # Four answers are not spans at all (curly quotes, reordered words), two are cut inside a
    # word ('he Philippine Autonomy Act' of "the"): answers are placed by whole words.
    assert raised.value.error_count == 6
    report = import_file(cast, "wiki1.dev.qa", data, drop_unmatched=True)
    # Five of the six unmatched answers were their item's only answer.
    assert (report.created, len(report.dropped_answers), len(report.dropped_items)) == (2178, 6, 5)
    assert "5 items left without an answer" in report.summary_text()


def test_the_2017_tsv_repeats_rows_which_are_skipped_and_reported(cast):
    data = (SHARED_QASRL / "wiki1.dev.tsv").read_bytes()
    report = import_file(cast, "wiki1.dev.tsv", data, drop_unmatched=True)
    assert report.created + len(report.repeated_rows) + len(report.dropped_items) == 1719
    assert report.repeated_rows
    assert len({e.external_id for e in train_examples(cast)}) == report.created


def test_the_blind_dev_set_takes_span_items(cast):
    report = import_file(cast, "items.jsonl", split="blind_dev")
    assert report.created == 3
    assert cast.blind_dev.examples.count() == 2 + 3


def test_the_blind_dev_set_is_frozen_once_the_break_phase_has_started(db):
    breaking = build_span_cast(current_phase="break")
    with pytest.raises(ValidationError, match="break phase"):
        import_file(breaking, "items.jsonl", split="blind_dev")
    assert breaking.blind_dev.examples.count() == 2
