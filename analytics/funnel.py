"""The widget funnel: from a delivery of app data to what the widget reported, per host and tool.

Read from the daily funnel rollup (`WidgetFunnelDaily`, added to at ingestion), so a 30-day
report reads 30 days of rows. The one raw read is bounded: the deliveries of the last grace
window (`ANALYTICS_WIDGET_GRACE_SECONDS`) before the newest stored event, which may still get
their report and so are `pending`, not `never reported`. docs/analytics.md ("Widget funnel")
defines every figure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Literal

import orjson
from django.db.models import DateTimeField, Exists, ExpressionWrapper, OuterRef, Q, Sum

from analytics.ingest.cancellations import implicit_joins
from analytics.ingest.rollups import FUNNEL_REPORTS, grace, size_bucket
from analytics.models import (
    ERROR_SIZE,
    FUNNEL_FIGURES,
    FUNNEL_OUTCOMES,
    OVER_CAP,
    UNJOINED,
    AppStatusEvent,
    IngestionMark,
    WidgetFunnelDaily,
    WidgetReportSession,
)
from analytics.selectors import ReportQuery
from analytics.selectors.scope import _filtered, _host_of

FunnelDimension = Literal["day", "client", "tool", "size", "simplified"]
FUNNEL_DIMENSIONS: tuple[str, ...] = ("day", "client", "tool", "size", "simplified")
UNJOINED_LABEL = "unjoined"
"""How the reports show the size (and `simplified`) of reports joined to no delivery."""
SIZE_LABELS = {
    "lt_10kb": "< 10 kB",
    "10kb_100kb": "10-100 kB",
    "100kb_1mb": "100 kB-1 MB",
    "ge_1mb": "≥ 1 MB",
    "unknown": "unknown",
    ERROR_SIZE: "error results",
    UNJOINED_LABEL: "unjoined reports",
}
OVER_CAP_LABEL = "(over a session cap)"
"""How the reports show the tool of the row counting a host's dropped reports (`OVER_CAP`)."""
FAILED_COLUMNS: tuple[str, ...] = tuple(name for name in FUNNEL_OUTCOMES if name.startswith("failed_"))
FIGURE_NAMES: tuple[str, ...] = (
    "delivered",
    "drawn",
    "failed",
    *FAILED_COLUMNS,
    "cancelled",
    "reported",
    "unjoined_reports",
    "mismatched",
    "dropped",
    "pending",
    "never_reported",
    "unreported_rate",
    "failure_rate",
)
"""Every figure of a funnel row, in the order the API, the CSV and the dashboard give them."""
GUARD_HELP = {
    "mismatched": "Reports naming a delivery of another client session: counted unjoined, on the reporter's row.",
    "dropped": "Reports over a session cap (ANALYTICS_SESSION_MAX_REPORTS, _TOOLS): counted nowhere else.",
}
"""What a table says of the figures of the reports not taken as sent (`FUNNEL_GUARDS`)."""


@dataclass(slots=True)
class FunnelRow:
    """The funnel of one group: its dimensions (those not grouped by are None) and the rollup's
    sums; `pending` the deliveries still within the grace window without a report."""

    day: datetime | None
    client: str | None
    tool: str | None
    size: str | None
    simplified: str | None
    sums: dict[str, int] = field(default_factory=lambda: dict.fromkeys(FUNNEL_FIGURES, 0))
    unjoined_reports: int = 0
    pending: int = 0

    @property
    def failed(self) -> int:
        return sum(self.sums[name] for name in FAILED_COLUMNS)

    @property
    def never_reported(self) -> int:
        """Deliveries past the grace window that no report joined."""
        return self.sums["delivered"] - self.sums["reported"] - self.pending

    @property
    def unreported_rate(self) -> float | None:
        """`never_reported / (delivered - pending)`: of the deliveries past the grace window."""
        settled = self.sums["delivered"] - self.pending
        return self.never_reported / settled if settled > 0 else None

    @property
    def failure_rate(self) -> float | None:
        """`failed / (drawn + failed)`, over every report (joined or not), as the failure table's."""
        shown = self.sums["drawn"] + self.failed
        return self.failed / shown if shown else None

    def figures(self) -> dict[str, int | float | None]:
        return {
            "delivered": self.sums["delivered"],
            "drawn": self.sums["drawn"],
            "failed": self.failed,
            **{name: self.sums[name] for name in FAILED_COLUMNS},
            "cancelled": self.sums["cancelled"],
            "reported": self.sums["reported"],
            "unjoined_reports": self.unjoined_reports,
            "mismatched": self.sums["mismatched"],
            "dropped": self.sums["dropped"],
            "pending": self.pending,
            "never_reported": self.never_reported,
            "unreported_rate": self.unreported_rate,
            "failure_rate": self.failure_rate,
        }

    def as_dict(self, by: Sequence[str]) -> dict[str, object]:
        """The grouped dimensions, then every figure by name (the API's and the CSV's row)."""
        return {**{name: getattr(self, name) for name in by}, **self.figures()}


