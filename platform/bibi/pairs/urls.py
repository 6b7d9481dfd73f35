from __future__ import annotations

from django.urls import path

from bibi.pairs import apis
from bibi.pairs.validation import apis as validation_apis

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
    path(f"{task}validation/", validation_apis.ValidationStateApi.as_view(), name="validation"),
    path(
        f"{task}validation/next/",
        validation_apis.ValidationNextApi.as_view(),
        name="validation-next",
    ),
    path(
        f"{task}validation/mine/",
        validation_apis.ValidationMineApi.as_view(),
        name="validation-mine",
    ),
    path(
        f"{task}validation/pairs/",
        validation_apis.ValidationPairListApi.as_view(),
        name="validation-pairs",
    ),
    path(
        f"{task}validation/validators/",
        validation_apis.ValidationValidatorListApi.as_view(),
        name="validation-validators",
    ),
    path(
        f"{task}validation/votes/",
        validation_apis.ValidationVoteListApi.as_view(),
        name="validation-votes",
    ),
    path(
        f"{task}validation/summary/",
        validation_apis.ValidationSummaryApi.as_view(),
        name="validation-summary",
    ),
    path(
        "validations/<int:pk>/", validation_apis.ValidationVoteApi.as_view(), name="validation-vote"
    ),
    path(
        "validations/<int:pk>/skip/",
        validation_apis.ValidationSkipApi.as_view(),
        name="validation-skip",
    ),
]
