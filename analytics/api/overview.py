"""The overview endpoint: the overview page's figures against the previous window, every host and
tool ranked by its change against its own baseline (analytics/overview/ranking.py, `rank`), and
the freshness of the data, per family of events (the heartbeat). Fields are only ever added."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from analytics.api.base import Filters
from analytics.overview import DEFAULT_PRESET, PRESETS, Ranked, Window, overview

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
    note: str = Field("", description="What the value covers when not exactly the window (e.g. whole UTC days).")
    cannot_see: str = Field("", description="What the figure cannot see.")


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
    small_sample: bool = Field(description="No rate from ANALYTICS_MIN_EVENTS events: ranked after every other.")
    server_errors: int = Field(0, description="Calls that ended with a server or upstream error.")
    caller_errors: int = Field(0, description="Calls that ended with a caller error (the caller's to fix).")
    server_error_rate: float | None = None
    caller_error_rate: float | None = None
    signal: str | None = Field(
        None,
        description="The rate it is ranked by (`server_errors`, `caller_errors`, `widget_failures`): the one "
        "that rose most over its baseline; null: no rate from enough events.",
    )
    rate: float | None = Field(None, description="That rate in the window.")
    baseline_rate: float | None = Field(None, description="That rate over the baseline period.")
    own_baseline: bool | None = Field(
        None, description="The baseline is its own (else every host's: too few of its events then)."
    )
    change: float | None = Field(None, description="`rate - baseline_rate`, the ranking key (a fraction).")
    since: datetime | None = Field(
        None, description="Start of the trailing run of buckets with the rate 5 points or more above its baseline."
    )
    never_reported: int | None = Field(
        None, description="Widget deliveries no report joined, over the whole UTC days the window touches (hosts)."
    )
    unreported_rate: float | None = None


class Heartbeat(Schema):
    family: str = Field(description="`ToolCall` or `AppStatus`.")
    data_up_to: datetime | None = Field(description="Time of the family's newest event stored.")
    last_ingest: datetime | None = Field(description="When ingestion last stored a batch of it.")
    stale: bool = Field(description="Its newest event is older than ANALYTICS_INGEST_LAG_SECONDS.")


class Freshness(Schema):
    data_up_to: datetime | None = Field(description="Time of the newest event stored.")
    last_ingest: datetime | None = Field(description="When ingestion last stored a batch.")
    raw_events_kept_from: datetime | None = Field(description="Raw events before this were removed by the retention.")
    lagging: bool = Field(description="The newest event is older than ANALYTICS_INGEST_LAG_SECONDS.")
    families: list[Heartbeat] = Field(default_factory=list, description="The same per family of events.")


class OverviewReport(Schema):
    start: datetime
    end: datetime
    previous_start: datetime
    tenant: str
    backend: str
    figures: list[OverviewFigure]
    worst_hosts: list[RankedRow] = Field(
        description="Every host with calls or widget reports in the window, most changed against its baseline first."
    )
    worst_tools: list[RankedRow]
    freshness: Freshness
    baseline_start: datetime | None = Field(None, description="Start of the ranking's baseline period.")
    baseline_end: datetime | None = Field(None, description="Its end: the window's start.")
    ranking: str = Field("", description="The ranking rule, in words.")
    silent_hosts: list[str] = Field(
        default_factory=list, description="Hosts whose widget deliveries never got a report back (whole UTC days)."
    )


def _ranked(rows: tuple[Ranked, ...]) -> list[dict[str, object]]:
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
            "server_errors": r.now.server_errors,
            "caller_errors": r.now.caller_errors,
            "server_error_rate": r.now.server_error_rate,
            "caller_error_rate": r.now.caller_error_rate,
            "signal": r.change.signal if r.change else None,
            "rate": r.change.rate if r.change else None,
            "baseline_rate": r.change.baseline if r.change else None,
            "own_baseline": r.change.own_baseline if r.change else None,
            "change": r.change.delta if r.change else None,
            "since": r.since,
            "never_reported": r.funnel.never_reported if r.funnel else None,
            "unreported_rate": r.funnel.unreported_rate if r.funnel else None,
        }
        for r in rows
    ]


RANKING = (
    "Hosts and tools by the largest rise of a rate (server and upstream errors, caller errors, widget "
    "failures; each from at least ANALYTICS_MIN_EVENTS events) over the same host's rate in the baseline "
    "period (the 7 whole UTC days before the window's first day; for a window of 7 days or more, the window "
    "of the same length before it; every host's rate when it had too few events then), in percentage "
    "points; then by the rate. Without a rate from enough events: last."
)


@router.get("/overview", response=OverviewReport, url_name="overview")
def overview_report(request: HttpRequest, filters: Query[Filters]) -> dict[str, object]:
    """The overview page's figures: a window (`window`, `since`/`until`, or whole days) against the
    window of the same length before it; every host and tool ranked by its change against its own
    baseline (`ranking` says the rule); the hosts whose widgets never report; and the data's
    freshness, per family. Without a window or dates: the last 24 hours."""
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
                "note": f.note,
                "cannot_see": f.blind,
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
            "families": [
                {"family": b.family, "data_up_to": b.data_up_to, "last_ingest": b.last_ingest, "stale": b.stale}
                for b in fresh.families
            ],
        },
        "baseline_start": found.baseline.start,
        "baseline_end": found.baseline.end,
        "ranking": RANKING,
        "silent_hosts": [row.client for row in found.silent_hosts if row.client],
    }