def funnel(query: ReportQuery, *, by: Sequence[str] = ("client", "tool")) -> list[FunnelRow]:
    """The funnel per group of `by` (any of `FUNNEL_DIMENSIONS`; `client` is the host family
    with `group="family"`), sorted by the dimensions. A delivery counts on its own day, a report
    on its delivery's (or, unjoined, on its own)."""
    unknown = [name for name in by if name not in FUNNEL_DIMENSIONS]
    if unknown:
        raise ValueError(f"a funnel groups by {', '.join(FUNNEL_DIMENSIONS)}, not {', '.join(unknown)}")
    rows = _filtered(WidgetFunnelDaily.objects.filter(day__gte=query.start_time, day__lt=query.end_time), query)
    host = _host_of(query) if "client" in by else None
    merged: dict[tuple, FunnelRow] = {}

    def row_for(values: dict[str, object]) -> FunnelRow:
        key = _key(values, by, host)
        if (found := merged.get(key)) is None:
            found = merged[key] = FunnelRow(*key)
        return found

    sums = {name: Sum(name, default=0) for name in FUNNEL_FIGURES}
    for values in rows.values(*by, *(("size",) if "size" not in by else ())).annotate(**sums).order_by():
        joined = values.get("size") != UNJOINED
        target = row_for(values)
        for name in FUNNEL_FIGURES:
            target.sums[name] += int(values[name])
        if not joined:
            target.unjoined_reports += sum(int(values[name]) for name in FUNNEL_OUTCOMES)
    for delivery in pending(query):
        row_for(delivery).pending += 1
    return sorted(merged.values(), key=lambda row: tuple(_sortable(getattr(row, name)) for name in FUNNEL_DIMENSIONS))


def _key(values: dict[str, object], by: Sequence[str], host: Callable[[str], str] | None) -> tuple:
    key = []
    for name in FUNNEL_DIMENSIONS:
        value = values.get(name) if name in by else None
        if name == "client" and host is not None and isinstance(value, str):
            value = host(value)
        if name in ("size", "simplified") and value == UNJOINED:
            value = UNJOINED_LABEL
        if name == "tool" and value == OVER_CAP:
            value = OVER_CAP_LABEL
        key.append(value)
    return tuple(key)


def _sortable(value: object) -> tuple[int, str]:
    return (0, "") if value is None else (1, value.isoformat() if isinstance(value, datetime) else str(value))


@dataclass(frozen=True, slots=True)
class CappedSession:
    """A client session (or sessionless client name) that went over a cap on one UTC day."""

    day: datetime
    session: str
    client: str
    reports: int
    tools: int
    dropped: int


MAX_CAPPED_SESSIONS = 20
"""The most sessions over a cap a page lists (the most dropped first); the rest are counted."""


def whole_days(query: ReportQuery) -> ReportQuery:
    """The whole UTC days the query's range touches, for any host and tool it names (the funnel
    and the session counts are daily)."""
    return ReportQuery(start=query.start, end=query.end, client=query.client, family=query.family, group=query.group)


def guarded_reports(query: ReportQuery) -> list[FunnelRow]:
    """Per host (or family), over the whole UTC days of the query, the reports the funnel did not
    take as they came: `mismatched` and `dropped` (docs/analytics.md, "Widget funnel"); only the
    hosts with some."""
    return [row for row in funnel(whole_days(query), by=("client",)) if row.sums["mismatched"] or row.sums["dropped"]]


