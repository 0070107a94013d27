"""Template filters of the analytics pages."""

from __future__ import annotations

from datetime import timedelta

from django import template

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
