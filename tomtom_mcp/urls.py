from django.contrib import admin
from django.http import JsonResponse
from django.urls import include, path

from analytics.api import api as analytics_api
from tomtom_mcp import SERVER_NAME, version


def healthz(request):
    return JsonResponse({"status": "ok", "name": SERVER_NAME, "version": version()})


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("analytics/", include("analytics.urls")),
    path("api/analytics/", analytics_api.urls),
]