def capped_sessions(query: ReportQuery, *, limit: int = MAX_CAPPED_SESSIONS) -> tuple[list[CappedSession], int]:
    """The sessions that went over a session cap in the query's whole UTC days, the most dropped
    first (at most `limit`), and how many there are."""
    days = whole_days(query)
    rows = _filtered(
        WidgetReportSession.objects.filter(day__gte=days.start_time, day__lt=days.end_time, dropped__gt=0), days
    )
    count = rows.count()
    found = rows.order_by("-dropped", "day", "client", "session")[:limit]
    return [
        CappedSession(r.day, r.session, r.client, r.reports, len(orjson.loads(r.tools)), r.dropped) for r in found
    ], count


def pending(query: ReportQuery) -> list[dict[str, object]]:
    """The deliveries in the query's range still within the grace window before the newest
    stored app-status event, that no report of their own session joined yet (nor a cancellation
    naming no delivery: `_cancelled`): each as its funnel dimensions.

    The join is an anti-join in SQL (a report naming the delivery's request id, from its session
    and client, within the grace window either side), so only the deliveries nobody reported
    leave the database: at a busy hour, thousands are delivered within the window and nearly
    all are reported. Only their sessions are read for cancellations naming no delivery."""
    mark = IngestionMark.objects.filter(family="AppStatus").values_list("data_up_to", flat=True).first()
    if mark is None:
        return []
    window = grace()
    since = max(mark - window, query.start_time)
    if since >= query.end_time:
        return []
    moment = OuterRef("time")
    reported = (
        AppStatusEvent.objects.filter(kind__in=FUNNEL_REPORTS, time__gt=since - window)
        .exclude(delivery_request_id="")
        .filter(
            delivery_request_id=OuterRef("request_id"),
            session=OuterRef("session"),
            client=OuterRef("client"),
            time__gte=ExpressionWrapper(moment - window, output_field=DateTimeField()),
            time__lte=ExpressionWrapper(moment + window, output_field=DateTimeField()),
        )
    )
    recent = _filtered(AppStatusEvent.objects.filter(kind="app_data", time__gt=since, time__lt=query.end_time), query)
    columns = ("request_id", "time", "client", "tool", "session", "delivery", "raw_bytes", "original_points")
    unreported = list(recent.filter(~Exists(reported)).values_list(*columns))
    cancelled = _cancelled(since, window, {session for *_, session, _d, _b, _p in unreported if session})
    return [
        {
            "day": time.replace(hour=0, minute=0, second=0, microsecond=0),
            "client": client,
            "tool": tool,
            "size": size_bucket(raw_bytes, delivery),
            "simplified": "no" if points is None else "yes",
        }
        for request_id, time, client, tool, session, delivery, raw_bytes, points in unreported
        if (session, request_id, time) not in cancelled
    ]


def _cancelled(since: datetime, window: timedelta, sessions: set[str]) -> set[tuple[str, str, datetime]]:
    """The deliveries of `sessions` after `since` that a cancellation naming no delivery joined
    (analytics/ingest/cancellations.py), as (session, request id, time): read from one grace
    window before `since` (what those cancellations' pairs depend on)."""
    if not sessions:
        return set()
    fields = ("time", "event_id", "kind", "session", "client", "tool", "request_id", "delivery_request_id")
    mine = AppStatusEvent.objects.filter(session__in=sessions, time__gt=since - window)
    found = mine.filter(
        Q(kind="app_data")
        | Q(kind="cancelled", delivery_request_id="")
        | Q(kind="cancelled", delivery_request_id__isnull=True)
    ).values(*fields)
    delivered = mine.filter(kind="app_data").values("request_id")
    naming = AppStatusEvent.objects.filter(
        kind__in=FUNNEL_REPORTS, time__gt=since - 2 * window, delivery_request_id__in=delivered
    ).values(*fields)
    events = [SimpleNamespace(**row) for row in (*found, *naming)]
    return {
        (delivery.session, delivery.request_id, delivery.time)
        for _report, delivery in implicit_joins(events, window)
        if delivery.time > since
    }
