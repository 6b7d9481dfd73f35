"""REST API for shared tasks, phases, datasets, examples, teams and invitations, by concern.

Thin on purpose: each view checks who may do what through ``selectors``, validates input
with a small serializer, calls one service and answers with an output serializer. A task
the user may not see answers 404, as if it did not exist; an action on a visible task
that the user's role does not allow answers 403.

- ``common``: the caller's role (``require_organizer``, ``role_in``), path parameters
- ``tasks``: shared tasks, organizers, the audit log
- ``phases``: phases
- ``datasets``: datasets, examples, imports
- ``teams``: teams, memberships, invitations into a team
- ``task_invitations``: links into a private task
"""

from __future__ import annotations

from bibi.sharedtasks.apis.common import require_organizer, role_in

__all__ = ["require_organizer", "role_in"]
