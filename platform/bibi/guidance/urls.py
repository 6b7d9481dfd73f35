from __future__ import annotations

from django.urls import path

from bibi.guidance import apis

task = "shared-tasks/<slug:slug>/"

urlpatterns = [
    path(f"{task}guidance/", apis.GuidanceListApi.as_view(), name="guidance"),
    path(f"{task}guidance/suggest/", apis.GuidanceSuggestApi.as_view(), name="guidance-suggest"),
    path(f"{task}guidance/jobs/<str:job_id>/", apis.GuidanceJobApi.as_view(), name="guidance-job"),
]
