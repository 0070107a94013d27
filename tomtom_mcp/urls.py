from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path

from analytics.api import api as analytics_api
from protocol.http import mcp_route, mcp_view, protected_resource_routes, protected_resource_view
from tomtom_mcp.health import healthz, home, readyz

# The admin is this server's, not a generic Django one: every admin page's header and title say so.
admin.site.site_header = "TomTom Maps MCP"
admin.site.site_title = "TomTom Maps MCP admin"
admin.site.index_title = "Tools, tenants and analytics"

urlpatterns = [
    re_path(mcp_route(settings.MCP_PATH), mcp_view, name="mcp"),  # first: the hot path resolves at once
    *(re_path(route, protected_resource_view) for route in protected_resource_routes(settings.MCP_PATH)),
    path("", home, name="home"),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    path("", include("authserver.urls")),  # the built-in authorization server (404 unless OAUTH_BUILTIN)
    path("admin/", admin.site.urls),
    path("analytics/", include("analytics.urls")),
    path("api/analytics/", analytics_api.urls),
]
