"""Shared tasks and what they are made of: phases, datasets, teams and who belongs where.

One module by concern (``tasks``, ``datasets``, ``teams``, ``audit``); every name is
importable from here, as the app's other modules and the migrations import them.
"""

from __future__ import annotations

from bibi.sharedtasks.models.audit import AuditLogEntry
from bibi.sharedtasks.models.datasets import Dataset, Example
from bibi.sharedtasks.models.tasks import (
    DEFAULT_STRATEGY_TAGS,
    Organizer,
    Phase,
    SharedTask,
    default_labels,
    default_strategy_tags,
    task_type_choices,
)
from bibi.sharedtasks.models.teams import (
    Invitation,
    Membership,
    TaskAccess,
    TaskInvitation,
    TaskInvitationUse,
    Team,
    new_invitation_token,
)

__all__ = [
    "DEFAULT_STRATEGY_TAGS",
    "AuditLogEntry",
    "Dataset",
    "Example",
    "Invitation",
    "Membership",
    "Organizer",
    "Phase",
    "SharedTask",
    "TaskAccess",
    "TaskInvitation",
    "TaskInvitationUse",
    "Team",
    "default_labels",
    "default_strategy_tags",
    "new_invitation_token",
    "task_type_choices",
]
