"""What a task's services tell the apps above them, which connect their receivers in their
``AppConfig.ready()``: sharedtasks never imports those apps (evaluation imports sharedtasks),
so the call goes up without a circle of imports.

- ``answer_rule_changed`` (``shared_task``): sent inside the transaction that changed the
  task's answer rule (``answer_mode``, ``answer_f1_threshold``); evaluation computes every
  version's dev figures again.
- ``results_phase_warning`` (``shared_task``, ``doing``): asked before a phase move starts the
  results phase now; a receiver answers what that would end (label validation) as a warning
  the organizer must confirm, or None.
"""

from __future__ import annotations

from django.dispatch import Signal

answer_rule_changed = Signal()
results_phase_warning = Signal()


def first_warning(**kwargs: object) -> str | None:
    """The first warning a receiver of ``results_phase_warning`` gives, None when none does."""
    for _, warning in results_phase_warning.send(sender=None, **kwargs):
        if warning:
            return str(warning)
    return None
