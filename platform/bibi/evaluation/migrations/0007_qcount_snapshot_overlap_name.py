"""Snapshots scored with bibi's former ``overlap_2017`` (over the longer span) name that rule
``overlap_longer``, as the tasks do since ``sharedtasks.0012_qcount_overlap_readings``:
``overlap_2017`` now means the overview's literal reading, which they were not scored with."""

from django.db import migrations


def _rename(apps, old: str, new: str) -> None:
    Snapshot = apps.get_model("evaluation", "Snapshot")
    # A snapshot is written once (its model refuses save()): this renames a stored rule only.
    for pk, used in Snapshot.objects.filter(settings_used__answer_mode=old).values_list(
        "pk", "settings_used"
    ):
        Snapshot.objects.filter(pk=pk).update(settings_used={**used, "answer_mode": new})


def name_the_rule_they_were_scored_with(apps, schema_editor):
    _rename(apps, "overlap_2017", "overlap_longer")


def back_to_the_old_name(apps, schema_editor):
    _rename(apps, "overlap_longer", "overlap_2017")


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0006_second_text"),
        ("sharedtasks", "0012_qcount_overlap_readings"),
    ]

    operations = [
        migrations.RunPython(name_the_rule_they_were_scored_with, back_to_the_old_name),
    ]
