"""The drill-down behind a figure: the failing calls, the failing widget events, and every stored
event of one request. Lists page through raw events, so each says what the retention removed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.models import FAILING_KINDS
from analytics.overview import DEFAULT_PRESET
from analytics.selectors import (
    REQUEST_WINDOW,
    call_details,
    failing_call_groups,
    failing_calls,
    failing_event_groups,
    failing_events,
    request_events,
    retention_gap,
)
from analytics.views.base import filters, form_and_query, link, narrowed, render_page

PER_PAGE = 50


@staff_member_required
def failing_calls_page(request: HttpRequest) -> HttpResponse:
    """The calls behind an error figure: grouped by code and message (the largest groups first),
    then every call, newest first, a page at a time; a group narrows the list to its calls."""
    form, query = form_and_query(request, default_preset=DEFAULT_PRESET)
    code = form.cleaned_data.get("code") or ""
    message = request.GET.get("message")
    groups, group_count = failing_call_groups(query, code=code)
    calls = failing_calls(query, code=code, message=message)
    page = Paginator(calls, PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "time": call.time,
            "host": call.client,
            "tool": call.tool,
            "code": call.outcome,
            "message": call.error,
            "request_id": call.request_id,
            "tenant": call.tenant,
            "backend": call.backend,
            "total_ms": call.total_ms,
            "request_link": request_url(call.request_id, call.time),
        }
        for call in page
    ]
    return render_page(
        request,
        "analytics/failing_calls.html",
        "Failing calls",
        form,
        query,
        active="failing_calls",
        groups=[(g, link("analytics:failing_calls", query, code=g.code, message=g.message)) for g in groups],
        group_count=group_count,
        code=code,
        message=message,
        page=page,
        rows=rows,
        page_query=urlencode({k: v for k, v in request.GET.items() if k != "page"}),
        gap=retention_gap(query, "ToolCall"),
        all_link=link("analytics:failing_calls", query, code=code),
        api_link=f"{reverse('analytics_api:failing_calls')}?{filters(query, code=code)}",
    )


@staff_member_required
def failing_events_page(request: HttpRequest) -> HttpResponse:
    """The widget events behind a failure figure, grouped by kind, stage and error, then each
    event with the tenant and backend of the call that reported it."""
    form, query = form_and_query(request, default_preset=DEFAULT_PRESET)
    kind = form.cleaned_data.get("kind", "")
    if query.call_filters:
        return render_page(
            request,
            "analytics/failing_events.html",
            "Failing widget events",
            form,
            query,
            active="failing_events",
            unfiltered=query.call_filters,
            kind=kind,
        )
    kinds = [kind] if kind else list(FAILING_KINDS)
    groups, group_count = failing_event_groups(query, kinds=kinds)
    page = Paginator(failing_events(query, kinds=kinds), PER_PAGE).get_page(request.GET.get("page"))
    events = list(page)
    joined = call_details(
        (e.request_id for e in events), query.start_time - timedelta(hours=1), query.end_time + timedelta(hours=1)
    )
    rows = []
    for event in events:
        tenant, backend = joined.get(event.request_id, ("", ""))
        rows.append(
            {
                "event": event,
                "tenant": tenant,
                "backend": backend,
                "request_link": request_url(event.request_id, event.time),
            }
        )
    return render_page(
        request,
        "analytics/failing_events.html",
        "Failing widget events",
        form,
        query,
        active="failing_events",
        kind=kind,
        groups=groups,
        group_count=group_count,
        page=page,
        rows=rows,
        page_query=urlencode({k: v for k, v in request.GET.items() if k != "page"}),
        gap=retention_gap(query, "AppStatus"),
    )


def request_url(request_id: str, at: datetime) -> str:
    """The page of every event of the call `request_id`, looked for around `at`."""
    if not request_id:
        return ""
    return f"{reverse('analytics:request', args=[request_id])}?{urlencode({'at': at.isoformat()})}"


@staff_member_required
def request_page(request: HttpRequest, request_id: str) -> HttpResponse:
    """Every stored event of one call (its tool call, its app data, the widget's reports), found
    within a day either side of `at` (the time of the event that linked here; default now)."""
    form, query = form_and_query(request, default_preset=DEFAULT_PRESET)
    try:
        at = datetime.fromisoformat(request.GET["at"]) if request.GET.get("at") else datetime.now(UTC)
        at = at if at.tzinfo else at.replace(tzinfo=UTC)
    except ValueError:
        at = datetime.now(UTC)
    start, end = at - REQUEST_WINDOW, at + REQUEST_WINDOW
    events = request_events(request_id[:64], start, end)
    gap = retention_gap(
        narrowed(
            query,
            since=start.replace(minute=0, second=0, microsecond=0),
            until=end.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1),
            start=start.date(),
            end=end.date(),
        ),
        "ToolCall",
    )
    return render_page(
        request,
        "analytics/request.html",
        f"Request {request_id[:64]}",
        form,
        query,
        active="",
        request_id=request_id[:64],
        events=events,
        searched=(start, end),
        gap=gap,
    )
