"""Importing examples: all or nothing, every bad row named, organizers only."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from bibi.files import RowError
from bibi.labelmaps import label_map_parse
from bibi.sharedtasks import services
from bibi.sharedtasks.importing import (
    BATCH_SIZE,
    ExamplesImportRejected,
    examples_import,
)
from bibi.sharedtasks.models import AuditLogEntry, Dataset, Example

from .conftest import FIXTURES, REVIEWS, SST2_DEV

pytestmark = pytest.mark.django_db


@pytest.fixture
def cast(cast_building):
    """Imports into every split happen before the break phase starts."""
    return cast_building


REVIEW_LABELS = ["positive", "negative"] * 3
BINARY = {"0": "negative", "1": "positive"}
SIGNED = {"-1": "negative", "+1": "positive"}


@pytest.fixture
def fresh(cast) -> Dataset:
    """The cast's task has no test split yet: import into an empty dataset named for it."""
    Dataset.objects.filter(shared_task=cast.shared_task, split="train").delete()
    return services.dataset_get_or_create(shared_task=cast.shared_task, split="train")


def import_csv(dataset: Dataset, actor, text: str, **options):
    return examples_import(
        shared_task=dataset.shared_task,
        split=dataset.split,
        actor=actor,
        data=text.encode("utf-8"),
        filename="rows.csv",
        **options,
    )


def rejection(dataset: Dataset, actor, text: str, **options) -> ExamplesImportRejected:
    with pytest.raises(ExamplesImportRejected) as raised:
        import_csv(dataset, actor, text, **options)
    return raised.value


def stored(dataset: Dataset) -> list[tuple[str, str, str, int]]:
    return list(
        dataset.examples.order_by("position").values_list(
            "external_id", "text", "label", "position"
        )
    )


@pytest.mark.embedded
class TestEachFormatAndEncoding:
    @pytest.mark.parametrize(
        ("name", "label_map", "file_format", "encoding"),
        [
            ("reviews.utf8.csv", None, "csv", "utf-8"),
            ("reviews.cp1252.csv", None, "csv", "cp1252"),
            ("reviews.macroman.csv", None, "csv", "mac_roman"),
            ("reviews.tsv", SIGNED, "tsv", "utf-8"),
            ("reviews.jsonl", BINARY, "jsonl", "utf-8"),
        ],
    )
    def test_it_imports_the_reviews_and_reports_how_it_read_them(
        self, cast, fresh, name, label_map, file_format, encoding
    ):
        report = examples_import(
            shared_task=fresh.shared_task,
            split=fresh.split,
            actor=cast.organizer,
            data=(FIXTURES / name).read_bytes(),
            filename=name,
            label_map=label_map,
        )
        assert (report.created, report.encoding, report.file_format) == (6, encoding, file_format)
        assert stored(fresh) == [
            (f"r{i + 1}", text, label, i)
            for i, (text, label) in enumerate(zip(REVIEWS, REVIEW_LABELS, strict=True))
        ]

    def test_an_sst2_file_gets_its_line_numbers_as_ids(self, cast, fresh):
        report = examples_import(
            shared_task=fresh.shared_task,
            split=fresh.split,
            actor=cast.organizer,
            data=(FIXTURES / "reviews.sst2.txt").read_bytes(),
            filename="reviews.sst2.txt",
            label_map=BINARY,
        )
        assert report.file_format == "sst2"
        assert [(eid, text) for eid, text, _, _ in stored(fresh)] == [
            (str(line), text) for line, text in enumerate(REVIEWS, start=1)
        ]

    def test_a_requested_format_overrides_the_file_name(self, cast, fresh):
        report = examples_import(
            shared_task=fresh.shared_task,
            split=fresh.split,
            actor=cast.organizer,
            data=b"id\ttext\tlabel\nx1\tgood\tpositive\n",
            filename="export.txt",
            file_format="TSV",
        )
        assert report.file_format == "tsv"
        assert stored(fresh) == [("x1", "good", "positive", 0)]

    def test_an_unknown_requested_format_is_refused_as_an_argument(self, cast, fresh):
        with pytest.raises(ValidationError) as raised:
            import_csv(fresh, cast.organizer, "id,text,label\n", file_format="xlsx")
        assert not isinstance(raised.value, ExamplesImportRejected)
        assert "'xlsx' is not a file format" in raised.value.message_dict["file_format"][0]

    def test_stored_text_is_nfc(self, cast, fresh):
        import_csv(fresh, cast.organizer, "id,text,label\nx1,Ame\u0301lie,positive\n")
        assert fresh.examples.get().text == "Amélie"

    def test_other_column_names_can_be_given(self, cast, fresh):
        report = import_csv(
            fresh,
            cast.organizer,
            "sid,sentence,gold\nx1,good,1\n",
            id_column="sid",
            text_column="sentence",
            label_column="gold",
            label_map=BINARY,
        )
        assert report.created == 1
        assert stored(fresh) == [("x1", "good", "positive", 0)]


