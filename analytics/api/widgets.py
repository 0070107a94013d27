"""The endpoints on the app-status events: widget failures by host and tool, the widget funnel,
the failing widget events, and who still calls old tool names and inputs. Widget events record
no tenant or backend, so the widget reports answer 422 to those filters (`_widgets`)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Annotated, Any, Literal

from django.conf import settings
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema
from ninja.errors import HttpError
from pydantic import create_model

from analytics.api.base import MAX_EVENTS, Filters, Report, report_head
from analytics.funnel import FUNNEL_DIMENSIONS, funnel
from analytics.models import FAILING_KINDS, OLD_CALLER_KINDS
from analytics.selectors import (
    Dimension,
    Group,
    ReportQuery,
    UnsupportedFilter,
    failing_events,
    failure_counts,
    old_callers,
    still_calling,
)
from analytics.stats import COUNT_STATS, RATE_STATS

router = Router()


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
    delivery_request_id: str = Field(
        description="A widget's report: the request id of the call that delivered the data it reports on."
    )
    session: str = Field(description="The client session the event's call came in on; empty without one.")


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
    return {**report_head(query), "rows": [row.as_dict() for row in _widgets(failure_counts, query, by=by)]}


def _widgets(report: Callable[..., Any], query: ReportQuery, **options: Any) -> Any:
    """A widget report; 422 for a filter widget events do not record (tenant, backend)."""
    try:
        return report(query, **options)
    except UnsupportedFilter as error:
        raise HttpError(422, str(error)) from None


@router.get("/failures", response=FailureReport, url_name="failures")
def failures(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Widget outcomes per bucket, host and tool."""
    return _report(filters.query(), ("bucket", "client", "tool"))


@router.get("/failures/by-host", response=HostFailureReport, url_name="failures_by_host")
def failures_by_host(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """Widget outcomes per bucket and host, all tools together: the dashboard's chart."""
    return _report(filters.query(), ("bucket", "client"))


@router.get("/failures/totals", response=TotalFailureReport, url_name="failure_totals")
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
        "`100kb_1mb`, `ge_1mb`, `unknown`), `error` for error results sent to a widget, `unjoined` for "
        "reports joined to no delivery.",
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
        "(a widget that predates it), late, naming a delivery not stored, or one of another session."
    )
    mismatched: int = Field(
        description="Of the unjoined reports, those naming a delivery of another client session (or client "
        "name): counted on the reporter's own row, never on the delivery's."
    )
    dropped: int = Field(
        description="Reports over a session cap (`ANALYTICS_SESSION_MAX_REPORTS`, `ANALYTICS_SESSION_MAX_TOOLS`): "
        "counted nowhere else, on the host's row with the tool `(over a session cap)`."
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


@router.get("/funnel", response=FunnelReport, url_name="funnel")
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


@router.get("/failing-events", response=EventPage, url_name="failing_events")
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


@router.get("/old-callers", response=list[OldCaller], url_name="old_callers")
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


@router.get("/still-calling", response=list[StillCalling], url_name="still_calling")
def still_calling_list(request: HttpRequest, filters: Query[Filters]) -> list[object]:
    """Who still calls each tool name the old way (a deprecated or retired tool, an alias, an
    outdated input), by host and tenant, with first and last seen: each tool's admin page shows
    the same rows."""
    return list(still_calling(filters.query()))
