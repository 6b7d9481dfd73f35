"""One waiting scoring run per task, as a database constraint (issue 20.6).

Runs made twice by requests that raced before the constraint existed: every waiting run of
a task but its first is failed with the reason, so that the constraint can be added.
"""

from django.conf import settings
from django.db import migrations, models
from django.utils import timezone

WAITING = "waiting_for_cells"


def fail_extra_waiting_runs(apps, schema_editor):
    ScoringRun = apps.get_model("evaluation", "ScoringRun")
    first: dict[int, int] = {}
    for run in ScoringRun.objects.filter(status=WAITING).order_by("id"):
        if run.shared_task_id not in first:
            first[run.shared_task_id] = run.id
            continue
        run.status = "failed"
        run.failure_reason = (
            f"Asked for while run {first[run.shared_task_id]} was waiting: that run serves it."
        )
        run.finished_at = timezone.now()
        run.save(update_fields=["status", "failure_reason", "finished_at"])


class Migration(migrations.Migration):
    dependencies = [
        ("evaluation", "0001_initial"),
        ("sharedtasks", "0003_guidance_shows_systems"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(fail_extra_waiting_runs, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="scoringrun",
            constraint=models.UniqueConstraint(
                condition=models.Q(("status", "waiting_for_cells")),
                fields=("shared_task",),
                name="scoring_run_one_waiting_per_task",
            ),
        ),
    ]
