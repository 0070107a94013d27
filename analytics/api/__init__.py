"""The analytics JSON API at /api/analytics/ (OpenAPI schema at /api/analytics/openapi.json,
a browsable page of it at /api/analytics/docs).

The same selectors as the dashboard, so the same numbers. Callers authenticate with a staff
session (the admin login) or `Authorization: Bearer <token>` with one of
`ANALYTICS_API_TOKENS`; the schema asks for the same. The docs page is for staff in a browser:
anyone else is sent to the admin login. It is ninja's Swagger UI from ninja's own static files
(`ninja` is an installed app, so `collectstatic` and WhiteNoise serve them), never a CDN.
Every stat field is described from analytics/stats.py.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, date, datetime
from functools import wraps
from typing import Annotated, Any, Literal

from django.conf import settings
from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from ninja import Field, NinjaAPI, Query, Schema
from ninja.errors import HttpError
from ninja.openapi.views import openapi_view
from ninja.security import HttpBearer, SessionAuthIsStaff
from pydantic import create_model

from analytics.forms import BACKENDS
from analytics.funnel import FUNNEL_DIMENSIONS, funnel
from analytics.models import FAILING_KINDS, OLD_CALLER_KINDS
from analytics.overview import DEFAULT_PRESET, PRESETS, Window, overview
from analytics.selectors import (
    NO_TENANT,
    REQUEST_WINDOW,
    Bucket,
    Dimension,
    Group,
    ReportQuery,
    UnsupportedFilter,
    failing_call_groups,
    failing_calls,
    failing_events,
    failure_counts,
    old_callers,
    request_events,
    retention_gap,
    still_calling,
)
from analytics.stats import COUNT_STATS, RATE_STATS
from analytics.tool_stats import ERROR_CODES, OTHER_ERRORS, TOOL_CALL_STATS, CallDimension, tool_call_stats

MAX_EVENTS = 500


class ApiToken(HttpBearer):
    """A bearer token listed in ANALYTICS_API_TOKENS, compared in constant time (hashed first, so
    not even the length leaks)."""

    def authenticate(self, request: HttpRequest, token: str) -> str | None:
        offered = hashlib.sha256(token.encode()).digest()
        matched = False
        for allowed in settings.ANALYTICS_API_TOKENS:
            matched |= hmac.compare_digest(offered, hashlib.sha256(allowed.encode()).digest())
        return "token" if matched else None


AUTH = [SessionAuthIsStaff(), ApiToken()]
"""Who may call the API and read its schema: a staff session or a listed bearer token."""


def _guard_docs(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """ninja's decorator for its two documentation views. The Swagger page: staff sessions only,
    anyone else is redirected to the admin login. The schema: the API's own authentication
    (`AUTH`), answering 401 like an endpoint when no method accepts the caller."""
    if getattr(view, "func", None) is openapi_view:
        return staff_member_required(view)

    @wraps(view)
    def schema(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            if any(method(request) for method in AUTH):
                return view(request, *args, **kwargs)
        except HttpError as refused:  # the session method's CSRF check, on an unsafe method
            return JsonResponse({"detail": refused.message}, status=refused.status_code)
        return JsonResponse({"detail": "Unauthorized"}, status=401)

    return schema


api = NinjaAPI(
    title="TomTom MCP analytics",
    version="1",
    description="Widget failure rates by host and tool, failing events, and callers of retired tools "
    "or outdated inputs, from the server's app-status events; tool calls, errors, latency and answer "
    "bytes from its tool-call lines. Dates are whole UTC days.",
    urls_namespace="analytics_api",
    auth=AUTH,
    docs_url="/docs",
    docs_decorator=_guard_docs,
)


class Filters(Schema):
    start: date | None = Field(None, description="First UTC day; default: 29 days before `end`.")
    end: date | None = Field(None, description="Last UTC day, included; default: today.")
    bucket: Bucket = Field("day", description="Bucket size of time series.")
    tool: str = Field("", description="Only this tool.")
    client: str = Field("", description="Only this host (client name).")
    family: str = Field("", description="Only the hosts of this host family.")
    group: Group = Field("client", description="Report hosts by exact client name or by host family.")
    tenant: str = Field(
        "",
        description=f"Only this tenant's calls (`{NO_TENANT}`: callers with an API key). Widget "
        "events record no tenant: widget endpoints answer 422 with it.",
    )
    backend: Literal[("", *BACKENDS)] = Field(  # type: ignore[valid-type]
        "", description="Only calls served by this TomTom backend. Widget endpoints answer 422 with it."
    )
    window: Literal["", "24h", "7d", "30d"] = Field(
        "", description="A preset window of whole UTC hours up to the end of the current one (overrides the dates)."
    )
    since: datetime | None = Field(None, description="First UTC hour of a window (with `until`; overrides the dates).")
    until: datetime | None = Field(None, description="The first moment after the window (a whole UTC hour).")

    def query(self) -> ReportQuery:
        since, until = self.since, self.until
        if self.window and since is None:
            window = Window.preset(self.window, datetime.now(UTC))
            since, until = window.start, window.end
        try:
            return ReportQuery.from_filters(
                start=self.start,
                end=self.end,
                bucket=self.bucket,
                tool=self.tool,
                client=self.client,
                family=self.family,
                group=self.group,
                tenant=self.tenant,
                backend=self.backend,
                since=since,
                until=until,
            )
        except ValueError as error:
            raise HttpError(422, str(error)) from None


def _stat_fields() -> dict[str, Any]:
    fields: dict[str, Any] = {stat.name: (int, Field(description=stat.description)) for stat in COUNT_STATS}
    fields |= {stat.name: (float | None, Field(description=stat.description)) for stat in RATE_STATS}
    return fields


FailureRow = create_model(
    "FailureRow",
    __base__=Schema,
    bucket=(datetime, Field(description="Start of the UTC hour or day.")),
    client=(str, Field(description="The host (client name).")),
    tool=(str, ...),
    **_stat_fields(),
)
HostFailureRow = create_model(
    "HostFailureRow",
    __base__=Schema,
    bucket=(datetime, Field(description="Start of the UTC hour or day.")),
    client=(str, Field(description="The host (client name).")),
    **_stat_fields(),
)
TotalFailureRow = create_model(
    "TotalFailureRow",
    __base__=Schema,
    client=(str, Field(description="The host (client name).")),
    tool=(str, ...),
    **_stat_fields(),
)


class Report(Schema):
    start: date
    end: date
    bucket: str
    tool: str
    client: str
    family: str
    group: str
    tenant: str
    backend: str


class FailureReport(Report):
    rows: list[FailureRow]


class HostFailureReport(Report):
    rows: list[HostFailureRow]


class TotalFailureReport(Report):
    rows: list[TotalFailureRow]


class Event(Schema):
    time: datetime
    kind: str
    client: str
    tool: str
    stage: str
    source: str
    reason: str
    error: str
    error_code: str
    duration_ms: float | None
    replica: str
    user_agent: str
    request_id: str


class EventPage(Schema):
    count: int = Field(description="Failing events in the range, all pages.")
    events: list[Event]


class OldCaller(Schema):
    kind: Literal[OLD_CALLER_KINDS]  # type: ignore[valid-type]
    client: str
    tenant: str = Field(description="The signed-in tenant; empty for a caller with an API key.")
    tool: str
    replaced_by: str = Field(
        description="For a deprecated or retired tool: the tools that replace it, comma-separated; for an alias: "
        "the tool that answered."
    )
    input: str = Field(description="For an outdated call: the input that changed.")
    change: str = Field(description="For an outdated call: `removed`, `renamed`, `type_changed` or `unit_changed`.")
    calls: int
    first_seen: datetime
    last_seen: datetime


def _report(query: ReportQuery, by: tuple[Dimension, ...]) -> dict[str, object]:
    """The query and its rows; each response schema keeps the dimensions it groups by."""
    return {**_report_head(query), "rows": [row.as_dict() for row in _widgets(failure_counts, query, by=by)]}


def _widgets(report: Callable[..., Any], query: ReportQuery, **options: Any) -> Any:
    """A widget report; 422 for a filter widget events do not record (tenant, backend)."""
    try:
        return report(query, **options)
    except UnsupportedFilter as error:
        raise HttpError(422, str(error)) from None


@api.get("/failures", response=FailureReport, url_name="failures")
def failures(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Widget outcomes per bucket, host and tool."""
    return _report(filters.query(), ("bucket", "client", "tool"))


