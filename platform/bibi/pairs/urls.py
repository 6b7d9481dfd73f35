from __future__ import annotations

from django.urls import path

from bibi.pairs import apis

task = "shared-tasks/<slug:slug>/"

urlpatterns = [
    path(f"{task}pair-sets/", apis.PairSetListApi.as_view(), name="pair-set-list"),
    path(f"{task}pairs/", apis.PairAddApi.as_view(), name="pair-add"),
    path(
        f"{task}contestable-pairs/",
        apis.ContestablePairListApi.as_view(),
        name="contestable-pair-list",
    ),
    path(f"{task}contests/", apis.ContestListApi.as_view(), name="contest-list"),
    path("pair-sets/<int:pk>/", apis.PairSetDetailApi.as_view(), name="pair-set-detail"),
    path(
        "pair-sets/<int:pk>/refused.csv",
        apis.PairSetRefusedApi.as_view(),
        name="pair-set-refused",
    ),
    path("pair-sets/<int:pk>/submit/", apis.PairSetSubmitApi.as_view(), name="pair-set-submit"),
    path("pairs/<int:pk>/", apis.PairDetailApi.as_view(), name="pair-detail"),
    path("pairs/<int:pk>/contests/", apis.PairContestListApi.as_view(), name="pair-contests"),
    path("contests/<int:pk>/", apis.ContestDetailApi.as_view(), name="contest-detail"),
    path(
        "contests/<int:pk>/adjudicate/",
        apis.ContestAdjudicateApi.as_view(),
        name="contest-adjudicate",
    ),
]
