"""The blind dev and starter sets freeze when the break phase starts; training data never does."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from bibi.sharedtasks import services
from bibi.sharedtasks.importing import examples_import
from bibi.sharedtasks.models import AuditLogEntry, Phase
from bibi.texts import moment_text

pytestmark = pytest.mark.django_db

FILE = b"id,text,label\nn1,a late addition to the set .,positive\n"


def frozen_message(cast, split: str) -> str:
    started = cast.shared_task.phases.get(kind="break").starts_at
    return f"The {split.replace('_', ' ')} set is frozen: the break phase started at " + (
        moment_text(started)
    )


def import_file(cast, split: str):
    return examples_import(
        shared_task=cast.shared_task,
        split=split,
        actor=cast.organizer,
        data=FILE,
        filename="late.csv",
    )


@pytest.mark.parametrize("split", ["blind_dev", "starter"])
def test_an_import_into_a_frozen_split_is_refused_naming_the_break_start(cast, split):
    before = cast.shared_task.datasets.get(split=split).examples.count()
    with pytest.raises(ValidationError) as raised:
        import_file(cast, split)
    (message,) = raised.value.message_dict["split"]
    assert message.startswith(frozen_message(cast, split))
    assert "Training data can still be imported." in message
    assert cast.shared_task.datasets.get(split=split).examples.count() == before
    assert not AuditLogEntry.objects.filter(action="examples.import").exists()


def test_training_data_is_still_imported_during_the_break_phase(cast):
    assert import_file(cast, "train").created == 1


@pytest.mark.parametrize("split", ["blind_dev", "starter"])
def test_every_split_takes_imports_until_the_break_phase_starts(cast_building, split):
    assert import_file(cast_building, split).created == 1


def test_the_sets_freeze_at_the_break_start_to_the_second(cast_building):
    cast = cast_building
    brk = cast.shared_task.phases.get(kind="break")
    assert (
        services.dataset_require_unfrozen(
            shared_task=cast.shared_task, split="starter", now=brk.starts_at - timedelta(seconds=1)
        )
        is None
    )
    with pytest.raises(ValidationError):
        services.dataset_require_unfrozen(
            shared_task=cast.shared_task, split="starter", now=brk.starts_at
        )


def test_a_task_without_a_break_phase_never_freezes(cast):
    Phase.objects.filter(shared_task=cast.shared_task, kind="break").delete()
    assert import_file(cast, "starter").created == 1


def test_the_api_refuses_a_frozen_split_with_the_break_start(cast):
    response = cast.client("organizer").post(
        "/api/v1/shared-tasks/sst/datasets/starter/import/",
        {"file": SimpleUploadedFile("late.csv", FILE)},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["split"][0].startswith(frozen_message(cast, "starter"))


def test_the_admin_import_page_shows_why_a_frozen_split_is_refused(cast, client):
    cast.organizer.is_staff = True
    cast.organizer.save()
    client.force_login(cast.organizer)
    url = reverse("admin:sharedtasks_sharedtask_import_examples", args=[cast.shared_task.pk])
    response = client.post(
        url,
        {
            "split": "blind_dev",
            "file": SimpleUploadedFile("late.csv", FILE),
            "id_column": "id",
            "text_column": "text",
            "label_column": "label",
        },
    )
    assert response.status_code == 200
    assert frozen_message(cast, "blind_dev") in response.content.decode()
    assert cast.blind_dev.examples.count() == 3


def test_the_command_refuses_a_frozen_split(cast, tmp_path):
    path = tmp_path / "late.csv"
    path.write_bytes(FILE)
    with pytest.raises(CommandError, match="The starter set is frozen"):
        call_command("import_examples", "sst", "starter", str(path), stdout=StringIO())


def test_examples_cannot_be_added_or_edited_in_the_admin(cast, client):
    cast.organizer.is_superuser = cast.organizer.is_staff = True
    cast.organizer.save()
    client.force_login(cast.organizer)
    example = cast.starter.examples.first()
    change = client.post(
        reverse("admin:sharedtasks_example_change", args=[example.pk]),
        {"dataset": cast.starter.pk, "external_id": "s1", "text": "edited", "label": "negative"},
    )
    assert change.status_code == 403
    assert client.get(reverse("admin:sharedtasks_example_add")).status_code == 403
    example.refresh_from_db()
    assert example.text != "edited"


def test_the_break_start_cannot_be_moved_to_unfreeze_the_sets(cast):
    brk = cast.shared_task.phases.get(kind="break")
    with pytest.raises(ValidationError, match="its start can no longer change"):
        services.phase_update(
            phase=brk,
            actor=cast.organizer,
            starts_at=timezone.now() + timedelta(hours=1),
            ends_at=brk.ends_at,
        )
