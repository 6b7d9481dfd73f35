"""Writes for shared tasks, by concern; every organizer action leaves an audit log entry.

Other apps call ``from bibi.sharedtasks import services`` and ``services.X``: every public
function of the modules below is re-exported here.

- ``access``: who may do what (organizers, team members, who may join a team)
- ``audit``: the audit log
- ``tasks``: shared tasks and their organizers
- ``phases``: is a phase open; creating, moving, extending and closing phases
- ``datasets``: datasets and frozen splits
- ``teams``: teams, their names and aliases
- ``invitations``: invitations into a team
- ``task_invitations``: links into a private task
- ``presets``: named sets of task settings (the 2017 sentiment replay, strict minimal pairs)
"""

from __future__ import annotations

from bibi.sharedtasks.services.access import (
    join_require_allowed,
    organizer_require,
    team_member_require,
)
from bibi.sharedtasks.services.audit import audit_record
from bibi.sharedtasks.services.datasets import dataset_get_or_create, dataset_require_unfrozen
from bibi.sharedtasks.services.invitations import (
    INVITATION_LIFETIME,
    invitation_accept,
    invitation_create,
    invitation_revoke,
)
from bibi.sharedtasks.services.phases import (
    PhaseChange,
    PhasePlan,
    phase_close_now,
    phase_create,
    phase_extend,
    phase_plan_check,
    phase_require_deletable,
    phase_require_ended,
    phase_require_movable,
    phase_require_open,
    phase_update,
    phases_change,
    phases_change_check,
)
from bibi.sharedtasks.services.presets import (
    PRESETS,
    Preset,
    preset_changes,
    preset_get,
    shared_task_preset_apply,
)
from bibi.sharedtasks.services.task_invitations import (
    task_invitation_accept,
    task_invitation_create,
    task_invitation_revoke,
)
from bibi.sharedtasks.services.tasks import (
    SHARED_TASK_EDITABLE_FIELDS,
    organizer_add,
    organizer_add_check,
    shared_task_changes_check,
    shared_task_create,
    shared_task_store_new,
    shared_task_update,
)
from bibi.sharedtasks.services.teams import (
    team_alias_new,
    team_create,
    team_name_clean,
    team_update,
)

__all__ = [
    "INVITATION_LIFETIME",
    "PRESETS",
    "SHARED_TASK_EDITABLE_FIELDS",
    "PhaseChange",
    "PhasePlan",
    "Preset",
    "audit_record",
    "dataset_get_or_create",
    "dataset_require_unfrozen",
    "invitation_accept",
    "invitation_create",
    "invitation_revoke",
    "join_require_allowed",
    "organizer_add",
    "organizer_add_check",
    "organizer_require",
    "phase_close_now",
    "phase_create",
    "phase_extend",
    "phase_plan_check",
    "phase_require_deletable",
    "phase_require_ended",
    "phase_require_movable",
    "phase_require_open",
    "phase_update",
    "phases_change",
    "phases_change_check",
    "preset_changes",
    "preset_get",
    "shared_task_changes_check",
    "shared_task_create",
    "shared_task_preset_apply",
    "shared_task_store_new",
    "shared_task_update",
    "task_invitation_accept",
    "task_invitation_create",
    "task_invitation_revoke",
    "team_alias_new",
    "team_create",
    "team_member_require",
    "team_name_clean",
    "team_update",
]
