"""Tool-call lines: ingested beside app-status events, once each, and reported as whole tables."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.db.models import Count, Q, Sum
from django.db.models.functions import Coalesce, TruncDay, TruncHour

from analytics.models import (
    KNOWN_OUTCOMES,
    LATENCY_BOUNDS_MS,
    OUTCOME_COLUMNS,
    ToolCallDaily,
    ToolCallEvent,
    ToolCallHourly,
)
from analytics.selectors import ReportQuery
from analytics.tool_stats import histogram_quantile, tool_call_stats
from tests.analytics.conftest import D1, D2, KNOWN_CALLS, call_line, ingest

pytestmark = pytest.mark.django_db

BOTH_DAYS = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3))
BY_FAMILY = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), group="family")
STATS = (
    "calls",
    "errors",
    "error_rate",
    "invalid_arguments",
    "unavailable",
    "retry_later",
    "other_errors",
    "p50_total_ms",
    "p95_total_ms",
    "p50_upstream_ms",
    "p95_upstream_ms",
    "upstream_calls",
    "bytes",
    "bytes_per_call",
)


def table(rows, *dimensions: str) -> list[tuple]:
    return [(*(r[d] for d in dimensions), *(r[s] for s in STATS)) for r in (row.as_dict() for row in rows)]


def hourly_matches_events() -> bool:
    counted = {
        (r.hour, r.client, r.tool, r.backend): (r.calls, r.outcome_ok, r.bytes) for r in ToolCallHourly.objects.all()
    }
    raw: dict[tuple, tuple[int, int, int]] = {}
    for e in ToolCallEvent.objects.all():
        key = (e.time.replace(minute=0, second=0, microsecond=0), e.client, e.tool, e.backend)
        calls, ok, size = raw.get(key, (0, 0, 0))
        raw[key] = (calls + 1, ok + (e.outcome == "ok"), size + e.bytes)
    return counted == raw


def test_a_tool_call_line_is_stored_with_every_field_once():
    first = ingest(*KNOWN_CALLS)
    again = ingest(*KNOWN_CALLS, batch_size=3)

    assert (first.tool_calls, first.tool_calls_new, first.events) == (8, 8, 0)
    assert (again.tool_calls, again.tool_calls_new) == (8, 0)
    event = ToolCallEvent.objects.get(outcome="unavailable")
    assert (event.time, event.tool, event.client, event.backend, event.transport) == (
        datetime(2026, 11, 2, 11, tzinfo=UTC),
        "tomtom-routing",
        "claude-ai",
        "tomtom-maps",
        "http",
    )
    assert (event.upstream_calls, event.upstream_ms, event.total_ms, event.bytes) == (1, 1450.0, 1500.0, 300)
    assert (event.user_agent, event.request_id) == ("claude-ai/1.0", "req-1")
    assert event.raw == ""  # the columns hold the whole line
    assert event.replica and event.pid
    assert ToolCallEvent.objects.count() == 8
    assert hourly_matches_events()


def test_a_newer_format_keeps_the_fields_it_knows_and_counts_the_rest():
    newer = call_line(f"{D1}T10:00:00", cache="hit", total_ms="fast", tenant="acme")
    no_outcome = call_line(f"{D1}T10:00:01").replace('"outcome":"ok",', "")

    report = ingest(newer, no_outcome)

    assert (report.tool_calls, report.tool_calls_new, report.unknown_fields) == (1, 1, 1)
    assert report.malformed_lines == [(2, "tool-call line without a text 'outcome'")]
    event = ToolCallEvent.objects.get()
    assert (event.total_ms, event.upstream_ms, event.tenant) == (None, 80.0, "acme")
    assert event.raw == newer  # the line keeps what the columns could not


NOT_HELD = {  # fields of a tool-call line its columns cannot hold
    "unknown field": {"cache": "hit"},
    "wrong type": {"bytes": "big"},
    "negative time": {"total_ms": -1},
    "out of range": {"pid": 2**70},
    "empty text": {"backend": ""},
    "exception": {"exception": "Traceback ..."},
    "NUL": {"tenant": "a\u0000b"},
}


@pytest.mark.parametrize("fields", NOT_HELD.values(), ids=NOT_HELD.keys())
def test_a_line_is_stored_whole_when_its_columns_cannot_hold_it(fields):
    held, not_held = call_line(f"{D1}T10:00:00"), call_line(f"{D1}T10:00:01", **fields)

    ingest(held, not_held)

    assert sorted(ToolCallEvent.objects.values_list("raw", flat=True)) == ["", not_held]


def test_totals_by_host_family_and_tool(known_calls):
    assert table(tool_call_stats(BY_FAMILY, by=("client", "tool")), "client", "tool") == [
        # calls, errors, rate, invalid, unavailable, retry, other, p50, p95, up p50, up p95, upstream, bytes, per call
        ("ChatGPT", "tomtom-geocode", 2, 1, 0.5, 0, 0, 1, 0, 75.0, 97.5, 50.0, 95.0, 2, 2_250, 1_125),
        (
            "Claude (desktop, web)",
            "tomtom-routing",
            4,
            2,
            0.5,
            1,
            1,
            0,
            0,
            100.0,
            1800.0,
            350.0,
            1850.0,
            4,
            6_500,
            1_625,
        ),
        ("Claude Code", "tomtom-geocode", 1, 0, 0.0, 0, 0, 0, 0, 35.0, 48.5, 35.0, 48.5, 1, 1_000, 1_000),
        ("fleet-agent", "tomtom-routing", 1, 0, 0.0, 0, 0, 0, 0, 750.0, 975.0, 750.0, 975.0, 1, 2_000, 2_000),
    ]


def test_exact_client_names_and_backends(known_calls):
    assert [(r.client, r.stats()["calls"]) for r in tool_call_stats(BOTH_DAYS, by=("client",))] == [
        ("ChatGPT/1.2026.1", 1),
        ("ChatGPT/1.2026.2", 1),
        ("claude-ai", 4),
        ("claude-code", 1),
        ("fleet-agent", 1),
    ]
    assert table(tool_call_stats(BOTH_DAYS, by=("backend",)), "backend") == [
        ("tomtom-maps", 1, 1, 1.0, 0, 1, 0, 0, 1500.0, 1950.0, 1500.0, 1950.0, 1, 300, 300),
        ("tomtom-orbis-maps", 7, 2, 2 / 7, 1, 0, 1, 0, 75.0, 825.0, 75.0, 850.0, 7, 11_450, 1_636),
    ]


def test_daily_series_by_family_for_one_tool(known_calls):
    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), tool="tomtom-geocode", group="family")

    assert [
        (r.bucket, r.client, r.stats()["calls"], r.stats()["errors"])
        for r in tool_call_stats(query, by=("bucket", "client"))
    ] == [
        (datetime(2026, 11, 2, tzinfo=UTC), "ChatGPT", 1, 0),
        (datetime(2026, 11, 2, tzinfo=UTC), "Claude Code", 1, 0),
        (datetime(2026, 11, 3, tzinfo=UTC), "ChatGPT", 1, 1),
    ]


def test_a_chart_sums_only_the_counts_and_gets_the_same_calls_and_errors(known_calls):
    for query in (
        ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), group="family"),
        ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), bucket="hour"),
    ):
        full = tool_call_stats(query, by=("bucket", "client"))
        counts = tool_call_stats(query, by=("bucket", "client"), figures="counts")

        assert [(r.bucket, r.client, r.calls, r.errors) for r in counts] == [
            (r.bucket, r.client, r.calls, r.errors) for r in full
        ]
        assert sum(r.errors for r in counts) > 0
    with pytest.raises(ValueError, match="calls and outcomes only"):
        counts[0].stats()


def test_a_family_filter_covers_every_name_in_it(known_calls):
    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), family="ChatGPT")

    assert [(r.client, r.stats()["calls"]) for r in tool_call_stats(query, by=("client",))] == [
        ("ChatGPT/1.2026.1", 1),
        ("ChatGPT/1.2026.2", 1),
    ]


def test_percentiles_interpolate_inside_the_bucket():
    # bounds 1, 2, 5, 10, 20, 50, 100, ...: four values at most 100 ms, two of them at most 20
    cumulative = [0, 0, 0, 0, 2, 2, 4] + [4] * 8

    assert histogram_quantile(0.5, 4, cumulative) == 20.0
    assert histogram_quantile(0.75, 4, cumulative) == 75.0
    assert histogram_quantile(0.5, 0, [0] * 15) is None
    assert histogram_quantile(0.99, 1, [0] * 15) == 60_000.0  # beyond the last bound


def test_a_range_without_calls_is_empty(known_calls):
    assert tool_call_stats(ReportQuery(start=date(2026, 12, 1), end=date(2026, 12, 2)), by=("client",)) == []
    assert D2  # the known calls cover D1 and D2 only


def test_the_daily_rollup_is_the_sum_of_the_hourly_one(known_calls):
    hourly = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), bucket="hour")

    by_hour = tool_call_stats(hourly, by=("bucket", "client"))
    by_day = tool_call_stats(BOTH_DAYS, by=("client",))

    totals: dict[str, int] = {}
    for row in by_hour:
        totals[row.client] = totals.get(row.client, 0) + row.stats()["calls"]
    assert totals == {row.client: row.stats()["calls"] for row in by_day}
    assert [(r.bucket.hour, r.client, r.stats()["calls"]) for r in by_hour][:3] == [
        (10, "ChatGPT/1.2026.1", 1),
        (10, "claude-ai", 3),
        (10, "claude-code", 1),
    ]


def figures_from_events(
    model, moment: str, truncate, dimensions=("client", "tool", "backend", "tenant")
) -> dict[str, dict[tuple, dict[str, float]]]:
    """Every count and sum of a tool-call rollup: as stored, and counted from the raw events with
    the ORM (the oracle)."""
    timed_upstream = Q(upstream_calls__gt=0, upstream_ms__isnull=False)
    aggregates = {
        "calls": Count("time"),
        "upstream_calls": Coalesce(Sum("upstream_calls"), 0),
        "bytes": Coalesce(Sum("bytes"), 0),
        "total_timed": Count("total_ms"),
        "upstream_timed": Count("time", filter=timed_upstream),
        **{f"total_le_{ms}": Count("time", filter=Q(total_ms__lte=ms)) for ms in LATENCY_BOUNDS_MS},
        **{
            f"upstream_le_{ms}": Count("time", filter=timed_upstream & Q(upstream_ms__lte=ms))
            for ms in LATENCY_BOUNDS_MS
        },
    }
    aggregates.update({column: Count("time", filter=Q(outcome=name)) for name, column in OUTCOME_COLUMNS.items()})
    aggregates["outcome_other"] = Count("time", filter=~Q(outcome__in=KNOWN_OUTCOMES))
    grouped = (
        ToolCallEvent.objects.annotate(at=truncate("time", tzinfo=UTC))
        .values("at", *dimensions)
        .annotate(**{f"n_{name}": aggregate for name, aggregate in aggregates.items()})
    )
    expected = {
        (row["at"], *(row[name] for name in dimensions)): {name: row[f"n_{name}"] for name in aggregates}
        for row in grouped
    }
    stored = {
        (getattr(row, moment), *(getattr(row, name) for name in dimensions)): {
            name: getattr(row, name) for name in aggregates
        }
        for row in model.objects.all()
    }
    return {"expected": expected, "stored": stored}


def test_rollups_hold_exactly_the_figures_of_the_stored_events_across_batches_and_reruns():
    # Overlapping, out-of-order and repeated lines in small batches, with untimed calls and calls
    # slower than the last bound: every hourly and daily figure is still the events' own.
    slow = call_line(f"{D1}T10:59:59", total_ms=90_000, upstream_ms=89_000, outcome="unavailable")
    untimed = call_line(f"{D1}T10:15:00", upstream_calls=0, upstream_ms=5.0, total_ms=2.0)
    on_a_bound = call_line(f"{D2}T23:00:00", total_ms=50, upstream_ms=20, client="goose", tenant="acme")
    newer_code = call_line(f"{D2}T23:10:00", client="goose", tenant="acme", outcome="quota_exceeded")
    lines = [*KNOWN_CALLS, slow, untimed, on_a_bound, newer_code]
    ingest(*lines[:5], batch_size=2)
    ingest(*reversed(lines), batch_size=3)
    ingest(*lines, batch_size=4)

    assert ToolCallEvent.objects.count() == len(lines)
    hourly = figures_from_events(ToolCallHourly, "hour", TruncHour)
    daily = figures_from_events(ToolCallDaily, "day", TruncDay)
    assert hourly["stored"] == hourly["expected"]
    assert daily["stored"] == daily["expected"]
