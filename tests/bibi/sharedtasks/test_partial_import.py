"""Issue 33, point 1: every dataset import (label, sentence-pair and span types) lists every
problem at once, and an opt-in partial import stores the rows that pass and returns every
refused line (as pair sets do); the QA-SRL reader takes the released variants of field 8."""

from __future__ import annotations

import pytest

from bibi.sharedtasks.importing import ExamplesImportRejected, examples_import
from bibi.sharedtasks.models import AuditLogEntry, Dataset

from ...conftest import REPO_ROOT
from ..nlicast import build_nli_cast
from ..spancast import build_span_cast

pytestmark = pytest.mark.django_db

RELEASED = REPO_ROOT / "fixtures" / "qasrl" / "released_variants.qa"


def run_import(cast, name: str, data: bytes, split: str = "train", **options):
    return examples_import(
        shared_task=cast.shared_task,
        split=split,
        actor=cast.organizer,
        data=data,
        filename=name,
        **options,
    )


def ids(cast, split: str = "train") -> list[str]:
    dataset = Dataset.objects.get(shared_task=cast.shared_task, split=split)
    return list(dataset.examples.order_by("position").values_list("external_id", flat=True))


@pytest.fixture
def span_cast(db):
    return build_span_cast(current_phase="build")


def test_a_released_style_qa_file_names_every_refused_line_at_once(span_cast):
    # Before: the '_' eighth fields refused a block each, only the first line per block named.
    with pytest.raises(ExamplesImportRejected) as raised:
        run_import(span_cast, "wiki2.qa", RELEASED.read_bytes())
    assert [error.line for error in raised.value.errors] == [7, 13, 14, 15]
    with pytest.raises(ExamplesImportRejected) as raised:
        run_import(span_cast, "wiki2.qa", RELEASED.read_bytes(), drop_unmatched=True)
    assert [(e.line, e.reason) for e in raised.value.errors] == [
        (15, "the eighth field must be '?' (or '_'), got '!'")
    ]
    assert ids(span_cast) == []


def test_a_partial_import_stores_the_items_that_pass_and_returns_the_refused_lines(span_cast):
    report = run_import(
        span_cast, "wiki2.qa", RELEASED.read_bytes(), drop_unmatched=True, partial=True
    )
    # Seven questions read; the answer '_' leaves R2.0.1 without one; line 15 is refused.
    assert report.created == 6
    assert ids(span_cast) == ["R1.0.0", "R1.0.1", "R1.1.0", "R1.1.1", "R2.0.0", "R3.0.0"]
    assert report.refused_lines() == [15]
    # The refused lines come back as a file, each with its reason and content.
    assert report.refused_file.splitlines()[0] == "line,rule,setting,reason,content"
    assert report.refused_file.splitlines()[1].startswith('15,,,"the eighth field must be')
    assert report.refused_file.splitlines()[1].endswith("\t!\tthe ADB Mouse II")
    assert report.dropped_items == (14,)
    assert "Refused (not stored): 1 line (15)." in report.summary_text()
    audit = AuditLogEntry.objects.get(action="examples.import")
    assert audit.details["refused_lines"] == 1


def test_a_partial_import_without_dropping_refuses_items_with_unmatched_answers(span_cast):
    report = run_import(span_cast, "wiki2.qa", RELEASED.read_bytes(), partial=True)
    assert ids(span_cast) == ["R1.0.0", "R1.0.1", "R1.1.1", "R3.0.0"]
    assert report.refused_lines() == [7, 13, 14, 15]


def test_the_span_import_api_takes_the_partial_opt_in(span_cast):
    answer = span_cast.client("organizer").post(
        "/api/v1/shared-tasks/qasrl/datasets/train/import/",
        {"file": RELEASED.open("rb"), "partial": "true", "drop_unmatched": "true"},
    )
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["created"], body["refused_count"]) == (6, 1)
    assert "the ADB Mouse II" in body["refused_file"]
    assert body["refused"] == [
        {"line": 15, "reason": "the eighth field must be '?' (or '_'), got '!'"}
    ]


LABEL_ROWS = "\n".join(
    [
        "id,text,label",
        "x1,fine film,positive",  # 2
        "x2,   ,negative",  # 3
        "x3,odd film,neutral",  # 4
        "x4,dull film,negative",  # 5
        "x1,same id,positive",  # 6
    ]
)


def test_a_label_import_lists_every_problem_and_takes_the_partial_opt_in(cast_building):
    cast = cast_building
    Dataset.objects.filter(shared_task=cast.shared_task, split="train").delete()
    with pytest.raises(ExamplesImportRejected) as raised:
        run_import(cast, "rows.csv", LABEL_ROWS.encode())
    assert [error.line for error in raised.value.errors] == [3, 4, 6]
    report = run_import(cast, "rows.csv", LABEL_ROWS.encode(), partial=True)
    assert report.created == 2
    assert ids(cast) == ["x1", "x4"]
    assert report.refused_lines() == [3, 4, 6]
    # As a partial pair set's: the header first, so the fixed file uploads again.
    assert [row.split(",")[0] for row in report.refused_file.splitlines()] == [
        "line",
        "1",
        "3",
        "4",
        "6",
    ]


def test_a_sentence_pair_import_takes_the_partial_opt_in(db):
    cast = build_nli_cast(current_phase="build")
    rows = "\n".join(
        [
            "id,premise,hypothesis,label",
            "t1,the film is fun,it is good,entailment",  # 2
            "t2,the film is fun,,entailment",  # 3
            "t3,a film,it is a movie,maybe",  # 4
            "t4,a dull film,it is fun,contradiction",  # 5
        ]
    )
    with pytest.raises(ExamplesImportRejected) as raised:
        run_import(cast, "nli.csv", rows.encode())
    assert [error.line for error in raised.value.errors] == [3, 4]
    report = run_import(cast, "nli.csv", rows.encode(), partial=True)
    assert ids(cast) == ["t1", "t4"]
    assert report.refused_lines() == [3, 4]


def test_a_partial_import_with_nothing_valid_is_still_refused(span_cast):
    with pytest.raises(ExamplesImportRejected):
        run_import(
            span_cast,
            "rows.csv",
            b"id,text,question,answers\na,UCD won .,who won?,X\n",
            partial=True,
        )
