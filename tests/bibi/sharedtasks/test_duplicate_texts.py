"""One text, one label: conflicting duplicates are refused, exact ones reported, lookup is clear."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bibi.files import RowError
from bibi.sharedtasks.importing import DuplicateText, ExamplesImportRejected, examples_import
from bibi.sharedtasks.models import AuditLogEntry
from bibi.tasktypes import TEXT_CLASSIFICATION
from bibi.tasktypes.rules import PairInput, PairRules, StarterExample, StarterIndex
from bibi.texts import normalize_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(cast_building):
    """Imports into the starter set happen before the break phase starts."""
    return cast_building


def import_starter(cast, text: str):
    return examples_import(
        shared_task=cast.shared_task,
        split="starter",
        actor=cast.organizer,
        data=text.encode("utf-8"),
        filename="starter.tsv",
    )


def rejection(cast, text: str) -> ExamplesImportRejected:
    with pytest.raises(ExamplesImportRejected) as raised:
        import_starter(cast, text)
    return raised.value


def test_every_conflicting_duplicate_is_listed_with_both_lines(cast):
    rejected = rejection(
        cast,
        "id\ttext\tlabel\n"
        "a\tA quiet triumph .\tpositive\n"
        "b\tA loud mess .\tnegative\n"
        "c\tA quiet triumph .\tnegative\n"
        "d\tA loud mess .\tpositive\n"
        "e\tA quiet triumph .\tnegative\n",
    )
    assert rejected.errors == [
        RowError(
            4,
            "the same text is on line 2 with the label 'positive', here 'negative': "
            "one text has one label",
        ),
        RowError(
            5,
            "the same text is on line 3 with the label 'negative', here 'positive': "
            "one text has one label",
        ),
        RowError(
            6,
            "the same text is on line 2 with the label 'positive', here 'negative': "
            "one text has one label",
        ),
    ]
    assert cast.starter.examples.count() == 4


def test_a_text_already_in_the_dataset_with_another_label_is_refused(cast):
    rejected = rejection(cast, "id\ttext\tlabel\nn1\tI love this movie!\tnegative\n")
    assert rejected.errors == [
        RowError(
            2,
            "the text is already in the starter dataset as example 's1' with the label "
            "'positive', here 'negative': one text has one label",
        ),
    ]


def test_texts_are_compared_as_the_pair_checks_compare_them(cast):
    # Decomposed accents, doubled and edge spaces, a tab: the same text once normalized.
    first, second = "Un café  réussi .", " Un cafe\u0301\tréussi . "
    assert normalize_text(first) == normalize_text(second)
    rejected = rejection(
        cast, f'id\ttext\tlabel\nn1\t{first}\tpositive\nn2\t"{second}"\tnegative\n'
    )
    assert [error.line for error in rejected.errors] == [3]


def test_the_same_text_in_another_split_is_no_conflict(cast):
    data = b"id,text,label\nn1,I love this movie!,negative\n"
    report = examples_import(
        shared_task=cast.shared_task,
        split="train",
        actor=cast.organizer,
        data=data,
        filename="train.csv",
    )
    assert (report.created, report.duplicates) == (1, ())


def test_exact_duplicates_are_imported_and_reported_with_their_lines(cast):
    report = import_starter(
        cast,
        "id\ttext\tlabel\n"
        "n1\tA quiet triumph .\tpositive\n"
        "n2\tA quiet  triumph .\tpositive\n"
        "n3\tI love this movie!\tpositive\n",
    )
    assert report.created == 3
    assert report.duplicates == (
        DuplicateText(line=3, same_as_id="n1", same_as_line=2),
        DuplicateText(line=4, same_as_id="s1", same_as_line=None),
    )
    assert report.duplicates_text() == (
        "2 rows repeat the text and label of an earlier example and were imported all the "
        "same: line 3 (as line 2), line 4 (as example 's1')."
    )
    assert AuditLogEntry.objects.get(action="examples.import").details["exact_duplicates"] == 2


def test_the_api_reports_exact_duplicates_with_a_count_and_their_lines(cast):
    data = b"id\ttext\tlabel\nn1\tI love this movie!\tpositive\nn2\tnew .\tnegative\n"
    response = cast.client("organizer").post(
        "/api/v1/shared-tasks/sst/datasets/starter/import/",
        {"file": SimpleUploadedFile("more.tsv", data)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["created"], body["duplicate_count"]) == (2, 1)
    assert body["duplicates"] == [{"line": 2, "same_as_id": "s1", "same_as_line": None}]


def test_the_api_lists_every_conflict_in_the_refused_file_envelope(cast):
    data = b"id\ttext\tlabel\nn1\tI love this movie!\tnegative\nn2\tI love this movie!\tnegative\n"
    response = cast.client("organizer").post(
        "/api/v1/shared-tasks/sst/datasets/starter/import/",
        {"file": SimpleUploadedFile("more.tsv", data)},
        format="multipart",
    )
    assert response.status_code == 400
    assert [error["line"] for error in response.json()["errors"]] == [2, 3]


# --- Looking an original up by its text ---------------------------------------------------

RULES = PairRules(labels=("negative", "positive"), strategy_tags=("other",))


def by_text(index: StarterIndex, text: str) -> list[str]:
    pair = PairInput(
        row=2, original_text=text, variant_text="A quiet failure .", variant_label="negative"
    )
    return TEXT_CLASSIFICATION.check_pair(pair, starter=index, rules=RULES)[1]


def test_exact_duplicates_resolve_to_the_first_in_import_order():
    index = TEXT_CLASSIFICATION.starter_index(
        [
            StarterExample(id=1, external_id="a", text="A quiet triumph .", label="positive"),
            StarterExample(id=2, external_id="b", text="A quiet  triumph .", label="positive"),
        ]
    )
    assert index.by_item[("A quiet triumph .",)].external_id == "a"
    assert index.conflicting == {}
    assert by_text(index, "A quiet triumph .") == []


def test_a_text_stored_with_two_labels_is_never_picked_by_text():
    # Only a starter set imported before conflicts were refused can hold one.
    index = TEXT_CLASSIFICATION.starter_index(
        [
            StarterExample(id=1, external_id="a", text="A quiet triumph .", label="positive"),
            StarterExample(id=2, external_id="b", text="A quiet triumph .", label="negative"),
        ]
    )
    assert ("A quiet triumph .",) not in index.by_item
    assert by_text(index, "A quiet triumph .") == [
        "the original text is in the starter set with different labels ('a', 'b'): "
        "give the original's id"
    ]
