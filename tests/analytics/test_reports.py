"""Reports: exact figures for a small known data set, empty ranges, a host with only failures."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from analytics.charts import failure_rate_chart
from analytics.selectors import (
    FailureRow,
    OldCaller,
    ReportQuery,
    failing_events,
    failure_counts,
    hosts_and_tools,
    old_callers,
)
from tests.analytics.conftest import D1, D2

pytestmark = pytest.mark.django_db

BOTH_DAYS = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3))
STATS = (
    "widgets_drawn",
    "widgets_failed",
    "too_large",
    "host_dropped",
    "decode_failed",
    "fetch_failed",
    "unknown_events",
    "failure_rate",
)


def day(text: str, hour: int = 0) -> datetime:
    return datetime.fromisoformat(text).replace(hour=hour, tzinfo=UTC)


def table(rows: list[FailureRow]) -> list[tuple]:
    """Report rows as (bucket, client, tool, *stats) tuples."""
    return [(r["bucket"], r["client"], r["tool"], *(r[s] for s in STATS)) for r in (row.as_dict() for row in rows)]


def test_totals_by_host_and_tool(known_data):
    assert table(failure_counts(BOTH_DAYS, by=("client", "tool"))) == [
        # bucket, host, tool, drawn, failed, too large, dropped, decode, fetch, unknown, rate
        (None, "ChatGPT", "tomtom-data-viz", 1, 2, 0, 0, 1, 1, 0, 2 / 3),
        (None, "claude-ai", "tomtom-geocode", 1, 0, 0, 0, 0, 0, 0, 0.0),
        (None, "claude-ai", "tomtom-routing", 3, 1, 0, 0, 0, 0, 1, 0.25),
        (None, "cursor-vscode", "tomtom-routing", 0, 3, 0, 2, 0, 0, 0, 1.0),  # only failures
        (None, "goose", "tomtom-routing", 0, 0, 1, 0, 0, 0, 0, None),  # no widget reported
    ]


def test_daily_series_by_host(known_data):
    assert table(failure_counts(BOTH_DAYS, by=("bucket", "client"))) == [
        (day(D1), "ChatGPT", None, 1, 2, 0, 0, 1, 1, 0, 2 / 3),
        (day(D1), "claude-ai", None, 3, 1, 0, 0, 0, 0, 1, 0.25),
        (day(D1), "cursor-vscode", None, 0, 2, 0, 2, 0, 0, 0, 1.0),
        (day(D1), "goose", None, 0, 0, 1, 0, 0, 0, 0, None),
        (day(D2), "claude-ai", None, 1, 0, 0, 0, 0, 0, 0, 0.0),
        (day(D2), "cursor-vscode", None, 0, 1, 0, 0, 0, 0, 0, 1.0),
    ]


def test_hourly_series_for_one_host(known_data):
    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 2), bucket="hour", client="claude-ai")

    assert table(failure_counts(query, by=("bucket", "client", "tool"))) == [
        (day(D1, 10), "claude-ai", "tomtom-geocode", 1, 0, 0, 0, 0, 0, 0, 0.0),
        (day(D1, 10), "claude-ai", "tomtom-routing", 2, 0, 0, 0, 0, 0, 1, 0.0),
        (day(D1, 11), "claude-ai", "tomtom-routing", 0, 1, 0, 0, 0, 0, 0, 1.0),
    ]


def test_one_tool(known_data):
    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), tool="tomtom-data-viz")

    assert table(failure_counts(query, by=("client",))) == [
        (None, "ChatGPT", None, 1, 2, 0, 0, 1, 1, 0, 2 / 3),
    ]


def test_a_range_without_events_is_empty(known_data):
    december = ReportQuery(start=date(2026, 12, 1), end=date(2026, 12, 31))

    assert failure_counts(december, by=("bucket", "client", "tool")) == []
    assert old_callers(december) == []
    assert list(failing_events(december)) == []
    assert failure_rate_chart(december.buckets(), [], "day").lines == ()


def test_who_still_calls_retired_names_or_outdated_inputs(known_data):
    assert old_callers(BOTH_DAYS) == [
        OldCaller(
            "outdated_call",
            "ChatGPT",
            "",
            "tomtom-traffic",
            "",
            "language",
            "string_now_list",
            1,
            day(D2).replace(hour=9, minute=45),
            day(D2).replace(hour=9, minute=45),
        ),
        OldCaller(
            "retired_tool",
            "goose",
            "",
            "tomtom-fuzzy-search",
            "tomtom-geocode",
            "",
            "",
            2,
            day(D1).replace(hour=12, minute=30),
            day(D2).replace(hour=9, minute=30),
        ),
    ]


def test_drill_down_lists_a_hosts_failing_events_newest_first(known_data):
    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), client="cursor-vscode")

    assert [(e.time.isoformat(), e.kind, e.stage) for e in failing_events(query)] == [
        ("2026-11-03T09:00:00+00:00", "failed", "result"),
        ("2026-11-02T10:40:01+00:00", "failed", "result"),
        ("2026-11-02T10:40:00+00:00", "host_dropped", ""),
        ("2026-11-02T10:20:01+00:00", "failed", "result"),
        ("2026-11-02T10:20:00+00:00", "host_dropped", ""),
    ]


def test_filter_suggestions_are_every_host_and_tool_in_the_range(known_data):
    assert hosts_and_tools(BOTH_DAYS) == (
        ["ChatGPT", "claude-ai", "cursor-vscode", "goose"],
        ["tomtom-data-viz", "tomtom-fuzzy-search", "tomtom-geocode", "tomtom-routing", "tomtom-traffic"],
    )


def test_the_chart_draws_one_line_per_host_with_a_rate(known_data):
    chart = failure_rate_chart(BOTH_DAYS.buckets(), failure_counts(BOTH_DAYS, by=("bucket", "client")), "day")

    # x: 48 (first day) and 860 (last); y: 12 at 100 %, 260 at 0 %. ChatGPT has no second-day point.
    assert [(line.host, line.path) for line in chart.lines] == [
        ("ChatGPT", "M48.0,94.7"),
        ("claude-ai", "M48.0,198.0 L860.0,260.0"),
        ("cursor-vscode", "M48.0,12.0 L860.0,12.0"),
    ]
    assert [tick.label for tick in chart.x_ticks] == ["2026-11-02", "2026-11-03"]
    assert chart.lines[1].points[1].title == "claude-ai, 2026-11-03: 0.0% (0 of 1 widgets failed; n = 1)"
    assert [point.hollow for point in chart.lines[1].points] == [False, False]  # min_events 1: none


def test_points_from_few_events_are_hollow_and_zoom_keeps_low_rates_apart(known_data):
    rows = failure_counts(BOTH_DAYS, by=("bucket", "client"))

    chart = failure_rate_chart(BOTH_DAYS.buckets(), rows, "day", min_events=4)
    zoomed = failure_rate_chart(BOTH_DAYS.buckets(), [r for r in rows if r.client == "claude-ai"], "day", zoom=True)

    assert {line.host: [p.hollow for p in line.points] for line in chart.lines} == {
        "ChatGPT": [True],
        "claude-ai": [False, True],
        "cursor-vscode": [True, True],
    }
    # claude-ai's highest rate is 25 %: the axis ends there, so 25 % is the top (y 12) and 0 % the bottom
    assert [tick.label for tick in zoomed.y_ticks] == ["0%", "6%", "12%", "19%", "25%"]
    assert zoomed.lines[0].path == "M48.0,12.0 L860.0,260.0"


def test_an_impossible_query_is_refused():
    with pytest.raises(ValueError, match="after the end"):
        ReportQuery(start=date(2026, 11, 3), end=date(2026, 11, 2))
    with pytest.raises(ValueError, match="at most 400 days"):
        ReportQuery(start=date(2025, 1, 1), end=date(2026, 11, 2))


def test_totals_by_host_family(known_data):
    query = ReportQuery(start=date(2026, 11, 2), end=date(2026, 11, 3), group="family")

    assert table(failure_counts(query, by=("client",))) == [
        (None, "ChatGPT", None, 1, 2, 0, 0, 1, 1, 0, 2 / 3),
        (None, "Claude (desktop, web)", None, 4, 1, 0, 0, 0, 0, 1, 0.2),
        (None, "Cursor", None, 0, 3, 0, 2, 0, 0, 0, 1.0),
        (None, "Goose", None, 0, 0, 1, 0, 0, 0, 0, None),
    ]
    assert [(c.client, c.kind, c.calls) for c in old_callers(query)] == [
        ("ChatGPT", "outdated_call", 1),
        ("Goose", "retired_tool", 2),
    ]
