from __future__ import annotations

from django.urls import path

from bibi.evaluation import apis, run_apis

task = "shared-tasks/<slug:slug>/"
snapshot = f"{task}snapshots/<int:snapshot_id>/"
leaderboard = f"{task}leaderboard/"

urlpatterns = [
    path(f"{task}scoring-runs/", run_apis.ScoringRunListApi.as_view(), name="scoring-run-list"),
    path(
        f"{task}scoring-runs/<int:run_id>/",
        run_apis.ScoringRunDetailApi.as_view(),
        name="scoring-run-detail",
    ),
    path(f"{task}snapshots/", apis.SnapshotListApi.as_view(), name="snapshot-list"),
    path(snapshot, apis.SnapshotDetailApi.as_view(), name="snapshot-detail"),
    path(f"{snapshot}publish/", apis.SnapshotPublishApi.as_view(), name="snapshot-publish"),
    path(f"{snapshot}export/", apis.SnapshotExportApi.as_view(), name="snapshot-export"),
    path(f"{snapshot}items/", apis.SnapshotItemsApi.as_view(), name="snapshot-items"),
    path(f"{snapshot}<str:table>/", apis.SnapshotTableApi.as_view(), name="snapshot-table"),
    path(leaderboard, apis.LeaderboardApi.as_view(), name="leaderboard"),
    path(f"{leaderboard}export/", apis.LeaderboardExportApi.as_view(), name="leaderboard-export"),
    path(f"{leaderboard}items/", apis.LeaderboardItemsApi.as_view(), name="leaderboard-items"),
    path(
        f"{leaderboard}<str:table>/", apis.LeaderboardTableApi.as_view(), name="leaderboard-table"
    ),
]
