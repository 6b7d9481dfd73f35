import django.db.models.deletion
from django.db import migrations, models


def point_pairs_at_their_latest_decision(apps, schema_editor):
    # Before this field, the latest decided contest of a pair had set its state.
    Contest = apps.get_model("pairs", "Contest")
    Pair = apps.get_model("pairs", "Pair")
    decided = Contest.objects.exclude(status="open").order_by("pair_id", "-decided_at", "-id")
    latest: dict[int, int] = {}
    for pair_id, contest_id in decided.values_list("pair_id", "id"):
        latest.setdefault(pair_id, contest_id)
    for pair_id, contest_id in latest.items():
        Pair.objects.filter(pk=pair_id).update(decision_id=contest_id)


class Migration(migrations.Migration):
    dependencies = [
        ("pairs", "0002_original_restrict"),
    ]

    operations = [
        migrations.AddField(
            model_name="pair",
            name="decision",
            field=models.ForeignKey(
                blank=True,
                help_text="The contest whose decision is the pair's state; empty while none is decided.",
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="pairs.contest",
            ),
        ),
        migrations.RunPython(point_pairs_at_their_latest_decision, migrations.RunPython.noop),
    ]
