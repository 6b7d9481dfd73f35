from __future__ import annotations

from django.urls import path

import bibi.converters  # noqa: F401 (registers <token:...>)
from bibi.sharedtasks.apis import datasets, phases, task_invitations, tasks, teams

task = "shared-tasks/<slug:slug>/"

urlpatterns = [
    path("shared-tasks/", tasks.SharedTaskListApi.as_view(), name="shared-task-list"),
    path(task, tasks.SharedTaskDetailApi.as_view(), name="shared-task-detail"),
    path(f"{task}phases/", phases.PhaseListApi.as_view(), name="phase-list"),
    path(f"{task}phases/<str:kind>/", phases.PhaseDetailApi.as_view(), name="phase-detail"),
    path(f"{task}phases/<str:kind>/extend/", phases.PhaseExtendApi.as_view(), name="phase-extend"),
    path(
        f"{task}phases/<str:kind>/close-now/",
        phases.PhaseCloseNowApi.as_view(),
        name="phase-close-now",
    ),
    path(f"{task}datasets/", datasets.DatasetListApi.as_view(), name="dataset-list"),
    path(
        f"{task}datasets/<str:split>/examples/",
        datasets.ExampleListApi.as_view(),
        name="example-list",
    ),
    path(
        f"{task}datasets/<str:split>/import/",
        datasets.ExamplesImportApi.as_view(),
        name="examples-import",
    ),
    path(f"{task}teams/", teams.TeamListApi.as_view(), name="team-list"),
    path(f"{task}teams/<int:team_id>/", teams.TeamDetailApi.as_view(), name="team-detail"),
    path(
        f"{task}teams/<int:team_id>/invitations/",
        teams.InvitationListApi.as_view(),
        name="invitation-list",
    ),
    path(
        f"{task}task-invitations/",
        task_invitations.TaskInvitationListApi.as_view(),
        name="task-invitation-list",
    ),
    path(f"{task}organizers/", tasks.OrganizerListApi.as_view(), name="organizer-list"),
    path(f"{task}audit-log/", tasks.AuditLogApi.as_view(), name="audit-log"),
    path(
        "invitations/<token:token>/accept/",
        teams.InvitationAcceptApi.as_view(),
        name="invitation-accept",
    ),
    path(
        "invitations/<token:token>/revoke/",
        teams.InvitationRevokeApi.as_view(),
        name="invitation-revoke",
    ),
    path(
        "task-invitations/<token:token>/accept/",
        task_invitations.TaskInvitationAcceptApi.as_view(),
        name="task-invitation-accept",
    ),
    path(
        "task-invitations/<token:token>/revoke/",
        task_invitations.TaskInvitationRevokeApi.as_view(),
        name="task-invitation-revoke",
    ),
    path("me/memberships/", teams.MyMembershipsApi.as_view(), name="my-memberships"),
]
