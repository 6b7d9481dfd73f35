from __future__ import annotations

from django.urls import path

import bibi.converters  # noqa: F401 (registers <token:...>)
from bibi.systems import apis, worker_apis

system = "shared-tasks/<slug:slug>/systems/<int:system_id>/"
version = f"{system}versions/<int:number>/"

urlpatterns = [
    path(
        "worker/archives/<token:sha256>/",
        worker_apis.worker_archive_download,
        name="worker-archive-download",
    ),
    path("shared-tasks/<slug:slug>/systems/", apis.SystemListApi.as_view(), name="system-list"),
    path("shared-tasks/<slug:slug>/pair-texts/", apis.PairTextsApi.as_view(), name="pair-texts"),
    path(system, apis.SystemDetailApi.as_view(), name="system-detail"),
    path(f"{system}versions/", apis.VersionUploadApi.as_view(), name="system-version-upload"),
    path(
        f"{system}predictions/",
        apis.PredictionsUploadApi.as_view(),
        name="system-predictions-upload",
    ),
    path(version, apis.VersionDetailApi.as_view(), name="system-version-detail"),
    path(f"{version}activate/", apis.VersionActivateApi.as_view(), name="system-version-activate"),
    path(
        f"{version}starter-fisher/",
        apis.VersionStarterFisherApi.as_view(),
        name="system-version-starter-fisher",
    ),
]
