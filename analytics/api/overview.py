"""The overview endpoint: the overview page's figures against the previous window, the worst hosts
and tools, and the freshness of the data."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from analytics.api.base import Filters
from analytics.overview import DEFAULT_PRESET, PRESETS, Window, overview

router = Router()


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


@router.get("/overview", response=OverviewReport, url_name="overview")
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
