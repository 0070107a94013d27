"""The analytics JSON API at /api/analytics/ (OpenAPI schema at /api/analytics/openapi.json,
a browsable page of it at /api/analytics/docs).

The same selectors as the dashboard, so the same numbers. Callers authenticate with a staff
session (the admin login) or `Authorization: Bearer <token>` with one of
`ANALYTICS_API_TOKENS`; the schema asks for the same (auth.py). The docs page is for staff in a
browser: anyone else is sent to the admin login. It is ninja's Swagger UI from ninja's own static
files (`ninja` is an installed app, so `collectstatic` and WhiteNoise serve them), never a CDN.
Every stat field is described from analytics/stats.py.

One router per group of endpoints (widgets, tool_calls, overview, drill_down, evidence), mounted
here in the order the schema lists them; base holds the filters and report head they share.
"""

from __future__ import annotations

from ninja import NinjaAPI
from ninja.operation import Operation

from analytics.api import drill_down, evidence, overview, tool_calls, widgets
from analytics.api.auth import AUTH, guard_docs


class AnalyticsAPI(NinjaAPI):
    def get_openapi_operation_id(self, operation: Operation) -> str:
        """`analytics_api_<function>`, as when every endpoint lived in one module analytics/api.py:
        clients generate code from the ids, and the module an endpoint lives in is not theirs to know."""
        return f"analytics_api_{operation.view_func.__name__}"


api = AnalyticsAPI(
    title="TomTom MCP analytics",
    version="1",
    description="Widget failure rates by host and tool, failing events, and callers of retired tools "
    "or outdated inputs, from the server's app-status events; tool calls, errors, latency and answer "
    "bytes from its tool-call lines. Dates are whole UTC days.",
    urls_namespace="analytics_api",
    auth=AUTH,
    docs_url="/docs",
    docs_decorator=guard_docs,
)
for endpoints in (widgets, tool_calls, overview, drill_down, evidence):
    api.add_router("", endpoints.router)
