from __future__ import annotations

from django.urls import path

from bibi.sharedtasks import apis

task = "shared-tasks/<slug:slug>/"

urlpatterns = [
    path("shared-tasks/", apis.SharedTaskListApi.as_view(), name="shared-task-list"),
    path(task, apis.SharedTaskDetailApi.as_view(), name="shared-task-detail"),
    path(f"{task}phases/", apis.PhaseListApi.as_view(), name="phase-list"),
    path(f"{task}phases/<str:kind>/", apis.PhaseDetailApi.as_view(), name="phase-detail"),
    path(f"{task}phases/<str:kind>/extend/", apis.PhaseExtendApi.as_view(), name="phase-extend"),
    path(
        f"{task}phases/<str:kind>/close-now/",
        apis.PhaseCloseNowApi.as_view(),
        name="phase-close-now",
    ),
    path(f"{task}datasets/", apis.DatasetListApi.as_view(), name="dataset-list"),
    path(
        f"{task}datasets/<str:split>/examples/", apis.ExampleListApi.as_view(), name="example-list"
    ),
    path(
        f"{task}datasets/<str:split>/import/",
        apis.ExamplesImportApi.as_view(),
        name="examples-import",
    ),
    path(f"{task}teams/", apis.TeamListApi.as_view(), name="team-list"),
    path(f"{task}teams/<int:team_id>/", apis.TeamDetailApi.as_view(), name="team-detail"),
    path(
        f"{task}teams/<int:team_id>/invitations/",
        apis.InvitationListApi.as_view(),
        name="invitation-list",
    ),
    path(
        f"{task}task-invitations/",
        apis.TaskInvitationListApi.as_view(),
        name="task-invitation-list",
    ),
    path(f"{task}organizers/", apis.OrganizerListApi.as_view(), name="organizer-list"),
    path(f"{task}audit-log/", apis.AuditLogApi.as_view(), name="audit-log"),
    path(
        "invitations/<str:token>/accept/",
        apis.InvitationAcceptApi.as_view(),
        name="invitation-accept",
    ),
    path(
        "invitations/<str:token>/revoke/",
        apis.InvitationRevokeApi.as_view(),
        name="invitation-revoke",
    ),
    path(
        "task-invitations/<str:token>/accept/",
        apis.TaskInvitationAcceptApi.as_view(),
        name="task-invitation-accept",
    ),
    path(
        "task-invitations/<str:token>/revoke/",
        apis.TaskInvitationRevokeApi.as_view(),
        name="task-invitation-revoke",
    ),
    path("me/memberships/", apis.MyMembershipsApi.as_view(), name="my-memberships"),
]
