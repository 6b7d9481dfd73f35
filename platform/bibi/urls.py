from __future__ import annotations

import csp.constants
from csp.decorators import csp_update
from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.authtoken.views import obtain_auth_token

from bibi.health import healthz

api_v1 = [
    path("auth/token/", obtain_auth_token, name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI's set-up script comes as a file of its own (the policy refuses inline
    # scripts); its page keeps a small inline <style> of the library's own.
    path(
        "docs/",
        csp_update({"style-src": [csp.constants.UNSAFE_INLINE]})(
            SpectacularSwaggerSplitView.as_view(url_name="api-schema")
        ),
        name="api-docs",
    ),
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
