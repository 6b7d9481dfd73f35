from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.authtoken.views import obtain_auth_token

from bibi.health import healthz

api_v1 = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("bibi.sharedtasks.urls")),
    path("", include("bibi.systems.urls")),
    path("", include("bibi.pairs.urls")),
    path("", include("bibi.evaluation.urls")),
    path("", include("bibi.guidance.urls")),
]

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("", include("bibi.web.urls")),
]
