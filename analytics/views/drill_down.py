"""The drill-down behind a figure: the failing calls, the failing widget events, and every stored
event of one request. Lists page through raw events, so each says what the retention removed.

Every drill-down lands on the call: every request id shown is a link to its request page
(analytics/requests.py); a widget's report links to the call that delivered its data as well as
to its own; a request's page shows the calls of its client session around it and links to the
session's whole timeline (analytics/views/evidence.py). The failing calls are told apart by
whose they are: the caller's mistakes, or the server's and TomTom's errors."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from analytics.funnel import capped_sessions, guarded_reports
from analytics.models import DROPPED_KIND, FAILING_KINDS, ToolCallEvent
from analytics.overview import DEFAULT_PRESET
from analytics.requests import NEIGHBOURS, REQUEST_ID_FIELDS, error_class, request_url, session_neighbours
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
from analytics.selectors.timeline import session_of
from analytics.tool_stats import CALLER_ERRORS, SERVER_ERRORS
from analytics.views.base import filters, form_and_query, link, narrowed, render_page
from analytics.views.evidence import session_url

PER_PAGE = 50
ERROR_CLASSES = {
    "caller": ("Caller mistakes", "only the caller can fix them: its arguments, the tool name, its key or backend"),
    "server": ("Server and upstream errors", "ours or TomTom's: a bug, TomTom unreachable, rate limited or unreadable"),
}
"""The classes of failing calls (`error_class`), as the failing-calls page names and explains them."""
CLASS_CODES = {"caller": CALLER_ERRORS, "server": SERVER_ERRORS}


def of_class(calls: QuerySet[ToolCallEvent], name: str) -> QuerySet[ToolCallEvent]:
    """The failing calls of one class: a code this version does not know (a newer server's) is
    counted as the server's, as `error_class` does."""
    return calls.filter(outcome__in=CALLER_ERRORS) if name == "caller" else calls.exclude(outcome__in=CALLER_ERRORS)


@staff_member_required
def failing_calls_page(request: HttpRequest) -> HttpResponse:
    """The calls behind an error figure, the caller's mistakes apart from the server's and
    TomTom's errors: grouped by code and message (the largest groups first), then every call,
    newest first, a page at a time; a group narrows the list to its calls, a class (`?class=`)
    to its codes."""
    form, query = form_and_query(request, default_preset=DEFAULT_PRESET)
    code = form.cleaned_data.get("code") or ""
    message = request.GET.get("message")
    chosen = request.GET.get("class", "")
    chosen = chosen if chosen in ERROR_CLASSES and not code else ""
    groups, group_count = failing_call_groups(query, code=code)
    calls = failing_calls(query, code=code, message=message)
    counts = {name: of_class(failing_calls(query, code=code), name).count() for name in ERROR_CLASSES}
    if chosen:
        calls = of_class(calls, chosen)
        complete = group_count == len(groups)
        groups = [group for group in groups if error_class(group.code) == chosen]
        group_count = len(groups) if complete else group_count
    page = Paginator(calls, PER_PAGE).get_page(request.GET.get("page"))
    rows = [
        {
            "time": call.time,
            "host": call.client,
            "tool": call.tool,
            "code": call.outcome,
            "class": error_class(call.outcome),
            "message": call.error,
            "request_id": call.request_id,
            "tenant": call.tenant,
            "backend": call.backend,
            "total_ms": call.total_ms,
            "request_link": request_url(call.request_id, call.time),
            "session_link": session_url(call.session),
        }
        for call in page
    ]
    linked = [
        (g, link("analytics:failing_calls", query, code=g.code, message=g.message), error_class(g.code)) for g in groups
    ]
    return render_page(
        request,
        "analytics/failing_calls.html",
        "Failing calls",
        form,
        query,
        active="failing_calls",
        classes=[
            {
                "name": name,
                "title": title,
                "why": why,
                "codes": CLASS_CODES[name],
                "count": counts[name],
                "link": link("analytics:failing_calls", query, **{"class": name}),
            }
            for name, (title, why) in ERROR_CLASSES.items()
        ],
        chosen_title=ERROR_CLASSES[chosen][0] if chosen else "",
        chosen=chosen,
        groups=linked,
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
        delivering = getattr(event, "delivery_request_id", "")
        rows.append(
            {
                "event": event,
                "tenant": tenant,
                "backend": backend,
                "request_link": request_url(event.request_id, event.time),
                "delivery_request_id": delivering,
                "delivery_link": request_url(delivering, event.time),
            }
        )
    capped, capped_count = capped_sessions(query)
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
        guarded=guarded_reports(query),
        capped=capped,
        capped_count=capped_count,
        caps=(settings.ANALYTICS_SESSION_MAX_REPORTS, settings.ANALYTICS_SESSION_MAX_TOOLS),
    )


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
    events = [
        replace(event, message="Widget report over a session cap (not counted)")
        if event.kind == DROPPED_KIND
        else event
        for event in request_events(request_id[:64], start, end)
    ]
    neighbours = session_neighbours(request_id[:64], start, end)
    session = neighbours.session or session_of(request_id[:64], start, end)
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
        link_fields=REQUEST_ID_FIELDS,
        neighbours=neighbours,
        session_link=session_url(session),
        neighbour_limit=NEIGHBOURS,
        searched=(start, end),
        gap=gap,
    )
