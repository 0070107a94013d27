"""Drill-down: the calls and events behind a figure, read from the raw events (the rollups cannot
say which call failed), each read bounded by the report's time range; and what the retention
removed from that range, so a short list is not mistaken for a complete one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, F, Max, Min, Q, QuerySet, Sum

from analytics.models import FAILING_KINDS, AppStatusEvent, AppStatusHourlyCount, ToolCallEvent, ToolCallHourly
from analytics.selectors.query import ReportQuery
from analytics.selectors.scope import _filtered


def failing_events(query: ReportQuery, *, kinds: Iterable[str] = FAILING_KINDS) -> QuerySet[AppStatusEvent]:
    """Events that mean a widget did not draw as it should, newest first."""
    events = AppStatusEvent.objects.filter(kind__in=list(kinds), time__gte=query.start_time, time__lt=query.end_time)
    return _filtered(events, query).order_by("-time", "-id")


MAX_GROUPS = 50
"""The most message groups a drill-down lists (the largest first); the rest are counted."""


@dataclass(frozen=True, slots=True)
class MessageGroup:
    """Failing calls (or widget events) with one code and message: how many, first and last seen."""

    code: str
    message: str
    count: int
    first: datetime
    last: datetime
    detail: str = ""
    """For widget events: the stage (or source) the failure happened at."""


def failing_calls(query: ReportQuery, *, code: str = "", message: str | None = None) -> QuerySet[ToolCallEvent]:
    """The calls in the range that did not end `ok` (or ended with `code`), newest first; with
    `message`, only those with that error message. Reads the index of failing calls."""
    calls = ToolCallEvent.objects.filter(time__gte=query.start_time, time__lt=query.end_time).exclude(outcome="ok")
    if code:
        calls = calls.filter(outcome=code)
    if message is not None:
        calls = calls.filter(error=message)
    return _filtered(calls, query).order_by("-time", "-event_id")


def failing_call_groups(query: ReportQuery, *, code: str = "") -> tuple[list[MessageGroup], int]:
    """The failing calls grouped by code and message, the largest groups first (at most
    MAX_GROUPS), and how many groups there are."""
    grouped = (
        failing_calls(query, code=code)
        .order_by()
        .values("outcome", "error")
        .annotate(count=Count("*"), first=Min("time"), last=Max("time"))
    )
    groups = [MessageGroup(row["outcome"], row["error"], row["count"], row["first"], row["last"]) for row in grouped]
    groups.sort(key=lambda g: (-g.count, g.code, g.message))
    return groups[:MAX_GROUPS], len(groups)


def failing_event_groups(query: ReportQuery, *, kinds: Iterable[str] = FAILING_KINDS) -> tuple[list[MessageGroup], int]:
    """The failing widget events grouped by kind, stage and error, the largest groups first."""
    grouped = (
        failing_events(query, kinds=kinds)
        .order_by()
        .values("kind", "stage", "error_code", "error")
        .annotate(count=Count("*"), first=Min("time"), last=Max("time"))
    )
    groups = [
        MessageGroup(
            row["kind"],
            " ".join(filter(None, (row["error_code"], row["error"]))),
            row["count"],
            row["first"],
            row["last"],
            detail=row["stage"],
        )
        for row in grouped
    ]
    groups.sort(key=lambda g: (-g.count, g.code, g.message))
    return groups[:MAX_GROUPS], len(groups)


def call_details(request_ids: Iterable[str], start: datetime, end: datetime) -> dict[str, tuple[str, str]]:
    """The tenant and backend of the calls with these request ids logged from `start` to `end`
    (a widget event names the call that reported it: its tenant and backend are that call's)."""
    ids = [request_id for request_id in set(request_ids) if request_id]
    if not ids:
        return {}
    rows = ToolCallEvent.objects.filter(request_id__in=ids, time__gte=start, time__lt=end)
    return {
        request_id: (tenant, backend)
        for request_id, tenant, backend in rows.values_list("request_id", "tenant", "backend").order_by()
    }


REQUEST_WINDOW = timedelta(days=1)
"""How far around a given time a request id is looked for: raw events have no index by request id
(it would slow every insert), so the look-up reads the time index of a bounded range."""


@dataclass(frozen=True, slots=True)
class RequestEvent:
    """One event of a call, tool call or app status, in time order."""

    time: datetime
    message: str
    kind: str
    tool: str
    client: str
    fields: dict[str, object]


def request_events(request_id: str, start: datetime, end: datetime, *, limit: int = 200) -> list[RequestEvent]:
    """Every stored event with `request_id` from `start` to `end`: its tool call and the app-status
    events logged for it (app data, widget reports), and the widget reports that name it as the
    call that delivered their data (`delivery_request_id`: each report is its own call, whose
    request id its fields give as `report_request_id`), oldest first."""
    from core.app_status import BY_KIND

    found: list[RequestEvent] = []
    calls = ToolCallEvent.objects.filter(request_id=request_id, time__gte=start, time__lt=end).order_by("time")
    for call in calls[:limit]:
        fields = {name: getattr(call, name, None) for name in CALL_DETAIL_FIELDS}
        found.append(
            RequestEvent(
                call.time,
                "Tool call",
                call.outcome,
                call.tool,
                call.client,
                {k: v for k, v in fields.items() if v not in (None, "")},
            )
        )
    own_or_named = Q(request_id=request_id) | Q(delivery_request_id=request_id)
    events = AppStatusEvent.objects.filter(own_or_named, time__gte=start, time__lt=end).order_by("time")
    for event in events[:limit]:
        kind = BY_KIND.get(event.kind)
        names = [n for n in (kind.__struct_fields__ if kind else ()) if n not in ("tool", "client", "request_id")]
        fields = {name: getattr(event, name, None) for name in names if hasattr(event, name)}
        if event.request_id != request_id:  # a widget's report of the data this call delivered
            fields["report_request_id"] = event.request_id
        fields["replica"] = getattr(event, "replica", "")
        message = kind.MESSAGE if kind else "Unknown app-status message"
        found.append(
            RequestEvent(
                event.time,
                message,
                event.kind,
                event.tool,
                event.client,
                {k: v for k, v in fields.items() if v not in (None, "")},
            )
        )
    return sorted(found, key=lambda e: e.time)


CALL_DETAIL_FIELDS = (
    "outcome",
    "error",
    "tenant",
    "backend",
    "transport",
    "user_agent",
    "upstream_calls",
    "upstream_rate_limited",
    "upstream_ms",
    "total_ms",
    "bytes",
    "replica",
)


@dataclass(frozen=True, slots=True)
class RetentionGap:
    """Raw events before `kept_from` were dropped by the retention; `counted` of them (from the
    rollups, which stay) fall in the range and cannot be listed."""

    kept_from: datetime
    counted: int


def retention_gap(query: ReportQuery, family: str) -> RetentionGap | None:
    """What the retention removed from the range's drill-down: None when nothing was."""
    from analytics.models import IngestionMark

    mark = IngestionMark.objects.filter(family=family).first()
    if mark is None or mark.kept_from is None or query.start_time >= mark.kept_from:
        return None
    cut = min(mark.kept_from, query.end_time)
    if family == "ToolCall":
        counted = _filtered(ToolCallHourly.objects.filter(hour__gte=query.start_time, hour__lt=cut), query).aggregate(
            n=Sum(F("calls") - F("outcome_ok"), default=0)
        )["n"]
    else:
        counted = _filtered(
            AppStatusHourlyCount.objects.filter(hour__gte=query.start_time, hour__lt=cut, kind__in=FAILING_KINDS),
            query,
        ).aggregate(n=Sum("count", default=0))["n"]
    return RetentionGap(mark.kept_from, int(counted or 0))
