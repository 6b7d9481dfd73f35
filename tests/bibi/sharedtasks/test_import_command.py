"""`manage.py import_examples`: the organizer's way in from a shell."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from bibi.sharedtasks.models import AuditLogEntry, Dataset

pytestmark = [pytest.mark.embedded, pytest.mark.django_db]


@pytest.fixture
def cast(cast_building):
    """Imports into every split happen before the break phase starts."""
    return cast_building


FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "import"
SST2_DEV = Path(__file__).resolve().parents[4] / "shared" / "data" / "sst2" / "stsa.binary.dev"


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_examples", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_imports_the_sst2_dev_file_with_a_label_map(cast):
    out, _ = run("sst", "blind_dev", str(SST2_DEV), "--label-map", "0=negative,1=positive")
    # The cast's blind dev set already holds the file's first sentence, with the same label.
    assert out.splitlines() == [
        "Imported 872 examples into sst/blind_dev from stsa.binary.dev (sst2, utf-8) as olga.",
        "1 row repeats the text and label of an earlier example and was imported all the "
        "same: line 1 (as example 'd2').",
    ]
    assert cast.blind_dev.examples.count() == 3 + 872


def test_it_reports_the_encoding_it_found(cast):
    out, _ = run("sst", "train", str(FIXTURES / "reviews.macroman.csv"))
    assert "(csv, mac_roman)" in out
    assert cast.train.examples.filter(text__startswith="Amélie is a naïve").exists()


def test_it_creates_the_dataset_of_a_split_that_has_none(cast):
    cast.train.delete()
    # A map that starts with a minus sign would read as an option without the "=".
    run("sst", "train", str(FIXTURES / "reviews.tsv"), "--label-map=-1=negative,+1=positive")
    assert Dataset.objects.get(shared_task=cast.shared_task, split="train").examples.count() == 6


def test_it_prints_every_bad_row_and_stores_nothing(cast, tmp_path):
    path = tmp_path / "starter.csv"
    path.write_text("id,text,label\ns9,fine,positive\ns10,,positive\ns1,again,neutral\n")
    err = StringIO()
    with pytest.raises(
        CommandError, match=r"Rejected starter.csv \(read as csv, utf-8\): 3 problems"
    ):
        call_command("import_examples", "sst", "starter", str(path), stderr=err)
    assert err.getvalue().splitlines() == [
        "starter.csv: line 3: the text is empty",
        "starter.csv: line 4: the id 's1' is already in the starter dataset",
        "starter.csv: line 4: the label 'neutral' is not one of this task's labels "
        "(negative, positive); give a label map to translate the file's labels, e.g. 0=negative,1=positive",
    ]
    assert cast.starter.examples.count() == 4


def test_a_rejected_file_leaves_no_empty_dataset_behind(cast, tmp_path):
    cast.train.delete()
    path = tmp_path / "train.csv"
    path.write_text("id,text,label\nt1,,positive\n")
    with pytest.raises(CommandError):
        run("sst", "train", str(path))
    assert not Dataset.objects.filter(shared_task=cast.shared_task, split="train").exists()


def test_it_acts_as_the_named_organizer_and_audits_it(cast, tmp_path):
    cast.shared_task.organizer_set.create(user=cast.outsider)
    path = tmp_path / "more.jsonl"
    path.write_text('{"id": "s5", "text": "A late addition.", "label": "positive"}\n')
    out, _ = run("sst", "starter", str(path), "--as", "oscar")
    assert out.rstrip().endswith("as oscar.")
    assert AuditLogEntry.objects.get(action="examples.import").actor == cast.outsider


def test_it_refuses_to_act_as_someone_who_does_not_organize_the_task(cast):
    with pytest.raises(CommandError, match="brian: Only the organizers"):
        run("sst", "train", str(FIXTURES / "reviews.utf8.csv"), "--as", "brian")
    assert cast.train.examples.count() == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "train", "reviews.utf8.csv"], "no shared task with the slug 'nope'"),
        (["sst", "train", "missing.csv"], "Cannot read"),
        (["sst", "train", "reviews.utf8.csv", "--as", "nobody"], "no user 'nobody'"),
        (["sst", "train", "reviews.utf8.csv", "--label-map", "0:negative"], "not a label mapping"),
        (
            ["sst", "train", "reviews.utf8.csv", "--label-map", "0=neutral"],
            "'neutral', which is not one of this task's labels",
        ),
    ],
)
def test_it_explains_what_is_wrong_with_its_arguments(cast, args, message):
    args[2] = str(FIXTURES / args[2])
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_a_format_can_be_forced(cast, tmp_path):
    path = tmp_path / "export.dat"
    path.write_text("1 a gripping film .\n0 a dreary one .\n")
    out, _ = run(
        "sst", "train", str(path), "--format", "sst2", "--label-map", "0=negative,1=positive"
    )
    assert "Imported 2 examples" in out
