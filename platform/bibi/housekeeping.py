"""The beat's one periodic task: prove that beat runs, and leave nothing stuck.

Beat sends ``default.housekeeping`` every ``HOUSEKEEPING_INTERVAL`` seconds. It records the
tick (``/healthz`` reports a beat that has gone quiet) and runs each app's housekeeping: for
hosted systems, sending again work the broker lost, taking back work whose worker vanished,
removing half-unpacked models (``bibi.systems.housekeeping.system_versions_housekeep``); for
evaluation, starting the scoring run of a closed break phase and sending again prediction
cells and runs that stalled (``bibi.evaluation.housekeeping.evaluation_housekeep``); for breaker
teams, e-mailing a reminder when an unsubmitted draft nears the break deadline
(``bibi.pairs.housekeeping.draft_reminders_send``).
"""

from __future__ import annotations

from typing import Any

from celery import shared_task

from bibi.health import beat_tick_record


@shared_task(name="default.housekeeping", ignore_result=True)
def housekeeping_task() -> dict[str, Any]:
    from bibi.evaluation.housekeeping import evaluation_housekeep
    from bibi.pairs.housekeeping import draft_reminders_send
    from bibi.systems.housekeeping import system_versions_housekeep

    beat_tick_record()
    return {
        "systems": system_versions_housekeep(),
        "evaluation": evaluation_housekeep(),
        "draft_reminders": draft_reminders_send(),
    }