@api.get("/failures/by-host", response=HostFailureReport, url_name="failures_by_host")
def failures_by_host(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Widget outcomes per bucket and host, all tools together: the dashboard's chart."""
    return _report(filters.query(), ("bucket", "client"))


@api.get("/failures/totals", response=TotalFailureReport, url_name="failure_totals")
def failure_totals(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Widget outcomes per host and tool over the whole range: the dashboard's table."""
    return _report(filters.query(), ("client", "tool"))


class FunnelRowOut(Schema):
    day: datetime | None = Field(None, description="The UTC day (`by=day`): a delivery's, or an unjoined report's.")
    client: str | None = Field(None, description="The host: its client name, or its host family with `group=family`.")
    tool: str | None = None
    size: str | None = Field(
        None,
        description="Answer-size bucket of the app data (`lt_10kb`, `10kb_100kb`, "
        "`100kb_1mb`, `ge_1mb`, `unknown`), `unjoined` for reports joined to no delivery.",
    )
    simplified: str | None = Field(
        None, description="`yes` when the delivery's geometry was simplified to fit, `no`, or `unjoined`."
    )
    delivered: int = Field(description="`App data` lines: results that carried app data for a widget.")
    drawn: int = Field(description="`App drawn` reports, joined or not.")
    failed: int = Field(description="`App failed` reports, joined or not, every stage.")
    failed_init: int = Field(description="`App failed` at stage `init`.")
    failed_result: int = Field(description="`App failed` at stage `result`.")
    failed_decode: int = Field(description="`App failed` at stage `decode`.")
    failed_fetch: int = Field(description="`App failed` at stage `fetch`.")
    failed_render: int = Field(description="`App failed` at stage `render`.")
    failed_other: int = Field(description="`App failed` at a stage this version does not know.")
    cancelled: int = Field(description="`App cancelled` reports, joined or not.")
    reported: int = Field(description="Deliveries a report joined (each once, however many reports).")
    unjoined_reports: int = Field(
        description="Reports joined to no delivery: without `delivery_request_id` "
        "(a widget that predates it), late, or naming a delivery not stored."
    )
    pending: int = Field(description="Deliveries within the grace window of the newest stored event, not reported yet.")
    never_reported: int = Field(description="`delivered - reported - pending`: past the grace window, no report.")
    unreported_rate: float | None = Field(description="`never_reported / (delivered - pending)`.")
    failure_rate: float | None = Field(description="`failed / (drawn + failed)`, over every report.")


class FunnelReport(Schema):
    start: date
    end: date
    group: Group
    by: list[str]
    grace_seconds: int = Field(description="`ANALYTICS_WIDGET_GRACE_SECONDS`.")
    rows: list[FunnelRowOut]


@api.get("/funnel", response=FunnelReport, url_name="funnel")
def funnel_report(
    request: HttpRequest,
    filters: Query[Filters],
    by: Annotated[
        str, Field(max_length=64, description="Comma-separated: any of day, client, tool, size, simplified.")
    ] = "client,tool",
) -> dict[str, object]:
    """The widget funnel: deliveries, what their widgets reported, never reported, per group of `by`."""
    query = filters.query()
    dimensions = tuple(name.strip() for name in by.split(",") if name.strip())[: len(FUNNEL_DIMENSIONS)]
    try:
        rows = _widgets(funnel, query, by=dimensions)
    except ValueError as error:
        raise HttpError(422, str(error)) from None
    return {
        "start": query.start,
        "end": query.end,
        "group": query.group,
        "by": list(dimensions),
        "grace_seconds": settings.ANALYTICS_WIDGET_GRACE_SECONDS,
        "rows": [row.as_dict(FUNNEL_DIMENSIONS) for row in rows],
    }


@api.get("/failing-events", response=EventPage, url_name="failing_events")
def failing_events_list(
    request: HttpRequest,
    filters: Query[Filters],
    kind: Literal[FAILING_KINDS] | None = None,  # type: ignore[valid-type]
    limit: Annotated[int, Field(ge=1, le=MAX_EVENTS)] = 100,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> dict[str, object]:
    """The events behind the failure counts, newest first (the dashboard's drill-down)."""
    events = _widgets(failing_events, filters.query(), kinds=[kind] if kind else FAILING_KINDS)
    return {"count": events.count(), "events": list(events[offset : offset + limit])}


@api.get("/old-callers", response=list[OldCaller], url_name="old_callers")
def old_callers_list(request: HttpRequest, filters: Query[Filters]) -> list[object]:
    """Who still calls retired or deprecated tool names, aliases or outdated inputs, with counts,
    first and last seen."""
    return list(_widgets(old_callers, filters.query()))


class StillCalling(Schema):
    tool: str = Field(description="The deprecated, aliased or retired name (or the tool whose input changed).")
    kind: Literal[OLD_CALLER_KINDS]  # type: ignore[valid-type]
    client: str = Field(description="The host: its client name, or its host family with `group=family`.")
    family: str = Field(description="The host family of the client name.")
    tenant: str = Field(description="The signed-in tenant; empty for a caller with an API key.")
    calls: int = Field(description="Calls of this kind in the range.")
    first_seen: datetime = Field(description="The first of them in the range.")
    last_seen: datetime = Field(description="The last of them in the range.")


@api.get("/still-calling", response=list[StillCalling], url_name="still_calling")
def still_calling_list(request: HttpRequest, filters: Query[Filters]) -> list[object]:
    """Who still calls each tool name the old way (a deprecated or retired tool, an alias, an
    outdated input), by host and tenant, with first and last seen: each tool's admin page shows
    the same rows."""
    return list(still_calling(filters.query()))


ERROR_CODE_STATS = frozenset({*ERROR_CODES, OTHER_ERRORS})
_CALL_TYPES = {"calls": int, "errors": int, "upstream_calls": int, "bytes": int}
# Any: create_model's field definitions are (type form, FieldInfo) pairs, which mypy cannot
# tell apart from its own keyword options when they come in a ** mapping.
_TOOL_CALL_FIELDS: dict[str, Any] = {
    "bucket": (datetime | None, Field(description="Start of the UTC hour or day; null when not grouped by it.")),
    "client": (str | None, Field(description="The host (client name or family); null when not grouped by it.")),
    "tool": (str | None, Field(description="Null when not grouped by it.")),
    "backend": (str | None, Field(description="The TomTom backend; null when not grouped by it.")),
    "tenant": (str | None, Field(description="Empty for callers with an API key; null when not grouped by it.")),
    **{
        stat.name: (
            _CALL_TYPES.get(stat.name, int if stat.name in ERROR_CODE_STATS else float | None),
            Field(description=stat.description),
        )
        for stat in TOOL_CALL_STATS
    },
}
ToolCallRow = create_model("ToolCallRow", __base__=Schema, **_TOOL_CALL_FIELDS)


class ToolCallReport(Report):
    by: list[str]
    rows: list[ToolCallRow]


def _call_report(query: ReportQuery, by: tuple[CallDimension, ...]) -> dict[str, object]:
    rows = [row.as_dict() for row in tool_call_stats(query, by=by)]
    return {**_report_head(query), "by": list(by), "rows": rows}


def _report_head(query: ReportQuery) -> dict[str, object]:
    return {
        "start": query.start,
        "end": query.end,
        "bucket": query.bucket,
        "tool": query.tool,
        "client": query.client,
        "family": query.family,
        "group": query.group,
        "tenant": query.tenant,
        "backend": query.backend,
    }


@api.get("/tool-calls", response=ToolCallReport, url_name="tool_calls")
def tool_calls(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Tool calls per bucket, host and tool."""
    return _call_report(filters.query(), ("bucket", "client", "tool"))


@api.get("/tool-calls/by-host", response=ToolCallReport, url_name="tool_calls_by_host")
def tool_calls_by_host(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Tool calls per bucket and host, all tools together: the tool-call page's chart."""
    return _call_report(filters.query(), ("bucket", "client"))


@api.get("/tool-calls/totals", response=ToolCallReport, url_name="tool_call_totals")
def tool_call_totals(
    request: HttpRequest,
    filters: Query[Filters],
    by: Annotated[
        list[Literal["client", "tool", "backend", "tenant"]] | None,
        Query(description="Dimensions to group by; default host and tool."),
    ] = None,
) -> dict[str, object]:
    """Tool calls over the whole range, per host and tool (or the dimensions in `by`): the tool-call page's tables."""
    dimensions = tuple(dict.fromkeys(by or ("client", "tool")))
    return _call_report(filters.query(), dimensions)


# -- The overview and the drill-down --------------------------------------------------------------


class OverviewFigure(Schema):
    name: str
    title: str
    unit: Literal["count", "rate", "ms"]
    description: str
    value: float | None = Field(description="This window's value; null when it has no sample (never a fake zero).")
    previous: float | None = Field(description="The previous window's value.")
    change: float | None = Field(description="A ratio for counts and times; a difference (fraction) for rates.")
    sample: str
    available: bool = Field(description="False: the events do not record what it counts yet (no value).")


class RankedRow(Schema):
    name: str
    calls: int
    errors: int
    error_rate: float | None
    previous_error_rate: float | None
    widgets_failed: int
    widgets_reported: int
    widget_failure_rate: float | None
    previous_widget_failure_rate: float | None
    p95_ms: float | None
    previous_p95_ms: float | None
    small_sample: bool


class Freshness(Schema):
    data_up_to: datetime | None = Field(description="Time of the newest event stored.")
    last_ingest: datetime | None = Field(description="When ingestion last stored a batch.")
    raw_events_kept_from: datetime | None = Field(description="Raw events before this were removed by the retention.")
    lagging: bool = Field(description="The newest event is older than ANALYTICS_INGEST_LAG_SECONDS.")


class OverviewReport(Schema):
    start: datetime
    end: datetime
    previous_start: datetime
    tenant: str
    backend: str
    figures: list[OverviewFigure]
    worst_hosts: list[RankedRow]
    worst_tools: list[RankedRow]
    freshness: Freshness


def _ranked(rows: Any) -> list[dict[str, object]]:
    return [
        {
            "name": r.name,
            "calls": r.now.calls,
            "errors": r.now.errors,
            "error_rate": r.now.error_rate,
            "previous_error_rate": r.before.error_rate,
            "widgets_failed": r.now.failed,
            "widgets_reported": r.now.reported,
            "widget_failure_rate": r.now.failure_rate,
            "previous_widget_failure_rate": r.before.failure_rate,
            "p95_ms": r.now.p95_ms,
            "previous_p95_ms": r.before.p95_ms,
            "small_sample": r.small_sample,
        }
        for r in rows
    ]


@api.get("/overview", response=OverviewReport, url_name="overview")
def overview_report(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """The overview page's figures: a window (`window`, `since`/`until`, or whole days) against the
    window of the same length before it, the worst hosts and tools, and the data's freshness.
    Without a window or dates: the last 24 hours."""
    if not (filters.window or filters.since or filters.start or filters.end):
        filters.window = DEFAULT_PRESET  # type: ignore[assignment]
    query = filters.query()
    label = PRESETS[filters.window][0] if filters.window else ""
    found = overview(query, Window(query.start_time, query.end_time, label))
    fresh = found.freshness
    return {
        "start": found.window.start,
        "end": found.window.end,
        "previous_start": found.previous.start,
        "tenant": query.tenant,
        "backend": query.backend,
        "figures": [
            {
                "name": f.name,
                "title": f.title,
                "unit": f.unit,
                "description": f.description,
                "value": f.value,
                "previous": f.previous,
                "change": f.change,
                "sample": f.sample,
                "available": f.available,
            }
            for f in found.figures
        ],
        "worst_hosts": _ranked(found.worst_hosts),
        "worst_tools": _ranked(found.worst_tools),
        "freshness": {
            "data_up_to": fresh.data_up_to,
            "last_ingest": fresh.last_ingest,
            "raw_events_kept_from": fresh.kept_from,
            "lagging": fresh.lagging,
        },
    }


class FailingCall(Schema):
    time: datetime
    client: str
    tool: str
    outcome: str = Field(description="The error code.")
    error: str = Field(description="The error's message as the caller read it (keys masked).")
    request_id: str
    tenant: str
    backend: str
    total_ms: float | None


class MessageGroupRow(Schema):
    code: str
    message: str
    count: int
    first: datetime
    last: datetime


class RetentionGapRow(Schema):
    kept_from: datetime = Field(description="Raw events before this were removed by the retention.")
    counted: int = Field(description="Failing calls of the range before then: counted by the figures, not listed.")


class FailingCallPage(Schema):
    count: int = Field(description="Failing calls in the range (with `code`, `message`), all pages.")
    groups: list[MessageGroupRow] = Field(description="By code and message, the largest first (at most 50).")
    group_count: int
    removed_by_retention: RetentionGapRow | None
    calls: list[FailingCall]


@api.get("/failing-calls", response=FailingCallPage, url_name="failing_calls")
def failing_calls_list(
    request: HttpRequest,
    filters: Query[Filters],
    code: str = "",
    message: str | None = None,
    limit: Annotated[int, Field(ge=1, le=MAX_EVENTS)] = 100,
    offset: Annotated[int, Field(ge=0)] = 0,
) -> dict[str, object]:
    """The calls behind an error figure, newest first, and their groups by code and message."""
    query = filters.query()
    calls = failing_calls(query, code=code, message=message)
    groups, group_count = failing_call_groups(query, code=code)
    gap = retention_gap(query, "ToolCall")
    return {
        "count": calls.count(),
        "groups": groups,
        "group_count": group_count,
        "removed_by_retention": gap,
        "calls": list(calls[offset : offset + limit]),
    }


class RequestEventRow(Schema):
    time: datetime
    message: str
    kind: str = Field(description="The app-status kind, or the tool call's outcome.")
    tool: str
    client: str
    fields: dict[str, Any]


@api.get("/requests/{request_id}", response=list[RequestEventRow], url_name="request")
def request_events_list(request: HttpRequest, request_id: str, at: datetime | None = None) -> list[object]:
    """Every stored event of one call (its tool call, app data, widget reports), a day either side of `at`."""
    moment = at or datetime.now(UTC)
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return list(request_events(request_id[:64], moment - REQUEST_WINDOW, moment + REQUEST_WINDOW))
