"""Template filters of the analytics pages."""

from __future__ import annotations

from datetime import datetime, timedelta

from django import template
from django.utils.html import format_html

from analytics.requests import request_url

register = template.Library()


@register.filter
def analytics_duration(value: timedelta | None) -> str:
    """A duration in words an operator reads at a glance: `3 d 4 h`, `2 h 5 min`, `40 s`."""
    if value is None:
        return "—"
    seconds = int(value.total_seconds())
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {minutes} min"
    if minutes:
        return f"{minutes} min"
    return f"{seconds} s"


@register.simple_tag
def request_link(request_id: str | None, at: datetime | None = None) -> str:
    """A request id as the link to its request page (analytics/requests.py), looked for around
    `at` (the time of the row that shows it): `{% request_link row.request_id row.time %}`. Every
    request id a page shows is one; "" without an id."""
    if not request_id:
        return ""
    return format_html('<a href="{}" class="request-link">{}</a>', request_url(request_id, at), request_id)
