"""The Celery app: three queues, routed by task name.

Tasks named ``gpu.*`` load and run models and go to the ``gpu`` queue, but for the model work a
person waits for (``gpu.guidance_suggest``: suggestions and draft checks), which goes to
``interactive`` so that scoring chunks cannot block it; every other task (imports, scoring,
housekeeping) goes to ``default``. A worker for model work runs
``celery -A bibi worker -Q interactive,gpu`` (``deploy/README.md`` says how to size it); one
for the rest ``-Q default``.
"""

from __future__ import annotations

import os

from celery import Celery
from celery.signals import beat_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bibi.settings")

app = Celery("bibi")
app.config_from_object("django.conf:settings", namespace="CELERY")
# An exact name is matched before the patterns.
app.conf.task_routes = {
    "gpu.guidance_suggest": {"queue": "interactive"},
    "gpu.*": {"queue": "gpu"},
}
app.autodiscover_tasks()
# The project's own periodic task (bibi is not an installed app, so name its module).
app.autodiscover_tasks(["bibi"], related_name="housekeeping")

GPU_QUEUE = "gpu"
INTERACTIVE_QUEUE = "interactive"
DEFAULT_QUEUE = "default"


@app.task(name="default.ping")
def ping() -> str:
    """A task that does nothing but answer: proves a worker consumes from the broker."""
    return "pong"


@beat_init.connect
def housekeep_when_beat_starts(sender, **_) -> None:
    """Beat first sends a periodic task one interval after it starts: send housekeeping at once
    too, so a deployment that has just started is not reported without beat for that long."""
    sender.app.send_task("default.housekeeping")
