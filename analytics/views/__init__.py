"""The staff dashboards: the overview (the landing page), widget failures and tool calls by host,
the drill-down to the failing calls and widget events behind a figure, every event of one
request, the evidence behind a product decision and one client session's timeline. Every table
sorts by any column and downloads as CSV (`?csv=<table id>`); every page takes the same filters,
tenant and backend included, and says how fresh its data is.

Every number comes from analytics/overview/, analytics/selectors/ and analytics/tool_stats.py,
the same functions the JSON API calls. One module per page or group of pages (overview, widgets,
tool_calls, drill_down, evidence); base holds what they share. The page views are named here, where
analytics/urls.py finds them.
"""

from analytics.views.drill_down import failing_calls_page, failing_events_page, request_page
from analytics.views.evidence import evidence_page, session_page
from analytics.views.overview import overview_page
from analytics.views.tool_calls import tool_calls_page
from analytics.views.widgets import dashboard

__all__ = [
    "dashboard",
    "evidence_page",
    "failing_calls_page",
    "failing_events_page",
    "overview_page",
    "request_page",
    "session_page",
    "tool_calls_page",
]