@pytest.mark.embedded
class TestAllOrNothing:
    GOOD = ["x1,fine film,positive", "x2,dull film,negative", "x3,fair film,positive"]

    @pytest.mark.parametrize(("where", "line"), [(0, 2), (2, 4), (4, 6)])
    def test_one_bad_row_anywhere_stores_nothing_and_is_named_by_line(
        self, cast, fresh, where, line
    ):
        rows = [*self.GOOD, "x4,fine again,positive"]
        rows.insert(where, "x9,,positive")
        rejected = rejection(fresh, cast.organizer, "id,text,label\n" + "\n".join(rows))
        assert rejected.errors == [RowError(line=line, reason="the text is empty")]
        assert fresh.examples.count() == 0
        assert not AuditLogEntry.objects.filter(action="examples.import").exists()

    def test_every_bad_row_is_listed_with_its_reason(self, cast, fresh):
        text = "\n".join(
            [
                "id,text,label",
                "x1,fine film,positive",  # 2
                "x2,   ,negative",  # 3
                "x3,odd film,neutral",  # 4
                "x1,same id,positive",  # 5
                ",no id,positive",  # 6
                "x6,no label,",  # 7
                "x7,too,many,fields",  # 8
                'x8,"Terrific" says nobody,positive',  # 9
            ]
        )
        rejected = rejection(fresh, cast.organizer, text)
        assert [(error.line, error.reason) for error in rejected.errors] == [
            (3, "the text is empty"),
            (
                4,
                "the label 'neutral' is not one of this task's labels (negative, positive); "
                "give a label map to translate the file's labels, e.g. 0=negative,1=positive",
            ),
            (5, "the id 'x1' is used twice (first on line 2)"),
            (6, "the id is empty"),
            (7, "the label is missing"),
            (8, "has 4 fields but the header has 3"),
            (
                9,
                "a closing quote is followed by more text: quote the whole field and double "
                'the quotes inside it ("")',
            ),
        ]
        assert fresh.examples.count() == 0

    def test_one_row_may_have_several_problems(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id,text,label\n,,\n")
        assert [error.reason for error in rejected.errors] == [
            "the id is empty",
            "the text is empty",
            "the label is missing",
        ]
        assert {error.line for error in rejected.errors} == {2}

    @pytest.mark.parametrize("split", ["train", "blind_dev", "starter"])
    def test_invisible_characters_and_look_alike_letters_are_refused_in_every_split(
        self, cast, split
    ):
        dataset = Dataset.objects.get(shared_task=cast.shared_task, split=split)
        text = "\n".join(
            [
                "id,text,label",
                "x1,a gripping film,positive",
                "x2,a grip\u200bping film,positive",
                "x3,a gr\u0456pping film,positive",
                "x4,\u202ea gripping film,positive",
                "x5,a gripping film \U0001f3ac \u2014 Zo\u00eb's na\u00efve \u0444\u0438\u043b\u044c\u043c,positive",
            ]
        )
        before = dataset.examples.count()
        rejected = rejection(dataset, cast.organizer, text)
        assert [(error.line, error.reason) for error in rejected.errors] == [
            (3, "the text has an invisible character: U+200B ZERO WIDTH SPACE"),
            (
                4,
                "the text has a word that mixes Latin and Cyrillic letters: 'gr\u0456pping' "
                "(\u0456 is U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I)",
            ),
            (5, "the text has an invisible character: U+202E RIGHT-TO-LEFT OVERRIDE"),
        ]
        assert dataset.examples.count() == before

    def test_the_rejection_is_a_validation_error_that_reads_line_by_line(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id,text,label\nx1,,positive\n")
        assert isinstance(rejected, ValidationError)
        assert rejected.messages == ["line 2: the text is empty"]
        assert (rejected.encoding, rejected.file_format) == ("utf-8", "csv")

    def test_an_id_already_in_the_dataset_is_refused(self, cast):
        rejected = rejection(cast.starter, cast.organizer, "id,text,label\ns2,again,negative\n")
        assert rejected.errors == [
            RowError(line=2, reason="the id 's2' is already in the starter dataset")
        ]
        assert cast.starter.examples.count() == 4

    def test_the_same_id_may_be_in_another_split(self, cast):
        import_csv(cast.train, cast.organizer, "id,text,label\ns2,a train text,negative\n")
        assert cast.train.examples.filter(external_id="s2").exists()

    def test_a_duplicate_id_is_reported_even_when_its_first_row_is_bad(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id,text,label\nx1,,positive\nx1,b,positive\n")
        assert [error.line for error in rejected.errors] == [2, 3]
        assert rejected.errors[1].reason == "the id 'x1' is used twice (first on line 2)"

    def test_an_overlong_id_is_refused(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, f"id,text,label\n{'x' * 201},t,positive\n")
        assert rejected.errors == [RowError(line=2, reason="the id is longer than 200 characters")]

    def test_a_missing_column_is_one_error_for_the_header(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id,sentence\nx1,good\nx2,bad\n")
        assert rejected.errors == [
            RowError(
                line=1,
                reason="the header has no 'text', 'label' columns (it has 'id', 'sentence')",
            )
        ]

    def test_a_tab_separated_file_named_csv_gets_a_hint(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id\ttext\tlabel\nx1\tgood\tpositive\n")
        assert "looks separated by tabs" in rejected.errors[0].reason

    def test_a_jsonl_row_without_a_field_is_a_row_error(self, cast, fresh):
        data = b'{"id": "x1", "text": "good", "label": "positive"}\n{"id": "x2", "text": "bad"}\n'
        with pytest.raises(ExamplesImportRejected) as raised:
            examples_import(
                shared_task=fresh.shared_task,
                split=fresh.split,
                actor=cast.organizer,
                data=data,
                filename="a.jsonl",
            )
        assert raised.value.errors == [RowError(line=2, reason="has no 'label' field")]

    def test_a_file_with_no_examples_is_refused(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id,text,label\n")
        assert rejected.errors == [RowError(line=0, reason="the file has no examples")]

    def test_an_unreadable_file_is_refused_with_its_reason(self, cast, fresh):
        with pytest.raises(ExamplesImportRejected) as raised:
            examples_import(
                shared_task=fresh.shared_task,
                split=fresh.split,
                actor=cast.organizer,
                data=b"id,text\n",
                filename="rows.xlsx",
            )
        assert raised.value.errors[0].line == 0
        assert "cannot tell the format of 'rows.xlsx'" in raised.value.errors[0].reason

    def test_an_encoding_problem_names_its_line(self, cast, fresh):
        data = (
            "id,text,label\n" + "x1,naïve “café”,positive\n" * 3
        ).encode() + b"x9,caf\xe9,positive\n"
        with pytest.raises(ExamplesImportRejected) as raised:
            examples_import(
                shared_task=fresh.shared_task,
                split=fresh.split,
                actor=cast.organizer,
                data=data,
                filename="a.csv",
            )
        assert raised.value.errors[0].line == 5
        assert raised.value.file_format == "csv"


@pytest.mark.embedded
class TestLabels:
    def test_a_label_map_translates_zero_and_one(self, cast, fresh):
        import_csv(fresh, cast.organizer, "id,text,label\nx1,good,1\nx2,bad,0\n", label_map=BINARY)
        assert [label for _, _, label, _ in stored(fresh)] == ["positive", "negative"]

    @pytest.mark.parametrize("positive", ["1", "+1"])
    def test_signed_labels_match_however_the_map_spells_them(self, cast, fresh, positive):
        import_csv(
            fresh,
            cast.organizer,
            "id,text,label\nx1,good,+1\nx2,bad,-1\nx3,fine,1\n",
            label_map={"-1": "negative", positive: "positive"},
        )
        assert [label for _, _, label, _ in stored(fresh)] == ["positive", "negative", "positive"]

    def test_labels_that_already_are_the_tasks_pass_a_map_unchanged(self, cast, fresh):
        import_csv(
            fresh, cast.organizer, "id,text,label\nx1,good,1\nx2,bad,negative\n", label_map=BINARY
        )
        assert [label for _, _, label, _ in stored(fresh)] == ["positive", "negative"]

    def test_a_label_outside_the_map_is_a_row_error(self, cast, fresh):
        rejected = rejection(fresh, cast.organizer, "id,text,label\nx1,meh,2\n", label_map=BINARY)
        assert rejected.errors == [
            RowError(
                line=2,
                reason="the label '2' is neither in the label map (0, 1) "
                "nor one of this task's labels (negative, positive)",
            )
        ]

    def test_a_map_to_a_label_the_task_does_not_have_is_refused_before_reading(self, cast, fresh):
        with pytest.raises(ValidationError, match="'neutral', which is not one of"):
            import_csv(
                fresh, cast.organizer, "id,text,label\nx1,meh,2\n", label_map={"2": "neutral"}
            )

    def test_a_map_that_gives_one_label_two_meanings_is_refused(self, cast, fresh):
        with pytest.raises(ValidationError, match="twice"):
            import_csv(
                fresh,
                cast.organizer,
                "id,text,label\nx1,meh,1\n",
                label_map={"1": "positive", "+1": "negative"},
            )

    def test_a_label_map_is_written_as_pairs(self):
        assert label_map_parse("0=negative, 1=positive") == BINARY
        assert label_map_parse("-1=negative,+1=positive,") == SIGNED

    @pytest.mark.parametrize("text", ["0:negative", "0=", "=negative", "0=negative,0=positive"])
    def test_a_label_map_that_is_not_pairs_is_refused(self, text):
        with pytest.raises(ValidationError):
            label_map_parse(text)


@pytest.mark.embedded
class TestRecordKeeping:
    def test_new_examples_come_after_the_existing_ones(self, cast):
        import_csv(cast.starter, cast.organizer, "id,text,label\ns5,new one,positive\n")
        assert stored(cast.starter)[-1] == ("s5", "new one", "positive", 4)

    def test_the_import_is_audited(self, cast, fresh):
        import_csv(fresh, cast.organizer, "id,text,label\nx1,good,1\n", label_map=BINARY)
        entry = AuditLogEntry.objects.get(action="examples.import")
        assert entry.actor == cast.organizer
        assert entry.target == "dataset:train"
        # The file's digest tells a re-import of the same file (TestReimport).
        assert len(entry.details.pop("sha256")) == 64
        assert entry.details == {
            "rows": 1,
            "encoding": "utf-8",
            "format": "csv",
            "filename": "rows.csv",
            "exact_duplicates": 0,
            "label_map": BINARY,
        }

    def test_the_audit_keeps_the_file_name_without_its_folders(self, cast, fresh):
        report = examples_import(
            shared_task=fresh.shared_task,
            split=fresh.split,
            actor=cast.organizer,
            data=b"id,text,label\nx1,good,positive\n",
            filename="C:/Users/olga/starter.csv",
        )
        assert report.filename == "starter.csv"

    @pytest.mark.parametrize(
        "who", ["other_organizer", "builder", "breaker", "outsider", "anonymous"]
    )
    def test_only_the_tasks_organizers_may_import(self, cast, fresh, who):
        with pytest.raises(PermissionDenied):
            import_csv(fresh, getattr(cast, who), "id,text,label\nx1,good,positive\n")
        assert fresh.examples.count() == 0


def test_it_imports_the_real_sst2_dev_set(cast):
    report = examples_import(
        shared_task=cast.shared_task,
        split="blind_dev",
        actor=cast.organizer,
        data=SST2_DEV.read_bytes(),
        filename=SST2_DEV.name,
        label_map=BINARY,
    )
    assert (report.created, report.encoding, report.file_format) == (872, "utf-8", "sst2")
    imported = cast.blind_dev.examples.exclude(external_id__startswith="d")
    assert imported.filter(label="negative").count() == 428
    assert imported.filter(label="positive").count() == 444
    first = imported.get(external_id="1")
    assert (first.text, first.label, first.position) == (
        "one long string of cliches .",
        "negative",
        3,
    )


def test_rows_past_several_batches_import_in_one_call(cast, fresh):
    """Rows enough for two whole bulk batches and a part of a third, in one call. How fast a
    50,000-row import is, is `manage.py benchmark_import`'s question (`make bench`): a
    wall-clock bound here would fail on a loaded machine, not on slow code."""
    count = 2 * BATCH_SIZE + BATCH_SIZE // 2
    lines = ["id,text,label"] + [
        f"x{i},a film numbered {i} that is “fine” – naïvely so,{i % 2}" for i in range(count)
    ]
    data = "\n".join(lines).encode("utf-8")
    report = examples_import(
        shared_task=fresh.shared_task,
        split=fresh.split,
        actor=cast.organizer,
        data=data,
        filename="big.csv",
        label_map=BINARY,
    )
    assert report.created == fresh.examples.count() == count
    last = fresh.examples.get(external_id=f"x{count - 1}")
    assert (last.text, last.label) == (
        f"a film numbered {count - 1} that is “fine” – naïvely so",
        "positive",
    )


def test_the_import_owns_its_transaction_so_a_late_failure_leaves_nothing(cast, monkeypatch):
    """Nothing around examples_import opens a transaction for it (issue 10.16): a failure
    after the examples are written (here, the audit record) takes them and a new dataset back."""
    Dataset.objects.filter(shared_task=cast.shared_task, split="train").delete()

    def audit_fails(**kwargs):
        raise RuntimeError("the audit log is unavailable")

    monkeypatch.setattr(services, "audit_record", audit_fails)
    with pytest.raises(RuntimeError, match="audit log"):
        examples_import(
            shared_task=cast.shared_task,
            split="train",
            actor=cast.organizer,
            data=b"id,text,label\na,A fine film.,1\nb,A dull film.,0\n",
            filename="train.csv",
            label_map=BINARY,
        )
    assert not Dataset.objects.filter(shared_task=cast.shared_task, split="train").exists()
    assert not Example.objects.filter(dataset__shared_task=cast.shared_task, external_id="a")


class TestReimport:
    def test_the_same_file_again_is_told_it_was_already_imported(self, cast, fresh):
        text = "id,text,label\nr1,A fine film.,positive\nr2,A dull film.,negative\n"
        import_csv(fresh, cast.organizer, text)
        with pytest.raises(ValidationError) as raised:
            import_csv(fresh, cast.organizer, text)
        (message,) = raised.value.messages
        assert message.startswith("This file was already imported into the train set ")
        assert "(2 examples, from rows.csv): nothing was stored." in message
        assert not isinstance(raised.value, ExamplesImportRejected)
        assert fresh.examples.count() == 2

    def test_a_changed_file_is_read_row_by_row(self, cast, fresh):
        import_csv(fresh, cast.organizer, "id,text,label\nr1,A fine film.,positive\n")
        rejected = rejection(fresh, cast.organizer, "id,text,label\nr1,A fine film!,positive\n")
        assert rejected.error_count == 1


def test_the_real_sst2_dev_set_imported_again_is_told_so(cast):
    def import_dev():
        return examples_import(
            shared_task=cast.shared_task,
            split="blind_dev",
            actor=cast.organizer,
            data=SST2_DEV.read_bytes(),
            filename=SST2_DEV.name,
            label_map=BINARY,
        )

    import_dev()
    with pytest.raises(ValidationError) as raised:
        import_dev()
    # One sentence, not 872 "repeated id" rows.
    (message,) = raised.value.messages
    assert "already imported into the blind_dev set" in message
    assert "by olga (872 examples, from stsa.binary.dev)" in message
