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
from datetime import datetime
from typing import Literal

from django.db.models import Sum

from analytics.ingest.rollups import FUNNEL_REPORTS, grace, size_bucket
from analytics.models import (
    FUNNEL_FIGURES,
    FUNNEL_OUTCOMES,
    UNJOINED,
    AppStatusEvent,
    IngestionMark,
    WidgetFunnelDaily,
)
from analytics.selectors import ReportQuery, _filtered, _host_of

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
    UNJOINED_LABEL: "unjoined reports",
}
FAILED_COLUMNS: tuple[str, ...] = tuple(name for name in FUNNEL_OUTCOMES if name.startswith("failed_"))
FIGURE_NAMES: tuple[str, ...] = (
    "delivered",
    "drawn",
    "failed",
    *FAILED_COLUMNS,
    "cancelled",
    "reported",
    "unjoined_reports",
    "pending",
    "never_reported",
    "unreported_rate",
    "failure_rate",
)
"""Every figure of a funnel row, in the order the API, the CSV and the dashboard give them."""


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
        key.append(value)
    return tuple(key)


def _sortable(value: object) -> tuple[int, str]:
    return (0, "") if value is None else (1, value.isoformat() if isinstance(value, datetime) else str(value))


def pending(query: ReportQuery) -> list[dict[str, object]]:
    """The deliveries in the query's range still within the grace window before the newest
    stored app-status event, that no report joined yet: each as its funnel dimensions."""
    mark = IngestionMark.objects.filter(family="AppStatus").values_list("data_up_to", flat=True).first()
    if mark is None:
        return []
    window = grace()
    since = max(mark - window, query.start_time)
    if since >= query.end_time:
        return []
    recent = _filtered(AppStatusEvent.objects.filter(kind="app_data", time__gt=since, time__lt=query.end_time), query)
    columns = ("request_id", "time", "client", "tool", "raw_bytes", "original_points")
    deliveries = list(recent.values(*columns))
    keys = [row["request_id"] for row in deliveries if row["request_id"]]
    reported: dict[str, list[datetime]] = {}
    if keys:
        reports = AppStatusEvent.objects.filter(
            kind__in=FUNNEL_REPORTS, time__gt=since - window, delivery_request_id__in=keys
        )
        for key, moment in reports.values_list("delivery_request_id", "time"):
            reported.setdefault(key, []).append(moment)
    return [
        {
            "day": row["time"].replace(hour=0, minute=0, second=0, microsecond=0),
            "client": row["client"],
            "tool": row["tool"],
            "size": size_bucket(row["raw_bytes"]),
            "simplified": "no" if row["original_points"] is None else "yes",
        }
        for row in deliveries
        if not any(abs(moment - row["time"]) <= window for moment in reported.get(row["request_id"], ()))
    ]
