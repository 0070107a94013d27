"""`{% still_calling tool %}`: who still calls one tool name the old way, for the tool's admin
pages (governance.admin includes `analytics/still_calling_panel.html` when the analytics are
installed; the apps do not import each other)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django import template
from django.urls import reverse

from analytics.selectors import DEFAULT_DAYS, ReportQuery, still_calling

register = template.Library()


@register.inclusion_tag("analytics/_still_calling.html")
def still_calling_table(tool: str) -> dict[str, Any]:
    """The last `DEFAULT_DAYS` UTC days of calls to `tool` the old way, by host and tenant."""
    end = datetime.now(UTC).date()
    query = ReportQuery(start=end - timedelta(days=DEFAULT_DAYS - 1), end=end, tool=tool)
    filters = urlencode({"tool": tool, "start": query.start.isoformat(), "end": query.end.isoformat()})
    return {
        "tool": tool,
        "query": query,
        "rows": still_calling(query),
        "api_url": f"{reverse('analytics_api:still_calling')}?{filters}",
        "dashboard_url": f"{reverse('analytics:dashboard')}?{filters}#old-callers",
    }
